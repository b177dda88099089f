#pragma once
// The session behind session_client: its state and logic (private to the library).
#include "router_connection.hpp"

#include <moraine/client/routing_cache.hpp>
#include <moraine/client/servant_map.hpp>
#include <moraine/client/session_client.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace moraine::client {

/** One Glacier2 session over a router_connection at a time: opening it (endpoints tried in a
    random order, createSession*, the session's category, ACM timeout and server proxy), calls
    and their pending replies, servants answering callbacks, the routing cache, deadlines and
    heartbeats, reconnection. The connection reports its messages and its end here
    (connection_events). Owned by its session_client, which every coroutine and wait of the
    session keeps alive (keep()); the connection keeps it alive from its start to its end.
    Touched on the executor only. */
class session_client::impl final : public connection_events {
public:
    /// The impl of `owner`, on its executor.
    impl(session_client& owner, session_options opts);
    ~impl();
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;

    // The operations behind the public API (session_client_ops.cpp).
    asio::awaitable<error_info> open(router_endpoints routers, std::optional<credentials> login);
    asio::awaitable<call_result> invoke(call c);
    asio::awaitable<error_info> oneway(call c);
    asio::awaitable<error_info> destroy();
    protocol::proxy add_servant(std::string name, servant s);
    bool remove_servant(std::string_view name) { return servants_.remove(name); }
    protocol::proxy server_proxy(std::string_view name) const;
    const std::string& category() const noexcept { return category_; }
    std::chrono::milliseconds heartbeat_period() const noexcept { return heartbeat_every_; }
    bool is_open() const noexcept { return phase_ == phase::open; }
    bool is_reconnecting() const noexcept;
    void on_close(std::function<void(const error_info&)> fn) { on_close_ = std::move(fn); }
    void on_session_event(std::function<void(const session_event&)> fn);
    /// Closes the connection (`why` empty: asked for by the caller). While reach_any has another
    /// endpoint to try, a failure only drops the connection. With reconnect set, a loss
    /// of an open or reconnecting session goes to lose_connection; anything else ends the session.
    void close(error_info why);

    // connection_events (session_client_dispatch.cpp).
    void on_validated() override;
    void on_message(const protocol::frame_view& message) override;
    void on_end(const error_info& why) override;

private:
    /// reconnecting: the connection is lost and no attempt is connecting now (back-off wait);
    /// an attempt goes through connecting and creating again.
    enum class phase : std::uint8_t { idle, connecting, creating, open, closing, closed, reconnecting };
    /// What a session with session_options::reconnect keeps (src/reconnect_state.hpp).
    struct reconnect_state;
    struct pending_call {
        asio::any_completion_handler<void(call_result)> handler;
        std::chrono::steady_clock::time_point deadline;
    };

    /// The session_client, which owns us: held by whatever must keep the session alive.
    std::shared_ptr<session_client> keep() const { return owner_.shared_from_this(); }
    /// The session's executor (the owner's: one copy per session).
    const executor_type& ex() const noexcept { return owner_.ex_; }

    // Opening (session_client_ops.cpp).
    /// A connection to one of `routers` (reach_any), then createSession*, session info: one
    /// attempt's way to phase::open. On failure its connection is closed. The caller keeps
    /// `routers` and `login` alive.
    asio::awaitable<error_info> establish(const router_endpoints& routers, const std::optional<credentials>& login);
    /// Tries `routers` in a fresh random order until one is reached; the last one's error if none is.
    asio::awaitable<error_info> reach_any(const router_endpoints& routers);
    /// A new connection to `a` (its handshakes) and its validation, within connect_timeout.
    asio::awaitable<error_info> reach(const router_address& a);
    /// After a set-up step of connection `gen` ended with `err`: closes the connection on a
    /// failure. @return `err`, or why the connection went meanwhile (timeout, close()).
    error_info settled(error_info err, std::uint32_t gen);
    asio::awaitable<error_info> wait_validated(std::uint32_t gen);
    asio::awaitable<error_info> fetch_session_info(std::uint32_t gen);
    /// Until `target`'s identity is in the router's routing table: addProxies if absent, or the
    /// answer of the one in flight. @return its error; not_open() unless open.
    asio::awaitable<error_info> ensure_route(const protocol::proxy& target);
    /** Sends addProxies([target]) without waiting (routes_: adding). Its answer updates routes_
        (added, or absent again; the evicted forgotten) and wakes event_'s waiters.
        @return where that answer's error goes (set, empty on success, once it has come). */
    std::shared_ptr<std::optional<error_info>> send_add_proxy(const protocol::proxy& target);
    /// Waits for the answer of a send_add_proxy. @return its error (empty: added).
    asio::awaitable<error_info> answer_of(std::shared_ptr<std::optional<error_info>> added);
    asio::awaitable<call_result> router_call(std::string operation, protocol::operation_mode mode,
                                             protocol::byte_buffer params);
    /// `options`: the call's context and compression (null for the router's own operations).
    asio::awaitable<call_result> twoway(protocol::identity_view id, std::string_view facet, std::string_view operation,
                                        protocol::operation_mode mode, protocol::byte_view params,
                                        const call* options = nullptr);
    error_info not_open() const;

