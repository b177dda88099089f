#pragma once
// Why a connection closed, as counted in moraine_connections_closed_total{reason=...}.
#include <cstddef>
#include <string_view>

namespace moraine::net {

/// The cause of a connection's close, for the metrics (the log line keeps the full text).
enum class close_reason : unsigned char {
    peer_closed,      ///< the peer closed or reset the connection
    idle,             ///< the ACM idle timeout
    protocol_error,   ///< bad bytes from the peer
    policy,           ///< the peer broke a rule (request before a session, rejected proxy, ...)
    slow_consumer,    ///< its outbound queue passed the hard limit
    handshake,        ///< TLS handshake or WebSocket upgrade failed or timed out
    session_ended,    ///< its session was destroyed (SessionControl)
    shutdown,         ///< the router is stopping
    io_error,         ///< another socket error (connect failure included)
    moved,            ///< handed over to a new process with its session (takeover); the TCP connection lives on
};
inline constexpr std::size_t close_reason_count = 10;

/// The label value of `r`.
constexpr std::string_view to_string(close_reason r) noexcept {
    constexpr std::string_view names[close_reason_count] = {"peer_closed", "idle",          "protocol_error",
                                                           "policy",      "slow_consumer", "handshake",
                                                           "session_ended", "shutdown",    "io_error",
                                                           "moved"};
    return names[static_cast<std::size_t>(r)];
}

}  // namespace moraine::net
