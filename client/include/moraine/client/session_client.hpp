#pragma once
// The light client library: one Glacier2 session over one connection, without the Ice runtime.
#include <moraine/client/asio.hpp>
#include <moraine/client/call.hpp>
#include <moraine/client/call_result.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/client/router_endpoints.hpp>
#include <moraine/client/servant.hpp>
#include <moraine/client/session_event.hpp>
#include <moraine/client/session_options.hpp>
#include <moraine/protocol/proxy.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace moraine::client {

/** A Glacier2 session: one TCP, TLS, WebSocket or WebSocket-over-TLS connection to a router's
    client endpoint, carrying router calls,
    routed calls to back-end objects and callbacks to servants hosted here (docs/ice-wire.md §10,
    docs/glacier2.md §3). Everything runs on the executor given to create(): no thread of its
    own, nothing blocks. Owned by shared_ptr: its connection (until its pending read and write
    end) and its timer's wait hold one until close(). An idle open tcp session holds its
    connection (socket, one readability wait; no coroutine), two timers, one timer wait and
    its tables (about 2.2 KB of heap, measured by tests/client/client_smoke --measure;
    perf/README.md "Client library: an idle session's heap"); reads go through a per-thread
    64 KiB buffer, and only an incomplete message is kept per session. A TLS session (`ssl` or `wss`
    address) adds OpenSSL's connection state (about 15-20 KB: transport::tls_engine keeps no
    record buffers while idle, and reads decrypt into a per-thread buffer), owned by its
    connection; a tcp session carries nothing for TLS.

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
    struct make_tag {};  // private: only create() can construct

public:
    using executor_type = asio::any_io_executor;

    /// A closed session bound to `ex`; async_open starts it.
    static std::shared_ptr<session_client> create(executor_type ex, session_options opts = {});
    /// For create() only, which alone can name make_tag (make_shared: one allocation).
    session_client(make_tag, executor_type ex, session_options opts);
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
    const std::string& category() const noexcept;

    /// Heartbeat period in use (0 = none): half of getACMTimeout, or fallback_heartbeat.
    std::chrono::milliseconds heartbeat_period() const noexcept;

    /// True between a successful async_open and close, except while reconnecting.
    bool is_open() const noexcept;

    /// True from the loss of the connection until restored or gave_up (session_options::reconnect).
    bool is_reconnecting() const noexcept;

    /// Called once (posted to the executor) when the session ends, with why: empty after
    /// async_destroy or close(), else e.g. errc::connection_lost (the router dropped the session).
    /// With session_options::reconnect a lost connection does not end the session: this comes
    /// only after close(), async_destroy, or gave_up (errc::connection_lost "gave up
    /// reconnecting after N attempts: <last error>").
    void on_close(std::function<void(const error_info&)> fn);

    /** Called (posted to the executor, in order) for each state change of a reconnecting
        session: lost, reconnecting (once per attempt), restored or gave_up (session_event.hpp).
        Set it before async_open, or on the executor. Only with session_options::reconnect:
        without it nothing is ever reported here (a loss closes the session: on_close). */
    void on_session_event(std::function<void(const session_event&)> fn);

    /// Forceful close: the socket closes now, pending calls complete with errc::connection_lost;
    /// a reconnection under way stops (no more events). Idempotent; the only place the socket closes.
    void close();

    /// The executor everything runs on.
    executor_type get_executor() const noexcept { return ex_; }

private:
    /// The session's state and logic (src/session_client_impl.hpp): the connection, calls,
    /// servants, timers, reconnection. Nothing of it is API.
    class impl;
    /// createSession's user id and password; none = createSessionFromSecureConnection.
    struct credentials {
        std::string user, password;
    };

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
    static void set_bug(error_info& v);
    static void set_bug(call_result& v);

    // The operations the templates above start, each the impl's coroutine.
    asio::awaitable<error_info> open_coro(router_endpoints routers, std::optional<credentials> login);
    asio::awaitable<call_result> invoke_coro(call c);
    asio::awaitable<error_info> oneway_coro(call c);
    asio::awaitable<error_info> destroy_coro();

    executor_type ex_;
    std::unique_ptr<impl> impl_;
};

}  // namespace moraine::client
