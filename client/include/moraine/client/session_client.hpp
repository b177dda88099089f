#pragma once
// The light client library: one Glacier2 session over one connection, without the Ice runtime.
#include <moraine/client/asio.hpp>
#include <moraine/client/call.hpp>
#include <moraine/client/call_result.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/client/router_endpoints.hpp>
#include <moraine/client/routing_cache.hpp>
#include <moraine/client/servant.hpp>
#include <moraine/client/servant_map.hpp>
#include <moraine/client/session_event.hpp>
#include <moraine/client/session_options.hpp>
#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/proxy.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace moraine::client {

class stream_layer;  // src/stream_layer.hpp: what the write loop needs from TLS and WebSocket
struct tls_stream;  // src/tls_stream.hpp: the TLS layer of a session over an `ssl` or `wss` address
struct ws_client_stream;  // src/ws_client_stream.hpp: the WebSocket layer over a `ws` or `wss` address

/** A Glacier2 session: one TCP, TLS, WebSocket or WebSocket-over-TLS connection to a router's
    client endpoint, carrying router calls,
    routed calls to back-end objects and callbacks to servants hosted here (docs/ice-wire.md §10,
    docs/glacier2.md §3). Everything runs on the executor given to create(): no thread of its
    own, nothing blocks. Owned by shared_ptr: its read and write coroutines and its timer's
    wait hold one until close(). An idle open session holds its socket, three timers, two
    coroutines and its tables (about 5 KiB of heap, measured by tests/client/client_smoke
    --measure); reads go through a per-thread 64 KiB buffer, and only an incomplete message is
    kept per session. A TLS session (`ssl` or `wss` address) adds OpenSSL's connection state (about
    15-20 KB: transport::tls_engine keeps no record buffers while idle, and reads decrypt into
    a per-thread buffer), owned by its read and write coroutines; a tcp session carries nothing for TLS.

    Threads: the executor must be single-threaded (an io_context run by one thread, or a
    strand). The async_* functions may be called from any thread: they dispatch to it. The
    other member functions must be called on it.

    Reconnection (session_options::reconnect, off by default): when the connection of an open
    session is lost, the calls in flight fail with errc::connection_lost and the session
    reconnects with back-off, reporting each step to on_session_event (lost, reconnecting per
    attempt, then restored or gave_up). Meanwhile is_open() is false and calls fail at once with
    errc::reconnecting (nothing is queued to be sent later: call again after `restored`).
    Servants stay registered by name and answer under the new session's category; proxies
    handed out before the loss carry the old one, so hand out server_proxy(name) again.

    Several routers (router_endpoints, e.g. from `tcp -h A -p 4063:tcp -h B -p 4063`): each
    connection attempt, the first and every reconnection attempt, tries the endpoints in a new
    random order until one connects, as an Ice client with Ice.Default.EndpointSelection=Random
    does. The sessions of one process thus spread over the routers, and a session whose router
    died comes back through another. The session lives on the router it reached; nothing is
    shared between routers, so a new session there has a new category.

    Operations complete with one value (error_info or call_result), so with any asio token:
    `co_await s->async_invoke(c, asio::use_awaitable)`, `s->async_invoke(c, asio::use_future).get()`,
    or a callback `[](call_result r) {...}`. Nothing throws for network or Ice errors. */
class session_client : public std::enable_shared_from_this<session_client> {
public:
    using executor_type = asio::any_io_executor;

    /// A closed session bound to `ex`; async_open starts it.
    static std::shared_ptr<session_client> create(executor_type ex, session_options opts = {});
    ~session_client();
    session_client(const session_client&) = delete;
    session_client& operator=(const session_client&) = delete;