    // Reconnection (session_client_reconnect.cpp).
    /// The connection of a session that reconnects is gone (close() decided so): phase
    /// reconnecting, fresh routing cache; the first loss of an open session starts the loop.
    void lose_connection(const error_info& why, bool was_open);
    asio::awaitable<void> reconnect_loop();
    void emit(session_event ev);

    // Messages, calls and timers (session_client_dispatch.cpp). `gen` is the connection
    // generation an operation belongs to: each closed connection increments conn_gen_, so what
    // served an earlier connection stops instead of touching the next one.
    bool gone(std::uint32_t gen) const noexcept { return phase_ == phase::closed || gen != conn_gen_; }
    void on_reply(protocol::byte_view body);
    void on_request(protocol::byte_view body);
    void on_batch(protocol::byte_view body);
    void dispatch_incoming(const incoming_request& r, std::int32_t request_id);
    /// Queues a whole message on the connection. @return errc::queue_full, ::reconnecting,
    /// ::not_connected or ::connection_lost when it cannot.
    error_info enqueue(protocol::byte_buffer msg);
    std::int32_t next_request_id() noexcept;
    void add_pending(std::int32_t id, asio::any_completion_handler<void(call_result)> h);
    void complete(asio::any_completion_handler<void(call_result)> h, call_result r);
    void expire_calls(std::chrono::steady_clock::time_point now);
    std::chrono::steady_clock::time_point next_wakeup() const;
    void on_tick(std::chrono::steady_clock::time_point now);
    void arm_timer();
    /// The connection half of close(): the connection, timers; pending calls fail with `why`.
    void drop_connection(const error_info& why);
    asio::awaitable<void> wait_event();
    /// Waits for events until `done()` holds or connection `gen` is gone (`done` is asked only
    /// while it is there). @return true if connection `gen` is still there.
    template <class Done>
    asio::awaitable<bool> wait_until(Done done, std::uint32_t gen);
    protocol::limits limits() const noexcept { return {opts_.max_message_bytes}; }

    session_client& owner_;
    session_options opts_;
    protocol::identity router_id_;
    std::shared_ptr<router_connection> conn_;  // the connection of generation conn_gen_, if any
    phase phase_ = phase::idle;
    bool failing_over_ = false;  // reach_any: another endpoint follows, so a failure only drops the connection
    std::int32_t last_request_id_ = 0;
    std::uint32_t conn_gen_ = 0;  // incremented by each close of a connection

    asio::steady_timer timer_;  // deadlines: phase, calls, heartbeat
    asio::steady_timer event_;  // condition variable: validated, route changes, close

    std::unordered_map<std::int32_t, pending_call> pending_;
    routing_cache routes_;
    servant_map servants_;
    std::string category_;
    protocol::proxy server_proxy_;
    std::chrono::milliseconds heartbeat_every_{0};
    std::chrono::steady_clock::time_point last_write_;
    std::chrono::steady_clock::time_point phase_deadline_ = std::chrono::steady_clock::time_point::max();
    std::function<void(const error_info&)> on_close_;
    error_info closed_by_;  // why the connection closed, if not by us
    std::unique_ptr<reconnect_state> reconnect_;  // null without session_options::reconnect
};

}  // namespace moraine::client
