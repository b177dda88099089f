#include <moraine/net/datagram_pool.hpp>

#include <moraine/net/backend_pool.hpp>
#include <moraine/net/datagram_listener.hpp>
#include <moraine/net/shard.hpp>

#include <spdlog/spdlog.h>

#include <vector>

namespace moraine::net {

namespace {
/// Messages that may wait for a host name's lookup; later ones are lost (counted).
constexpr std::size_t waiting_max = 64;

std::string peer_key(const protocol::endpoint& ep) { return ep.host + ":" + std::to_string(ep.port); }
}  // namespace

bool datagram_mode(const protocol::proxy& p) noexcept {
    return p.mode == static_cast<std::uint8_t>(protocol::proxy_mode::datagram) ||
           p.mode == static_cast<std::uint8_t>(protocol::proxy_mode::batch_datagram);
}

struct datagram_pool::peer {
    explicit peer(asio::io_context& io) : socket(io), resolver(io) {}
    udp::socket socket;
    udp::resolver resolver;
    bool ready = false;                          // connected: sends go straight to the kernel
    std::vector<protocol::byte_buffer> waiting;  // until the lookup answers
};

datagram_pool::datagram_pool(shard& home) : home_(home) {}

datagram_pool::~datagram_pool() { close_all(); }

bool datagram_pool::send(const protocol::proxy& p, protocol::byte_view message, std::string& failure) {
    const protocol::endpoint* to = nullptr;
    for (const auto& e : p.endpoints)
        if (e.is_udp()) {
            to = &e;
            break;
        }
    if (!to) {
        failure = no_endpoint_text(p);
        return false;
    }
    if (message.size() > max_datagram_bytes) {
        failure = "::Ice::DatagramLimitException:\nmessage of " + std::to_string(message.size()) +
                  " bytes is larger than a datagram";
        return false;
    }
    auto& dest = peer_for(*to);
    if (dest.ready) {
        write(dest, message);
    } else if (dest.waiting.size() < waiting_max) {
        dest.waiting.emplace_back(message.begin(), message.end());
    } else {
        ++lost_;
    }
    return true;
}

datagram_pool::peer& datagram_pool::peer_for(const protocol::endpoint& ep) {
    auto key = peer_key(ep);
    if (auto it = peers_.find(key); it != peers_.end()) return *it->second;
    auto& p = *peers_.emplace(key, std::make_unique<peer>(home_.io())).first->second;
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(ep.host, ec);
    if (!ec) {
        resolved(key, {}, udp::endpoint(address, static_cast<unsigned short>(ep.port)));
        return p;
    }
    // A host name: looked up off the shard's thread (asio's resolver), the messages wait.
    p.resolver.async_resolve(ep.host, std::to_string(ep.port),
                             [this, key](const boost::system::error_code& e, const udp::resolver::results_type& r) {
                                 if (e == asio::error::operation_aborted) return;
                                 resolved(key, e ? e : r.empty() ? asio::error::host_not_found : e,
                                          r.empty() ? udp::endpoint{} : r.begin()->endpoint());
                             });
    return p;
}

void datagram_pool::resolved(const std::string& key, const boost::system::error_code& ec, const udp::endpoint& to) {
    auto it = peers_.find(key);
    if (it == peers_.end()) return;
    auto& p = *it->second;
    boost::system::error_code e = ec;
    if (!e) p.socket.open(to.protocol(), e);
    if (!e) p.socket.non_blocking(true, e);
    // connect() on udp only fixes the destination: no packet leaves.
    if (!e) p.socket.connect(to, e);
    if (e) {
        spdlog::warn("udp {}: {}; its datagrams are lost", key, e.message());
        lost_ += p.waiting.size();
        peers_.erase(it);  // the next datagram tries again
        return;
    }
    p.ready = true;
    for (const auto& m : p.waiting) write(p, m);
    p.waiting.clear();
    p.waiting.shrink_to_fit();
}

void datagram_pool::write(peer& p, protocol::byte_view message) {
    boost::system::error_code ec;
    p.socket.send(asio::buffer(message.data(), message.size()), 0, ec);
    // An earlier datagram's ICMP "port unreachable" is reported by the next send on a connected
    // socket, which itself did not go: try it once more (no receiver is no error for a datagram).
    if (ec == asio::error::connection_refused) p.socket.send(asio::buffer(message.data(), message.size()), 0, ec);
    if (ec)
        ++lost_;
    else
        ++sent_;
}

void datagram_pool::close_all() noexcept {
    for (auto& [key, p] : peers_) {
        boost::system::error_code ignored;
        p->resolver.cancel();
        p->socket.close(ignored);
    }
    peers_.clear();
}

}  // namespace moraine::net