    /** Opens the session: connects to one of `routers`, trying them in a random order until
        one connects (connect_timeout bounds each endpoint's try: connect, the TLS handshake for
        an `ssl` address, the upgrade for a `ws` one, both for `wss` (TLS first, then the
        upgrade over it), and the router's validate connection;
        the next endpoint is tried after a failure or timeout), calls
        `Glacier2::Router::createSession(user, password)`, then in one round trip
        `getCategoryForClient` and `getACMTimeout`, then, if the category is not empty,
        `getServerProxy` (docs/glacier2.md §3). Call once (this or async_open_secure).
        Completion `void(error_info)`: empty on success; errc::permission_denied or
        ::cannot_create_session with the router's reason; errc::timeout; a socket error
        (e.g. connection_refused); errc::connection_lost; for an `ssl` or `wss` address also
        errc::tls_not_configured (session_options::tls is null: nothing is sent, whichever
        endpoint is `ssl` or `wss`) and ::tls_handshake_failed (e.g. the router's certificate is
        not trusted); errc::bad_endpoint for an empty list. When every endpoint fails, the error of
        the last one tried. A router that answers createSession with an exception is not
        failed over: its answer is the session's.
        On failure the session is closed (never retried, even with session_options::reconnect).
        With reconnect set, the session keeps `routers`, `user` and `password` for later attempts. */
    template <class Token>
    auto async_open(router_endpoints routers, std::string user, std::string password, Token&& token) {
        // Arguments travel captured in the initiation, not as async_initiate's extra arguments:
        // g++ 12 mis-copies class-type parameter packs of coroutines (use_awaitable's initiate).
        return asio::async_initiate<Token, void(error_info)>(
            [self = shared_from_this(), a = std::move(routers), u = std::move(user),
             p = std::move(password)](auto handler) mutable {
                self->spawn_with([self, a = std::move(a), u = std::move(u), p = std::move(p)]() mutable {
                    std::optional<credentials> login(credentials{std::move(u), std::move(p)});
                    return self->open_coro(std::move(a), std::move(login));
                }, std::move(handler));
            },
            token);
    }

    /// async_open with a single router endpoint.
    template <class Token>
    auto async_open(router_address router, std::string user, std::string password, Token&& token) {
        return async_open(router_endpoints{std::move(router)}, std::move(user), std::move(password),
                          std::forward<Token>(token));
    }

    /** Opens the session as async_open does, but authenticated by the TLS connection instead of
        a password: `Glacier2::Router::createSessionFromSecureConnection()`, which the router
        decides from the client certificate (tls_options::cert_file) with its
        Glacier2.SSLPermissionsVerifier (docs/transports.md §4.3). Meant for an `ssl` address:
        over tcp the router refuses it (permission_denied "not ssl connection"). Call once.
        Completion `void(error_info)` as async_open, e.g. errc::permission_denied "no configured
        ssl permissions verifier", or ::cannot_create_session, with the router's reason. */
    template <class Token>
    auto async_open_secure(router_endpoints routers, Token&& token) {
        return asio::async_initiate<Token, void(error_info)>(
            [self = shared_from_this(), a = std::move(routers)](auto handler) mutable {
                self->spawn_with([self, a = std::move(a)]() mutable {
                    return self->open_coro(std::move(a), std::nullopt);
                }, std::move(handler));
            },
            token);
    }

    /// async_open_secure with a single router endpoint.
    template <class Token>
    auto async_open_secure(router_address router, Token&& token) {
        return async_open_secure(router_endpoints{std::move(router)}, std::forward<Token>(token));
    }

    /** Twoway call through the router: addProxies([c.target]) first if its identity is not in
        the routing cache, then the request; if the router answers ObjectNotExist
        "ice_add_proxy", re-adds and retries once (docs/ice-wire.md §10).
        Completion `void(call_result)`: ok with the results encapsulation, or the mapped Ice
        error (errc::user_exception with type id and encapsulation, *_not_exist, unknown_*),
        errc::timeout after call_timeout, errc::connection_lost, ::not_connected, ::queue_full,
        ::reconnecting (the session is reconnecting: not sent). */
    template <class Token>
    auto async_invoke(call c, Token&& token) {
        return asio::async_initiate<Token, void(call_result)>(
            [self = shared_from_this(), c = std::move(c)](auto handler) mutable {
                self->spawn_with([self, c = std::move(c)]() mutable { return self->invoke_coro(std::move(c)); },
                                 std::move(handler));
            },
            token);
    }

    /** Oneway call through the router (request id 0, no reply): addProxies first if needed.
        Completion `void(error_info)` once the request is queued: empty, or errc::not_connected,
        ::queue_full, ::connection_lost, ::reconnecting, or the error of the addProxies call. */
    template <class Token>
    auto async_send_oneway(call c, Token&& token) {
        return asio::async_initiate<Token, void(error_info)>(
            [self = shared_from_this(), c = std::move(c)](auto handler) mutable {
                self->spawn_with([self, c = std::move(c)]() mutable { return self->oneway_coro(std::move(c)); },
                                 std::move(handler));
            },
            token);
    }

