// router_connection: the read loop and the writes, the queue, the framing, the end.
#include "router_connection.hpp"

#include "connection_lost.hpp"

#include <moraine/protocol/header.hpp>
#include <moraine/transport/exact_size_handler.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <array>
#include <utility>

namespace moraine::client {

namespace {
// Messages per write: amortises the syscall, well under IOV_MAX.
constexpr std::size_t max_messages_per_write = 64;
}  // namespace

/// The connection as its layered_stream's sink (transport/layered_stream.hpp).
struct router_connection::stream_sink {
    router_connection& c;
    bool stream(std::span<const std::byte> ice) { return c.on_stream(ice); }
    bool send(protocol::byte_view wire) {
        c.queue_control(wire);
        return true;
    }
    bool upgraded() { return true; }  // the router's 101: its frames follow in the same feed
};

std::shared_ptr<router_connection> router_connection::create(const asio::any_io_executor& ex, limits lim,
                                                             std::shared_ptr<connection_events> events) {
    return std::make_shared<router_connection>(make_tag{}, ex, lim, std::move(events));
}

router_connection::router_connection(make_tag, const asio::any_io_executor& ex, limits lim,
                                     std::shared_ptr<connection_events> events)
    : socket_(ex),
      limits_(lim),
      events_(std::move(events)) {}

error_info router_connection::send(protocol::byte_buffer message) {
    if (closed_) return lost("session closed");
    if (limits_.write_queue_limit && out_bytes_ + message.size() > limits_.write_queue_limit)
        return make_error(errc::queue_full, std::to_string(out_bytes_) + " bytes queued");
    out_bytes_ += message.size();
    out_.push_back(std::move(message));
    wake_writer();
    return {};
}

void router_connection::close_after_flush() {
    close_after_flush_ = true;
    wake_writer();
}

void router_connection::close() {
    if (std::exchange(closed_, true)) return;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);  // the read loop, a write and the set-up steps end with operation_aborted
    std::vector<protocol::byte_buffer>().swap(out_);
    out_bytes_ = 0;
    in_.reset();
}

void router_connection::end(error_info why) {
    if (closed_) return;
    if (open_error_) {  // open() returns it: the owner is still waiting for the set-up
        *open_error_ = std::move(why);
        return close();
    }
    close();
    events_->on_end(why);
}

void router_connection::set_user_timeout(std::chrono::milliseconds t) {
    using user_timeout = asio::detail::socket_option::integer<IPPROTO_TCP, TCP_USER_TIMEOUT>;
    boost::system::error_code ignored;  // best effort: without it a dead router is found later
    socket_.set_option(user_timeout(static_cast<int>(t.count())), ignored);
}

void router_connection::start_loops() {
    arm_read();
    writing_ = false;  // the set-up wrote its own flights; from here on the write steps do
    wake_writer();     // what the set-up queued (control bytes read with the handshakes)
}

// -- writing ----------------------------------------------------------------------------------

void router_connection::wake_writer() {
    if (writing_ || closed_) return;
    writing_ = true;
    // Posted, not written now: what the caller queues next in this turn goes in the same write.
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->write_next(); });
}

void router_connection::write_next() {
    if (closed_) return;
    if (out_.empty() && !(layers_ && !layers_->control.empty())) {
        writing_ = false;  // idle: no handler, buffer or coroutine is kept until wake_writer()
        // No close_notify or close frame: the close connection message ends it.
        if (close_after_flush_) end(error_info{});
        return;
    }
    std::size_t n = std::min(out_.size(), max_messages_per_write);
    if (layers_) {
        const auto taken = encode(n);
        if (!taken) return;
        n = *taken;
    } else {
        gather(n);
    }
    auto on_done = [self = shared_from_this(), n](const boost::system::error_code& ec, std::size_t) {
        self->on_write_done(ec, n);
    };
    // tcp: the messages themselves, one writev; else the layers' one buffer.
    if (layers_) asio::async_write(socket_, asio::buffer(layers_->wire), std::move(on_done));
    else asio::async_write(socket_, std::span<const asio::const_buffer>(batch_), std::move(on_done));
}

void router_connection::on_write_done(const boost::system::error_code& ec, std::size_t n) {
    if (closed_) return;
    if (layers_ && layers_->peer_closed) {  // our close answer is out (or the router hung up first): done
        end(lost("the router closed the connection"));
        return;
    }
    if (on_written(ec, n)) write_next();
}

std::optional<std::size_t> router_connection::encode(std::size_t n) {
    auto& l = *layers_;
    l.wire.clear();
    l.wire.swap(l.control);  // control bytes first (TLS numbers records in the order they are made)
    if (l.peer_closed) n = 0;  // after the router's close frame only our answer goes (RFC 6455 §5.5.1)
    const auto r = l.codec.encode(
        n, [this](std::size_t i) { return transport::message_pieces{out_[i], {}}; }, l.wire);
    if (!r.ok) {
        end(lost("TLS error: " + l.engine->error()));
        return std::nullopt;
    }
    // Whole messages from the front: flush_max may have stopped the batch early.
    std::size_t taken = 0;
    for (std::size_t bytes = 0; bytes < r.bytes; ++taken) bytes += out_[taken].size();
    return taken;
}

