#pragma once
// Settings of one client session.
#include <moraine/protocol/backoff_policy.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace moraine::client {

class tls_context;

/// The retry schedule, shared with the router's own back-offs (protocol/backoff_policy.hpp);
/// spelled client::backoff_policy in programs that use the client library.
using protocol::backoff_policy;

/** Reconnection of a session whose connection to the router is lost (read error, EOF, the
    router closed it or dropped the session, a failed write or heartbeat): the calls in flight
    fail with errc::connection_lost, then the session connects again to the same router address
    (a host name is resolved again: a load balancer may pick another router), creates a new
    session with the same credentials (password, or TLS certificate), and serves its servants
    under the new session's category. Each step is reported to session_client::on_session_event.
    A reconnecting session also sets TCP_USER_TIMEOUT to the ACM timeout (twice the heartbeat
    period): a router that stops acknowledging our heartbeats (host down, partition) is a loss
    then, not minutes of retransmissions later.
    Only a session that was open reconnects: a failed async_open is reported, not retried. */
struct reconnect_options {
    /// Waits before attempts 1, 2, ... (jittered exponential; default 50-100 ms, doubling, up to 10 s).
    backoff_policy backoff;
    /// Failed attempts after which the session gives up (session_event_kind::gave_up, then it
    /// closes with errc::connection_lost); 0 = never gives up.
    unsigned max_attempts = 0;
};

/// Settings of a session_client. Defaults suit a Glacier2 3.7 router with default settings.
struct session_options {
    /// Glacier2.InstanceName of the router: its object is `<instance_name>/router`.
    std::string instance_name = "Glacier2";
    /// Bound on each twoway call (router calls included) from send to reply; errc::timeout after.
    std::chrono::milliseconds call_timeout{60'000};
    /// Bound on TCP connect + TLS handshake (ssl), upgrade (ws) or both (wss) + the router's validate
    /// connection, per router endpoint tried (router_endpoints), and on the graceful close.
    std::chrono::milliseconds connect_timeout{10'000};
    /// Keep the session alive: after createSession the client asks getACMTimeout and sends a
    /// heartbeat (validate connection message) whenever it wrote nothing for half of it
    /// (what Glacier2.SessionHelper does; the router drops idle connections, docs/ice-wire.md §12).
    bool keep_alive = true;
    /// Heartbeat period used when keep_alive is set and getACMTimeout fails or returns <= 0 (0 = none).
    std::chrono::milliseconds fallback_heartbeat{15'000};
    /// Hard bound, in bytes, on messages queued for the router; a send that would pass it fails
    /// with errc::queue_full (the connection stays open).
    std::size_t write_queue_limit = 1024 * 1024;
    /// Largest message accepted from the router, in bytes (Ice.MessageSizeMax × 1024; 0 = unlimited).
    std::size_t max_message_bytes = 1024 * 1024;
    /// TLS settings for `ssl` and `wss` router addresses (router_address::tls), made once with
    /// tls_context::create and shared by any number of sessions; unused for tcp and ws addresses.
    /// Null: an ssl or wss address fails with errc::tls_not_configured (never tried without TLS).
    std::shared_ptr<const tls_context> tls;
    /// Set: reconnect after a lost connection, as reconnect_options says. Unset (the default): a
    /// lost connection closes the session (on_close), as before. With it set the session keeps
    /// the router address and the credentials of async_open for as long as it lives.
    std::optional<reconnect_options> reconnect;
};

}  // namespace moraine::client