    /** Ends the session: `Glacier2::Router::destroySession`, then a graceful close (close
        connection message, then the socket), bounded by connect_timeout.
        Completion `void(error_info)`: the destroySession error if any (e.g. errc::user_exception
        `::Glacier2::SessionNotExistException`); the connection is closed either way. While the
        session is reconnecting there is no session on a router to destroy: reconnection stops,
        the session closes and this completes with no error. */
    template <class Token>
    auto async_destroy(Token&& token) {
        return asio::async_initiate<Token, void(error_info)>(
            [self = shared_from_this()](auto handler) {
                self->spawn_with([self] { return self->destroy_coro(); }, std::move(handler));
            },
            token);
    }

    /** Registers `s` as the servant `<category>/name`: requests the router sends for it on this
        connection are dispatched to it; others get ObjectNotExist. Call after async_open.
        The servant is kept by name: after a reconnection it answers under the new category.
        @return the proxy to hand to back ends (e.g. to subscribe): identity `<category>/name`
        with the router's server endpoints from getServerProxy; a nil proxy if the router has
        no server endpoints (then no callback can reach this client), or while reconnecting. */
    protocol::proxy add_servant(std::string name, servant s);

    /// Unregisters the servant `<category>/name`. @return true if there was one.
    bool remove_servant(std::string_view name);

    /// The proxy `<category>/name` with the router's server endpoints (nil without server endpoints).
    protocol::proxy server_proxy(std::string_view name) const;

    /// The session category (Glacier2::Router::getCategoryForClient); empty before async_open
    /// completes, while reconnecting, or when the router has no server endpoints. A new value
    /// after each reconnection (session_event::category).
    const std::string& category() const noexcept { return category_; }

    /// Heartbeat period in use (0 = none): half of getACMTimeout, or fallback_heartbeat.
    std::chrono::milliseconds heartbeat_period() const noexcept { return heartbeat_every_; }

    /// True between a successful async_open and close, except while reconnecting.
    bool is_open() const noexcept { return phase_ == phase::open; }

    /// True from the loss of the connection until restored or gave_up (session_options::reconnect).
    bool is_reconnecting() const noexcept;

    /// Called once (posted to the executor) when the session ends, with why: empty after
    /// async_destroy or close(), else e.g. errc::connection_lost (the router dropped the session).
    /// With session_options::reconnect a lost connection does not end the session: this comes
    /// only after close(), async_destroy, or gave_up (errc::connection_lost "gave up
    /// reconnecting after N attempts: <last error>").
    void on_close(std::function<void(const error_info&)> fn) { on_close_ = std::move(fn); }

    /** Called (posted to the executor, in order) for each state change of a reconnecting
        session: lost, reconnecting (once per attempt), restored or gave_up (session_event.hpp).
        Set it before async_open, or on the executor. Only with session_options::reconnect:
        without it nothing is ever reported here (a loss closes the session: on_close). */
    void on_session_event(std::function<void(const session_event&)> fn);

    /// Forceful close: the socket closes now, pending calls complete with errc::connection_lost;
    /// a reconnection under way stops (no more events). Idempotent; the only place the socket closes.
    void close() { close(error_info{}); }

    /// The executor everything runs on.
    executor_type get_executor() const noexcept { return ex_; }

private:
    /// reconnecting: the connection is lost and no attempt is connecting now (back-off wait);
    /// an attempt goes through connecting and creating again.
    enum class phase : std::uint8_t { idle, connecting, creating, open, closing, closed, reconnecting };
    /// createSession's user id and password; none = createSessionFromSecureConnection.
    struct credentials {
        std::string user, password;
    };
    /// What a session with session_options::reconnect keeps (src/reconnect_state.hpp).
    struct reconnect_state;
    struct pending_call {
        asio::any_completion_handler<void(call_result)> handler;
        std::chrono::steady_clock::time_point deadline;
    };

    session_client(executor_type ex, session_options opts);

