// session_client: the connection half (socket, framing, write queue, timers, incoming messages).
#include <moraine/client/session_client.hpp>

#include "reconnect_state.hpp"
#include "stream_layer.hpp"
#include "tls_stream.hpp"
#include "ws_client_stream.hpp"

#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/transport/ws_frame_reader.hpp>

#include <array>

namespace moraine::client {

namespace {
using clock = std::chrono::steady_clock;

// Messages per writev: amortises the syscall, well under IOV_MAX.
constexpr std::size_t max_messages_per_write = 64;
// Per-thread read buffer shared by every session on the thread: an idle session holds none.
constexpr std::size_t read_chunk_bytes = 64 * 1024;

std::array<std::byte, read_chunk_bytes>& scratch() {
    thread_local std::array<std::byte, read_chunk_bytes> buf;
    return buf;
}

error_info lost(std::string detail) { return make_error(errc::connection_lost, std::move(detail)); }
}  // namespace

std::shared_ptr<session_client> session_client::create(executor_type ex, session_options opts) {
    return std::shared_ptr<session_client>(new session_client(std::move(ex), std::move(opts)));
}

session_client::session_client(executor_type ex, session_options opts)
    : ex_(ex),
      opts_(std::move(opts)),
      socket_(ex),
      router_id_{"router", opts_.instance_name},
      wakeup_(ex, clock::time_point::max()),
      timer_(ex, clock::time_point::max()),
      event_(ex, clock::time_point::max()) {
    if (opts_.reconnect) reconnect_ = std::make_unique<reconnect_state>(ex_);
}

session_client::~session_client() = default;

void session_client::start_loops(std::shared_ptr<tls_stream> tls, std::shared_ptr<ws_client_stream> ws) {
    // The lambdas return coroutines and are not coroutines themselves: `self` lives in the frame.
    // The layers are owned by the two loops, which end once close() closes the socket; a tcp
    // session's loops hold two null pointers.
    auto on_done = [](std::exception_ptr) {};  // the loops catch nothing and throw nothing by design
    const std::uint32_t gen = conn_gen_;
    std::shared_ptr<stream_layer> layer = ws ? std::shared_ptr<stream_layer>(ws) : std::shared_ptr<stream_layer>(tls);
    asio::co_spawn(ex_, [self = shared_from_this(), tls = std::move(tls), ws = std::move(ws), gen] {
        return self->read_loop(tls, ws, gen);
    }, on_done);
    asio::co_spawn(ex_, [self = shared_from_this(), layer = std::move(layer), gen] {
        return self->write_loop(layer, gen);
    }, on_done);
}

void session_client::close(error_info why) {
    if (phase_ == phase::closed) return;
    if (why && failing_over_) {  // reach_any tries the next endpoint: only this connection ends
        closed_by_ = why;
        return drop_connection(why);
    }
    const bool was_open = phase_ == phase::open;
    const bool reconnect =
        why && reconnect_ && !reconnect_->stopped && (was_open || reconnect_->active);
    closed_by_ = why;
    drop_connection(why);
    if (reconnect) return lose_connection(why, was_open);
    phase_ = phase::closed;
    if (reconnect_) {
        reconnect_->active = false;
        reconnect_->backoff_timer.cancel();  // the reconnect loop wakes and ends
    }
    if (on_close_) asio::post(ex_, [fn = std::move(on_close_), why = std::move(why)] { fn(why); });
}

void session_client::drop_connection(const error_info& why) {
    ++conn_gen_;  // the loops, the timer's wait and set-up steps of this connection stop
    validated_ = false;
    close_after_flush_ = false;
    phase_deadline_ = clock::time_point::max();
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);  // the loops wake with operation_aborted and return
    wakeup_.cancel();
    timer_.cancel();
    event_.cancel();
    std::vector<protocol::byte_buffer>().swap(out_);
    out_bytes_ = 0;
    in_.reset();
    auto pending = std::move(pending_);
    pending_.clear();
    const error_info failed = why ? why : lost("session closed");
    for (auto& [id, p] : pending) complete(std::move(p.handler), call_result::failure(failed));
}

// -- writing ----------------------------------------------------------------------------------

error_info session_client::enqueue(protocol::byte_buffer msg) {
    if (phase_ == phase::closed) return lost("session closed");
    if (phase_ == phase::reconnecting) return not_open();  // no connection to send it on
    if (opts_.write_queue_limit && out_bytes_ + msg.size() > opts_.write_queue_limit)
        return make_error(errc::queue_full, std::to_string(out_bytes_) + " bytes queued");
    out_bytes_ += msg.size();
    out_.push_back(std::move(msg));
    last_write_ = clock::now();
    wakeup_.cancel();
    return {};
}

