// session_client: reconnection after a lost connection (session_options::reconnect).
#include "session_client_impl.hpp"

#include "endpoint_order.hpp"
#include "reconnect_state.hpp"

#include <utility>

namespace moraine::client {

bool session_client::impl::is_reconnecting() const noexcept { return reconnect_ && reconnect_->active; }

void session_client::impl::on_session_event(std::function<void(const session_event&)> fn) {
    if (reconnect_) reconnect_->on_event = std::move(fn);
}

void session_client::impl::emit(session_event ev) {
    if (!reconnect_->on_event) return;
    // Posted like on_close: the caller may call into the session from it, and we may be deep in
    // a read. The executor runs posted work in order, so the events arrive in order.
    asio::post(ex(), [this, self = keep(), ev = std::move(ev)] {
        if (reconnect_->on_event) reconnect_->on_event(ev);
    });
}

void session_client::impl::lose_connection(const error_info& why, bool was_open) {
    auto& rs = *reconnect_;
    phase_ = phase::reconnecting;
    routes_ = routing_cache{};  // a new session starts with an empty routing table on the router
    server_proxy_ = {};
    std::string category = std::exchange(category_, {});  // servants answer under the next session's
    if (!was_open) return;  // an attempt failed: reconnect_loop goes on
    rs.active = true;
    rs.attempt = 0;
    rs.lost_category = std::move(category);
    emit({session_event_kind::lost, 0, {}, {}, rs.lost_category, why});
    asio::co_spawn(ex(), [this, self = keep()] { return reconnect_loop(); },
                   [this, self = keep()](std::exception_ptr e) {
                       if (!e) return;
                       // A bug: report it as the end of the session rather than reconnect forever.
                       reconnect_->stopped = true;
                       reconnect_->active = false;
                       close(make_error(errc::protocol_error, "internal error in the client library"));
                   });
}

asio::awaitable<void> session_client::impl::reconnect_loop() {
    auto& rs = *reconnect_;
    const reconnect_options& policy = *opts_.reconnect;
    error_info last;  // the previous attempt's error
    for (unsigned attempt = 1;; ++attempt) {
        rs.attempt = attempt;
        const auto delay = policy.backoff.delay(attempt, thread_rng());
        emit({session_event_kind::reconnecting, attempt, delay, {}, rs.lost_category, last});
        rs.backoff_timer.expires_after(delay);
        co_await rs.backoff_timer.async_wait(nothrow_awaitable);
        if (!rs.active) co_return;  // close() or async_destroy meanwhile
        last = co_await establish(rs.routers, rs.login);  // every endpoint, in a new order
        if (!rs.active) co_return;
        if (!last) {
            rs.active = false;
            emit({session_event_kind::restored, attempt, {}, category_, rs.lost_category, {}});
            co_return;
        }
        if (policy.max_attempts != 0 && attempt >= policy.max_attempts) {
            rs.active = false;
            emit({session_event_kind::gave_up, attempt, {}, {}, rs.lost_category, last});
            close(make_error(errc::connection_lost, "gave up reconnecting after " + std::to_string(attempt) +
                                                        " attempts: " + last.message()));
            co_return;
        }
    }
}

}  // namespace moraine::client