    /// Runs the coroutine made by `make` on the session's executor, then completes `handler`
    /// with its value on the handler's own executor.
    template <class MakeCoro, class Handler>
    void spawn_with(MakeCoro make, Handler handler) {
        asio::co_spawn(ex_, std::move(make),
                       [h = std::move(handler)](std::exception_ptr e, auto value) mutable {
                           if (e) set_bug(value);
                           auto ex = asio::get_associated_executor(h);
                           asio::dispatch(ex, [h = std::move(h), v = std::move(value)]() mutable {
                               std::move(h)(std::move(v));
                           });
                       });
    }
    /// An exception escaped a session coroutine: a bug, reported as a value (docs/style.md §8).
    static void set_bug(error_info& v) { v = make_error(errc::protocol_error, "internal error in the client library"); }
    static void set_bug(call_result& v) { v = call_result::failure(make_error(errc::protocol_error, "internal error in the client library")); }

    // Operations (session_client_ops.cpp).
    asio::awaitable<error_info> open_coro(router_endpoints routers, std::optional<credentials> login);
    /// A connection to one of `routers` (reach_any), then createSession*, session info: one
    /// attempt's way to phase::open. On failure its connection is closed. The caller keeps
    /// `routers` and `login` alive.
    asio::awaitable<error_info> establish(const router_endpoints& routers, const std::optional<credentials>& login);
    /// Tries `routers` in a fresh random order until one is reached; the last one's error if none is.
    asio::awaitable<error_info> reach_any(const router_endpoints& routers);
    /// Connect (and TLS or WebSocket handshake) and validation, within connect_timeout.
    asio::awaitable<error_info> reach(const router_address& a);
    asio::awaitable<error_info> connect(const router_address& a);
    asio::awaitable<error_info> tls_handshake(const router_address& a, tls_stream& tls, std::uint32_t gen);
    asio::awaitable<error_info> ws_upgrade(const router_address& a, ws_client_stream& ws, std::uint32_t gen);
    /// After a set-up step of connection `gen` ended with `err`: closes the connection on a
    /// failure. @return `err`, or why the connection went meanwhile (timeout, close()).
    error_info settled(error_info err, std::uint32_t gen);
    asio::awaitable<error_info> wait_validated(std::uint32_t gen);
    asio::awaitable<error_info> fetch_session_info(std::uint32_t gen);
    asio::awaitable<call_result> invoke_coro(call c);
    asio::awaitable<error_info> oneway_coro(call c);
    asio::awaitable<error_info> destroy_coro();
    asio::awaitable<error_info> ensure_route(const protocol::proxy& target);
    asio::awaitable<call_result> router_call(std::string operation, protocol::operation_mode mode,
                                             protocol::byte_buffer params);
    /// `options`: the call's context and compression (null for the router's own operations).
    asio::awaitable<call_result> twoway(protocol::identity_view id, std::string_view facet, std::string_view operation,
                                        protocol::operation_mode mode, protocol::byte_view params,
                                        const call* options = nullptr);

    // Reconnection (session_client_reconnect.cpp).
    /// The connection of a session that reconnects is gone (close() decided so): phase
    /// reconnecting, fresh routing cache; the first loss of an open session starts the loop.
    void lose_connection(const error_info& why, bool was_open);
    asio::awaitable<void> reconnect_loop();
    void emit(session_event ev);