// One write loop for every transport: what differs (TLS records, WebSocket frames) is behind
// stream_layer, and a tcp session has no layer at all.

asio::awaitable<bool> session_client::await_output(std::uint32_t gen, const stream_layer* layer) {
    while (!gone(gen)) {
        if (!out_.empty() || (layer && layer->has_control())) co_return true;
        if (close_after_flush_) {  // no close_notify or close frame: the close connection message ends it
            close(error_info{});
            co_return false;
        }
        co_await wakeup_.async_wait(nothrow_awaitable);
    }
    co_return false;
}

asio::awaitable<void> session_client::write_loop(std::shared_ptr<stream_layer> layer, std::uint32_t gen) {
    std::vector<asio::const_buffer> batch;  // tcp: the messages themselves; else the layer's one buffer
    while (co_await await_output(gen, layer.get())) {
        // After the router's close frame only our close answer goes (RFC 6455 §5.5.1).
        const std::size_t n = layer && layer->peer_closed() ? 0 : std::min(out_.size(), max_messages_per_write);
        if (!layer) {
            gather(batch, n);
        } else if (layer->encode(std::span(out_).first(n))) {  // one buffer: small messages share records
            const protocol::byte_view wire = layer->wire();
            batch.assign(1, asio::buffer(wire.data(), wire.size()));
        } else {
            close(lost("TLS error: " + layer->error()));
            co_return;
        }
        auto [ec, written] = co_await asio::async_write(socket_, batch, nothrow_awaitable);
        if (gone(gen)) co_return;
        if (layer && layer->peer_closed()) {  // our close answer is out (or the router hung up first): done
            close(lost("the router closed the connection"));
            co_return;
        }
        if (!on_written(gen, ec, n)) co_return;
        if (layer) layer->written(out_.empty());
    }
}

void session_client::gather(std::vector<asio::const_buffer>& batch, std::size_t n) const {
    batch.clear();
    // out_ may grow during the write; its byte_buffers then move, but their bytes stay put.
    for (std::size_t i = 0; i < n; ++i) batch.emplace_back(asio::buffer(out_[i]));
}

bool session_client::on_written(std::uint32_t gen, const boost::system::error_code& ec, std::size_t n) {
    if (gone(gen)) return false;  // out_ belongs to a later connection, or to nobody
    if (ec) {
        close(lost(ec.message()));
        return false;
    }
    for (std::size_t i = 0; i < n; ++i) out_bytes_ -= out_[i].size();
    out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(n));
    if (out_.empty()) std::vector<protocol::byte_buffer>().swap(out_);  // an idle session keeps no buffer
    return true;
}

// -- reading ----------------------------------------------------------------------------------

template <class OnData>
asio::awaitable<void> session_client::read_each(std::uint32_t gen, OnData on_data) {
    boost::system::error_code ec;
    socket_.non_blocking(true, ec);
    while (!gone(gen)) {
        auto [wec] = co_await socket_.async_wait(tcp::socket::wait_read, nothrow_awaitable);
        if (gone(gen)) co_return;
        if (wec) {
            close(lost(wec.message()));
            co_return;
        }
        // No co_await between this read and the end of on_data: the thread's scratch (and, for
        // TLS, its plaintext buffer) is ours, as every session on this thread reads into it.
        auto& buf = scratch();
        const std::size_t n = socket_.read_some(asio::buffer(buf), ec);
        if (ec == asio::error::would_block || ec == asio::error::try_again) continue;
        if (ec) {
            close(read_error(ec));
            co_return;
        }
        if (!on_data(std::span<std::byte>(buf.data(), n))) co_return;
    }
}

asio::awaitable<void> session_client::read_loop(std::shared_ptr<tls_stream> tls,
                                                std::shared_ptr<ws_client_stream> ws, std::uint32_t gen) {
    // What came with the handshakes goes first: frames read with the upgrade's answer (ws, wss),
    // or the router's first messages read with TLS's last flight (ssl).
    if (ws && !ws->early.empty()) {
        auto early = std::move(ws->early);
        if (!on_ws_bytes(*ws, early)) co_return;
    } else if (tls && !tls->early.empty()) {
        auto early = std::move(tls->early);
        if (!on_bytes(early)) co_return;
    }
    co_await read_each(gen, [this, gen, tls = tls.get(), ws = ws.get()](std::span<std::byte> data) {
        return on_read(tls, ws, gen, data);
    });
}