void router_connection::gather(std::size_t n) {
    batch_.clear();
    batch_.reserve(n);
    // out_ may grow during the write; its byte_buffers then move, but their bytes stay put.
    for (std::size_t i = 0; i < n; ++i) batch_.emplace_back(asio::buffer(out_[i]));
}

bool router_connection::on_written(const boost::system::error_code& ec, std::size_t n) {
    if (ec) {
        end(lost(ec.message()));
        return false;
    }
    for (std::size_t i = 0; i < n; ++i) out_bytes_ -= out_[i].size();
    out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(n));
    if (!out_.empty()) {
        if (layers_) layers_->wire.clear();  // its capacity serves the next batch
        return true;
    }
    std::vector<protocol::byte_buffer>().swap(out_);  // an idle connection keeps no buffer
    std::vector<asio::const_buffer>().swap(batch_);
    if (layers_) protocol::byte_buffer().swap(layers_->wire);
    return true;
}

void router_connection::queue_control(protocol::byte_view wire) {
    layers_->control.insert(layers_->control.end(), wire.begin(), wire.end());
    wake_writer();
}

// -- reading ----------------------------------------------------------------------------------

std::span<std::byte> read_scratch() noexcept {
    thread_local std::array<std::byte, 64 * 1024> buf;
    return buf;
}

void router_connection::arm_read() {
    auto on_wait = [self = shared_from_this()](const boost::system::error_code& ec) { self->on_readable(ec); };
    socket_.async_wait(tcp::socket::wait_read, transport::exact_size(std::move(on_wait)));
}

void router_connection::on_readable(const boost::system::error_code& wait_error) {
    if (closed_) return;
    if (wait_error) return end(read_error(wait_error));
    bool more = true;  // false: the layers or the framing stopped reading
    const auto ec = read_ready([this, &more](std::span<std::byte> data) { more = on_wire(data); });
    if (closed_) return;
    if (ec && !wait_again(ec)) return end(read_error(ec));
    if (more) arm_read();
}

bool router_connection::on_wire(std::span<std::byte> data) {
    if (!layers_) return on_stream(data);
    stream_sink sink{*this};
    return after_feed(layers_->codec.feed(data, sink));
}

bool router_connection::on_early() {
    if (!layers_->codec.has_early()) return true;
    protocol::byte_buffer early = layers_->codec.take_early();  // decrypted already, framed still (ws)
    stream_sink sink{*this};
    return after_feed(layers_->codec.feed_plain(early, sink));
}

bool router_connection::after_feed(transport::layered_end end_of_feed) {
    using transport::layered_end;
    if (closed_) return false;
    const auto& l = *layers_;
    switch (end_of_feed) {
    case layered_end::need_more:
        return true;
    case layered_end::stopped:
        return false;
    case layered_end::ws_closed:  // the answer is queued: a write step sends it, then ends
        layers_->peer_closed = true;
        wake_writer();
        return false;
    case layered_end::tls_closed:
        end(lost("the router closed the connection"));
        return false;
    case layered_end::tls_failed:
        // TLS 1.3: the router checks our certificate after our handshake is done, so its
        // refusal (e.g. alert "certificate required") arrives as the first read.
        end(validated_ ? lost(l.codec.why()) : refused());
        return false;
    case layered_end::seal_failed:
        end(lost(l.codec.why()));
        return false;
    case layered_end::ws_failed:
        end(make_error(errc::protocol_error, l.codec.why()));
        return false;
    case layered_end::refused:
        end(error_info{l.codec.upgrade_error(), l.codec.why()});
        return false;
    }
    return false;
}

bool router_connection::on_stream(protocol::byte_view data) {
    boost::system::error_code ec;
    const bool more = in_.feed(data, {limits_.max_message_bytes}, ec, [this](const protocol::frame_view& frame) {
        on_frame(frame);
        return !closed_;  // a message may close the connection (and reset in_): stop then
    });
    if (ec && !closed_) end(make_error(errc::protocol_error, ec.message()));
    return more && !closed_;
}

void router_connection::on_frame(const protocol::frame_view& frame) {
    using protocol::message_type;
    if (!validated_) {
        if (frame.header.type != message_type::validate_connection)
            return end(make_error(errc::protocol_error, "the router did not validate the connection"));
        validated_ = true;
        return events_->on_validated();
    }
    if (frame.header.type == message_type::close_connection)
        return end(lost("the router closed the connection gracefully"));
    events_->on_message(frame);
}

error_info router_connection::read_error(const boost::system::error_code& ec) {
    if (ec == asio::error::eof) return lost("the router closed the connection");
    return lost(ec.message());
}

error_info router_connection::refused() const {
    return make_error(errc::tls_handshake_failed, "the router refused the connection: " + layers_->engine->error());
}

}  // namespace moraine::client