    // Connection (session_client_io.cpp). `gen` is the connection generation a loop or an
    // operation belongs to: each closed connection increments conn_gen_, so what served an
    // earlier connection stops instead of touching the next one.
    bool gone(std::uint32_t gen) const noexcept { return phase_ == phase::closed || gen != conn_gen_; }
    /// Starts the connection's read and write loops over the layers its address asked for:
    /// none (tcp), `tls` (ssl), `ws` (ws), `ws` over `tls` (wss: ws->tls == tls).
    void start_loops(std::shared_ptr<tls_stream> tls, std::shared_ptr<ws_client_stream> ws);
    /// Waits for readability and reads into the thread's scratch, `on_data(span) -> bool` after
    /// each read (false stops), until the connection `gen` is gone; a read error closes it.
    template <class OnData>
    asio::awaitable<void> read_each(std::uint32_t gen, OnData on_data);
    /// The one read loop: bytes that came with the handshakes first, then each read through the
    /// layers (on_read) to on_bytes.
    asio::awaitable<void> read_loop(std::shared_ptr<tls_stream> tls, std::shared_ptr<ws_client_stream> ws,
                                    std::uint32_t gen);
    /// One read's bytes through TLS, then WebSocket, whichever the connection has. @return false to stop.
    bool on_read(tls_stream* tls, ws_client_stream* ws, std::uint32_t gen, std::span<std::byte> data);
    /// The one write loop: batches of out_ as they are (tcp, `layer` null) or encoded by
    /// `layer` (the WebSocket layer for ws and wss, TLS for ssl), one write each.
    asio::awaitable<void> write_loop(std::shared_ptr<stream_layer> layer, std::uint32_t gen);
    /// Decodes the router's frames in `data` (read just now): messages to on_bytes, pings
    /// answered, a close answered and ended. @return false once the connection is closing.
    bool on_ws_bytes(ws_client_stream& ws, std::span<std::byte> data);
    /// Decrypts what a read brought and dispatches it (to on_bytes, or over wss to on_ws_bytes
    /// of `ws`); closes on the router's close_notify or a TLS error (errc::tls_handshake_failed
    /// before the connection was validated). @return false to stop.
    bool on_tls_bytes(tls_stream& tls, std::uint32_t gen, std::span<std::byte> data, ws_client_stream* ws);
    /// Waits until something is queued (in out_, or the control bytes of `layer`, if any):
    /// true; false once connection `gen` is gone (closing first when a close was asked for and
    /// everything queued has been written).
    asio::awaitable<bool> await_output(std::uint32_t gen, const stream_layer* layer);
    /// The first `n` messages of out_ as buffers of one writev.
    void gather(std::vector<asio::const_buffer>& batch, std::size_t n) const;
    bool on_written(std::uint32_t gen, const boost::system::error_code& ec, std::size_t n);
    error_info read_error(const boost::system::error_code& ec) const;
    void arm_timer();
    bool on_bytes(protocol::byte_view data);
    void on_frame(const protocol::frame_view& frame);
    void on_message(const protocol::frame_view& frame);
    void on_reply(protocol::byte_view body);
    void on_request(protocol::byte_view body);
    void on_batch(protocol::byte_view body);
    void dispatch_incoming(const incoming_request& r, std::int32_t request_id);
    error_info enqueue(protocol::byte_buffer msg);
    std::int32_t next_request_id() noexcept;
    void add_pending(std::int32_t id, asio::any_completion_handler<void(call_result)> h);
    void complete(asio::any_completion_handler<void(call_result)> h, call_result r);
    void expire_calls(std::chrono::steady_clock::time_point now);
    std::chrono::steady_clock::time_point next_wakeup() const;
    void on_tick(std::chrono::steady_clock::time_point now);
    /// Closes the connection (`why` empty: asked for by the caller). While reach_any has another
    /// endpoint to try, a failure only drops the connection. With reconnect set, a loss
    /// of an open or reconnecting session goes to lose_connection; anything else ends the session.
    void close(error_info why);
    /// The connection half of close(): socket, timers, queues; pending calls fail with `why`.
    void drop_connection(const error_info& why);
    error_info not_open() const;
    asio::awaitable<void> wait_event();
    protocol::limits limits() const noexcept { return {opts_.max_message_bytes}; }

    // A tcp session pays nothing for TLS: the TLS stream lives in the loops' frames, and opts_.tls
    // fits in what packing phase_, the flags and last_request_id_ into one word saved.
    executor_type ex_;
    session_options opts_;
    tcp::socket socket_;
    protocol::identity router_id_;
    phase phase_ = phase::idle;
    bool validated_ = false;
    bool close_after_flush_ = false;
    bool failing_over_ = false;  // reach_any: another endpoint follows, so a failure only drops the connection
    std::int32_t last_request_id_ = 0;
    std::uint32_t conn_gen_ = 0;  // incremented by each close of a connection

    std::vector<protocol::byte_buffer> out_;  // whole messages, oldest first
    std::size_t out_bytes_ = 0;
    protocol::frame_assembler in_;           // holds a message only while it straddles reads
    asio::steady_timer wakeup_;              // write loop sleeps on it; enqueue() cancels it
    asio::steady_timer timer_;               // deadlines: phase, calls, heartbeat
    asio::steady_timer event_;               // condition variable: validated, route changes, close

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