bool session_client::on_read(tls_stream* tls, ws_client_stream* ws, std::uint32_t gen, std::span<std::byte> data) {
    // Over wss each read is decrypted first, and the frames come from the plaintext. The
    // WebSocket decoder unmasks nothing (the router's frames are unmasked) and keeps only a
    // partial header.
    if (tls) return on_tls_bytes(*tls, gen, data, ws);
    if (ws) return on_ws_bytes(*ws, data);
    return on_bytes(data);
}

bool session_client::on_tls_bytes(tls_stream& tls, std::uint32_t gen, std::span<std::byte> data, ws_client_stream* ws) {
    protocol::byte_buffer reply;  // a key update's answer: rare
    // The plaintext is Ice messages, or over wss the router's WebSocket frames.
    const auto step = tls.engine.read(data, reply, transport::thread_plain_buffer(),
                                      [this, ws](std::span<std::byte> plain) {
                                          return ws ? on_ws_bytes(*ws, plain) : on_bytes(plain);
                                      });
    if (gone(gen)) return false;
    switch (step.status) {
    case transport::tls_status::closed:
        close(lost("the router closed the connection"));
        return false;
    case transport::tls_status::failed:
        // TLS 1.3: the router checks our certificate after our handshake is done, so its
        // refusal (e.g. alert "certificate required") arrives as the first read.
        close(validated_ ? lost("TLS error: " + tls.engine.error())
                         : make_error(errc::tls_handshake_failed,
                                      "the router refused the connection: " + tls.engine.error()));
        return false;
    case transport::tls_status::ok:
        return false;  // dispatch stopped reading
    case transport::tls_status::want_read:
        break;
    }
    if (!reply.empty()) {  // the write loop sends it before anything sealed later (record order)
        tls.control.insert(tls.control.end(), reply.begin(), reply.end());
        wakeup_.cancel();
    }
    return true;
}

bool session_client::on_ws_bytes(ws_client_stream& ws, std::span<std::byte> data) {
    boost::system::error_code ec;
    const auto end = transport::read_ws_frames(
        ws.decoder, data, ec, [this](std::span<const std::byte> payload) { return on_bytes(payload); },
        [this, &ws](const transport::ws_control_frame& answer) {  // the write loop sends it
            ws.queue_control(answer);
            wakeup_.cancel();
            return true;
        });
    if (end == transport::ws_read_end::closed) ws.close_received = true;  // our answer goes, then the write loop closes
    if (end == transport::ws_read_end::error) close(make_error(errc::protocol_error, ec.message()));
    return end == transport::ws_read_end::need_more;
}

error_info session_client::read_error(const boost::system::error_code& ec) const {
    if (is_eof(ec)) return lost("the router closed the connection");
    return lost(ec.message());
}

bool session_client::on_bytes(protocol::byte_view data) {
    // A message may close the connection (and reset in_): stop then.
    const std::uint32_t gen = conn_gen_;
    boost::system::error_code ec;
    const bool more = in_.feed(data, limits(), ec, [this, gen](const protocol::frame_view& frame) {
        on_frame(frame);
        return !gone(gen);
    });
    if (ec) close(make_error(errc::protocol_error, ec.message()));
    return more;
}

void session_client::on_frame(const protocol::frame_view& frame) {
    if (frame.header.compression != protocol::compression_status::compressed) return on_message(frame);
    protocol::byte_buffer plain;
    boost::system::error_code ec;
    const auto inner = protocol::decompress_frame(frame, limits(), plain, ec);
    if (!inner) return close(make_error(errc::protocol_error, "bad compressed message"));
    on_message(*inner);
}

void session_client::on_message(const protocol::frame_view& frame) {
    using protocol::message_type;
    if (!validated_) {
        if (frame.header.type != message_type::validate_connection)
            return close(make_error(errc::protocol_error, "the router did not validate the connection"));
        validated_ = true;
        event_.cancel();
        return;
    }
    switch (frame.header.type) {
    case message_type::reply: return on_reply(frame.body());
    case message_type::request: return on_request(frame.body());
    case message_type::batch_request: return on_batch(frame.body());
    case message_type::validate_connection: return;  // a heartbeat
    case message_type::close_connection: return close(lost("the router closed the connection gracefully"));
    }
}

