#include <moraine/net/datagram_listener.hpp>

#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/net/budget_hold.hpp>
#include <moraine/net/listener.hpp>
#include <moraine/net/memory_budget.hpp>
#include <moraine/net/shard.hpp>

#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <vector>

namespace moraine::net {

namespace {

/// How often a receiver held by the memory budget looks again (as ice_connection does).
constexpr std::chrono::milliseconds budget_poll{1};

udp::endpoint local_of(asio::io_context& io, const protocol::endpoint& ep) {
    return {bind_address(io, ep), static_cast<unsigned short>(ep.port)};
}

/// Why a datagram is not one whole oneway Ice message; empty if it is.
std::string_view check_datagram(const protocol::frame_view* frame, std::size_t received,
                                const boost::system::error_code& ec) {
    if (!frame) return ec ? "not an Ice message" : "truncated";
    if (frame->size() != received) return "its size field does not match the datagram";
    return {};
}

class receiver : public std::enable_shared_from_this<receiver> {
public:
    receiver(shard& sh, udp::socket socket, datagram_handler on_request)
        : sh_(sh), socket_(std::move(socket)), on_request_(std::move(on_request)), buffer_(max_datagram_bytes + 1),
          pause_(sh.executor()) {}

    udp::socket& socket() noexcept { return socket_; }

    void receive() {
        if (held()) {
            pause_.expires_after(budget_poll);
            pause_.async_wait([self = shared_from_this()](const boost::system::error_code&) {
                if (self->socket_.is_open()) self->receive();
            });
            return;
        }
        // One byte more than the largest datagram: a larger one (impossible over IPv4) shows as
        // truncated rather than passing as whole.
        socket_.async_receive_from(asio::buffer(buffer_), sender_,
                                   [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                                       self->on_received(ec, n);
                                   });
    }

private:
    bool held() noexcept {
        const auto* budget = sh_.budget();
        if (!budget) return false;
        if (hold_.update(*budget)) ++sh_.metrics().reads_held;
        return hold_.held();
    }

    void on_received(const boost::system::error_code& ec, std::size_t n) {
        if (ec == asio::error::operation_aborted || !socket_.is_open()) return;
        if (!ec) dispatch(protocol::byte_view(buffer_.data(), n));
        // Other errors (ICMP port unreachable reported on the socket, ENOMEM): the next datagram may be fine.
        receive();
    }

    void dispatch(protocol::byte_view datagram) {
        boost::system::error_code ec;
        const protocol::limits lim{sh_.cfg().message_size_max};
        auto frame = protocol::parse_frame(datagram, lim, ec);
        if (auto why = check_datagram(frame ? &*frame : nullptr, datagram.size(), ec); !why.empty())
            return drop(why);
        if (frame->header.compression != protocol::compression_status::compressed) return requests_of(*frame);
        auto plain = protocol::decompress_message(*frame, lim);
        if (!plain) return drop("bad compressed message");
        auto inner = protocol::parse_frame(*plain, protocol::limits{0}, ec);
        if (!inner || inner->size() != plain->size()) return drop("bad compressed message");
        requests_of(*inner);
    }

    void requests_of(const protocol::frame_view& frame) {
        using protocol::message_type;
        if (frame.header.type == message_type::request) {
            auto r = protocol::decode_request(frame.body());
            if (!r) return drop("malformed request");
            // Over udp no reply can go back: Ice refuses twoway datagrams, so one is an error.
            if (r->request_id != 0) return drop("a twoway request");
            return on_request_(sh_, *r);
        }
        if (frame.header.type != message_type::batch_request) return drop("neither a request nor a batch request");
        protocol::batch_reader batch(frame.body());
        while (!batch.done()) {
            auto r = batch.next();
            if (!r) break;
            on_request_(sh_, *r);
        }
        if (batch.error()) drop("malformed batch request");
    }

    void drop(std::string_view why) {
        ++sh_.metrics().datagrams_dropped;
        spdlog::debug("datagram from {} dropped: {}", sender_.address().to_string(), why);
    }

    shard& sh_;
    udp::socket socket_;
    datagram_handler on_request_;
    std::vector<std::byte> buffer_;
    udp::endpoint sender_;
    asio::steady_timer pause_;
    budget_hold hold_;
};

}  // namespace

udp::socket bind_datagram(shard& sh, const protocol::endpoint& ep) {
    const auto local = local_of(sh.io(), ep);
    const bool multicast = local.address().is_multicast();
    udp::socket socket(sh.io());
    socket.open(local.protocol());
    socket.set_option(udp::socket::reuse_address(true));
    socket.set_option(reuse_port(true));
    socket.bind(local);
    if (multicast) socket.set_option(asio::ip::multicast::join_group(local.address()));
    socket.non_blocking(true);
    return socket;
}

void ensure_datagram_port_free(shard& sh, const protocol::endpoint& ep) {
    if (ep.port == 0) return;  // the kernel picks a free port
    const auto local = local_of(sh.io(), ep);
    if (local.address().is_multicast()) return;
    udp::socket probe(sh.io());  // no SO_REUSEADDR / SO_REUSEPORT: any other bind makes it fail
    probe.open(local.protocol());
    boost::system::error_code ec;
    probe.bind(local, ec);
    if (ec) throw boost::system::system_error(ec, "cannot listen on " + protocol::endpoint_to_string(ep));
}

udp::socket adopt_datagram(shard& sh, unique_fd fd) {
    const bool v4 = adopted_is_ipv4(fd, "a udp socket");
    udp::socket socket(sh.io());
    socket.assign(v4 ? udp::v4() : udp::v6(), fd.get());
    fd.release();  // the socket owns it now
    socket.non_blocking(true);
    return socket;
}

std::shared_ptr<udp::socket> start_receiving(shard& sh, udp::socket socket, datagram_handler on_request) {
    auto r = std::make_shared<receiver>(sh, std::move(socket), std::move(on_request));
    // The shard closes the socket to stop receiving (drain, stop); the pending receive then
    // ends with operation_aborted and releases the receiver.
    std::shared_ptr<udp::socket> shared(r, &r->socket());
    sh.add_datagram_socket(shared);
    r->receive();
    return shared;
}

}  // namespace moraine::net
