// session_client's session: incoming messages, calls and their replies, deadlines and heartbeats,
// and the end of a connection.
#include "session_client_impl.hpp"

#include "connection_lost.hpp"
#include "reconnect_state.hpp"

#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/transport/exact_size_handler.hpp>

namespace moraine::client {

namespace {
using clock = std::chrono::steady_clock;
}  // namespace

session_client::impl::impl(session_client& owner, session_options opts)
    : owner_(owner),
      opts_(std::move(opts)),
      router_id_{"router", opts_.instance_name},
      timer_(ex(), clock::time_point::max()),
      event_(ex(), clock::time_point::max()) {
    if (opts_.reconnect) reconnect_ = std::make_unique<reconnect_state>(ex());
}

session_client::impl::~impl() {
    if (conn_) conn_->close();
}

void session_client::impl::close(error_info why) {
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
    if (on_close_) asio::post(ex(), [fn = std::move(on_close_), why = std::move(why)] { fn(why); });
}

void session_client::impl::drop_connection(const error_info& why) {
    ++conn_gen_;  // the timer's wait and the set-up steps of this connection stop
    phase_deadline_ = clock::time_point::max();
    if (auto conn = std::exchange(conn_, nullptr)) conn->close();  // its loops end
    timer_.cancel();
    event_.cancel();
    auto pending = std::move(pending_);
    pending_.clear();
    const error_info failed = why ? why : lost("session closed");
    for (auto& [id, p] : pending) complete(std::move(p.handler), call_result::failure(failed));
}

error_info session_client::impl::enqueue(protocol::byte_buffer msg) {
    if (phase_ == phase::closed) return lost("session closed");
    if (phase_ == phase::reconnecting || !conn_) return not_open();  // no connection to send it on
    if (auto err = conn_->send(std::move(msg))) return err;
    last_write_ = clock::now();
    return {};
}

// -- the connection's reports -----------------------------------------------------------------

void session_client::impl::on_validated() { event_.cancel(); }

void session_client::impl::on_end(const error_info& why) { close(why); }

void session_client::impl::on_message(const protocol::frame_view& message) {
    using protocol::message_type;
    protocol::byte_buffer plain;  // a compressed message's, inflated
    protocol::frame_view frame = message;
    if (message.header.compression == protocol::compression_status::compressed) {
        boost::system::error_code ec;
        const auto inner = protocol::decompress_frame(message, limits(), plain, ec);
        if (!inner) return close(make_error(errc::protocol_error, "bad compressed message"));
        frame = *inner;
    }
    switch (frame.header.type) {
    case message_type::reply: return on_reply(frame.body());
    case message_type::request: return on_request(frame.body());
    case message_type::batch_request: return on_batch(frame.body());
    case message_type::validate_connection: return;  // a heartbeat
    case message_type::close_connection: return;     // the connection ends itself for it
    }
}

void session_client::impl::on_reply(protocol::byte_view body) {
    auto r = protocol::decode_reply(body);
    if (!r) return close(make_error(errc::protocol_error, r.error().message()));
    const auto it = pending_.find(r->request_id);
    if (it == pending_.end()) return;  // timed out already: ignored, as Ice does
    auto h = std::move(it->second.handler);
    pending_.erase(it);
    complete(std::move(h), map_reply(*r));
}

void session_client::impl::on_request(protocol::byte_view body) {
    auto r = protocol::decode_request(body);
    if (!r) return close(make_error(errc::protocol_error, r.error().message()));
    dispatch_incoming(incoming_request{r->id, r->facet, r->operation, r->mode, r->params, r->request_id == 0},
                      r->request_id);
}

void session_client::impl::on_batch(protocol::byte_view body) {
    protocol::batch_reader batch(body);
    const std::uint32_t gen = conn_gen_;
    while (!batch.done() && !gone(gen)) {  // a reply we could not queue closes the connection
        auto r = batch.next();
        if (!r) break;
        dispatch_incoming(incoming_request{r->id, r->facet, r->operation, r->mode, r->params, true}, 0);
    }
    if (batch.error() && !gone(gen)) close(make_error(errc::protocol_error, batch.error().message()));
}

void session_client::impl::dispatch_incoming(const incoming_request& r, std::int32_t request_id) {
    const std::uint32_t gen = conn_gen_;
    const dispatch_result result = servants_.dispatch(category_, r);
    if (request_id == 0 || gone(gen)) return;  // the servant may have closed the session
    protocol::byte_buffer msg;
    write_dispatch_reply(msg, request_id, r, result);
    if (auto err = enqueue(std::move(msg))) close(err);  // a reply we cannot send: the caller would hang
}

// -- calls and timers -------------------------------------------------------------------------

std::int32_t session_client::impl::next_request_id() noexcept {
    // Ids start at 1 and wrap back to 1 (docs/ice-wire.md §4); skip any still pending.
    do {
        last_request_id_ = last_request_id_ == INT32_MAX ? 1 : last_request_id_ + 1;
    } while (pending_.contains(last_request_id_));
    return last_request_id_;
}

void session_client::impl::add_pending(std::int32_t id, asio::any_completion_handler<void(call_result)> h) {
    const auto deadline = clock::now() + opts_.call_timeout;
    pending_.emplace(id, pending_call{std::move(h), deadline});
    if (deadline < timer_.expiry()) timer_.cancel();  // the timer loop re-arms at the earlier deadline
}

void session_client::impl::complete(asio::any_completion_handler<void(call_result)> h, call_result r) {
    // Posted, never inline: the caller may be iterating our tables. `h` is always our own: a
    // coroutine (twoway) or send_add_proxy's handler, so its executor is ex().
    asio::post(ex(), [h = std::move(h), r = std::move(r)]() mutable { std::move(h)(std::move(r)); });
}

void session_client::impl::expire_calls(clock::time_point now) {
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

clock::time_point session_client::impl::next_wakeup() const {
    auto next = phase_deadline_;
    for (const auto& [id, p] : pending_) next = std::min(next, p.deadline);
    if (phase_ == phase::open && heartbeat_every_.count() > 0) next = std::min(next, last_write_ + heartbeat_every_);
    return next;
}

void session_client::impl::on_tick(clock::time_point now) {
    if (now >= phase_deadline_)
        return close(make_error(errc::timeout, "connect, TLS handshake, validation or close took too long"));
    expire_calls(now);
    if (phase_ == phase::open && heartbeat_every_.count() > 0 && now >= last_write_ + heartbeat_every_) {
        const auto& hb = protocol::validate_connection_message;
        if (auto err = enqueue(protocol::byte_buffer(hb.begin(), hb.end()))) close(err);
    }
}

void session_client::impl::arm_timer() {
    // A plain handler, not a coroutine: an idle session keeps one small wait op, no frame, at
    // its own size (exact_size). One wait per connection: drop_connection() ends it
    // (generation), establish() arms the next.
    timer_.expires_at(next_wakeup());
    auto on_wait = [this, self = keep(), gen = conn_gen_](boost::system::error_code) {
        if (gone(gen)) return;  // else expiry, or cancel() to re-arm earlier
        on_tick(clock::now());
        if (!gone(gen)) arm_timer();
    };
    timer_.async_wait(transport::exact_size(std::move(on_wait)));
}

asio::awaitable<void> session_client::impl::wait_event() {
    co_await event_.async_wait(nothrow_awaitable);  // only cancel() ends it: expiry is never
}

}  // namespace moraine::client