void session_client::on_reply(protocol::byte_view body) {
    auto r = protocol::decode_reply(body);
    if (!r) return close(make_error(errc::protocol_error, r.error().message()));
    const auto it = pending_.find(r->request_id);
    if (it == pending_.end()) return;  // timed out already: ignored, as Ice does
    auto h = std::move(it->second.handler);
    pending_.erase(it);
    complete(std::move(h), map_reply(*r));
}

void session_client::on_request(protocol::byte_view body) {
    auto r = protocol::decode_request(body);
    if (!r) return close(make_error(errc::protocol_error, r.error().message()));
    dispatch_incoming(incoming_request{r->id, r->facet, r->operation, r->mode, r->params, r->request_id == 0},
                      r->request_id);
}

void session_client::on_batch(protocol::byte_view body) {
    protocol::batch_reader batch(body);
    const std::uint32_t gen = conn_gen_;
    while (!batch.done() && !gone(gen)) {  // a reply we could not queue closes the connection
        auto r = batch.next();
        if (!r) break;
        dispatch_incoming(incoming_request{r->id, r->facet, r->operation, r->mode, r->params, true}, 0);
    }
    if (batch.error() && !gone(gen)) close(make_error(errc::protocol_error, batch.error().message()));
}

void session_client::dispatch_incoming(const incoming_request& r, std::int32_t request_id) {
    const std::uint32_t gen = conn_gen_;
    const dispatch_result result = servants_.dispatch(category_, r);
    if (request_id == 0 || gone(gen)) return;  // the servant may have closed the session
    protocol::byte_buffer msg;
    write_dispatch_reply(msg, request_id, r, result);
    if (auto err = enqueue(std::move(msg))) close(err);  // a reply we cannot send: the caller would hang
}

// -- calls and timers -------------------------------------------------------------------------

std::int32_t session_client::next_request_id() noexcept {
    // Ids start at 1 and wrap back to 1 (docs/ice-wire.md §4); skip any still pending.
    do {
        last_request_id_ = last_request_id_ == INT32_MAX ? 1 : last_request_id_ + 1;
    } while (pending_.contains(last_request_id_));
    return last_request_id_;
}

void session_client::add_pending(std::int32_t id, asio::any_completion_handler<void(call_result)> h) {
    const auto deadline = clock::now() + opts_.call_timeout;
    pending_.emplace(id, pending_call{std::move(h), deadline});
    if (deadline < timer_.expiry()) timer_.cancel();  // the timer loop re-arms at the earlier deadline
}

void session_client::complete(asio::any_completion_handler<void(call_result)> h, call_result r) {
    // Posted, never inline: the caller may be iterating our tables. `h` is always one of our own
    // coroutines (twoway), so its executor is ex_.
    asio::post(ex_, [h = std::move(h), r = std::move(r)]() mutable { std::move(h)(std::move(r)); });
}

void session_client::expire_calls(clock::time_point now) {
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second.deadline > now) {
            ++it;
            continue;
        }
        auto h = std::move(it->second.handler);
        it = pending_.erase(it);
        complete(std::move(h), call_result::failure(make_error(errc::timeout, "no reply within the call timeout")));
    }
}

clock::time_point session_client::next_wakeup() const {
    auto next = phase_deadline_;
    for (const auto& [id, p] : pending_) next = std::min(next, p.deadline);
    if (phase_ == phase::open && heartbeat_every_.count() > 0) next = std::min(next, last_write_ + heartbeat_every_);
    return next;
}

void session_client::on_tick(clock::time_point now) {
    if (now >= phase_deadline_)
        return close(make_error(errc::timeout, "connect, TLS handshake, validation or close took too long"));
    expire_calls(now);
    if (phase_ == phase::open && heartbeat_every_.count() > 0 && now >= last_write_ + heartbeat_every_) {
        const auto& hb = protocol::validate_connection_message;
        if (auto err = enqueue(protocol::byte_buffer(hb.begin(), hb.end()))) close(err);
    }
}

void session_client::arm_timer() {
    // A plain handler, not a coroutine: an idle session keeps one small wait op, no frame.
    // One wait per connection: drop_connection() ends it (generation), establish() arms the next.
    timer_.expires_at(next_wakeup());
    timer_.async_wait([self = shared_from_this(), gen = conn_gen_](boost::system::error_code) {
        if (self->gone(gen)) return;  // else expiry, or cancel() to re-arm earlier
        self->on_tick(clock::now());
        if (!self->gone(gen)) self->arm_timer();
    });
}

asio::awaitable<void> session_client::wait_event() {
    co_await event_.async_wait(nothrow_awaitable);  // only cancel() ends it: expiry is never
}

}  // namespace moraine::client
