#pragma once
// What a reconnecting session tells its caller (session_client::on_session_event).
#include <moraine/client/error.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace moraine::client {

/// The state changes of a session with session_options::reconnect set, in the order they come:
/// lost, then reconnecting (once per attempt), then restored or gave_up.
enum class session_event_kind : std::uint8_t {
    lost,          ///< the connection of an open session is gone (read error, EOF, the router closed
                   ///< it, a failed write or heartbeat); the calls in flight have failed with `error`
    reconnecting,  ///< attempt `attempt` starts after `delay`; `error`: why the previous one failed
    restored,      ///< attempt `attempt` opened a new session, of category `category`: servants answer
                   ///< under it now, and proxies handed out before (category `lost_category`) are stale
    gave_up,       ///< reconnect_options::max_attempts attempts failed (`error`: the last one's);
                   ///< the session is closed, on_close follows
};

/// "lost", "reconnecting", "restored", "gave_up".
const char* to_string(session_event_kind k) noexcept;

/// One state change of a reconnecting session. Delivered on the session's executor.
struct session_event {
    session_event_kind kind = session_event_kind::lost;
    /// reconnecting: the attempt about to be made (1-based); restored: the attempt that
    /// succeeded; gave_up: attempts made; lost: 0.
    unsigned attempt = 0;
    /// reconnecting: the back-off wait before this attempt, ms (backoff_policy); else 0.
    std::chrono::milliseconds delay{0};
    /// restored: the new session's category (Glacier2::Router::getCategoryForClient; empty if the
    /// router has no server endpoints); else empty.
    std::string category;
    /// The category of the session that was lost (every kind): what proxies handed to back ends
    /// before the loss carry.
    std::string lost_category;
    /// lost: why the connection went (usually errc::connection_lost); reconnecting: the previous
    /// attempt's error (empty for the first); gave_up: the last attempt's error; restored: empty.
    error_info error;
};

}  // namespace moraine::client
