#pragma once
// What a session with session_options::reconnect keeps to reconnect (private to the library).
#include "session_client_impl.hpp"

#include <functional>
#include <optional>
#include <string>

namespace moraine::client {

/** Allocated only for a session with session_options::reconnect, so that the others pay one
    pointer for it. Touched on the session's executor only. */
struct session_client::impl::reconnect_state {
    explicit reconnect_state(const executor_type& ex) : backoff_timer(ex) {}

    router_endpoints routers;             ///< async_open's, for every attempt (each shuffles them)
    std::optional<credentials> login;     ///< none: createSessionFromSecureConnection
    std::function<void(const session_event&)> on_event;
    asio::steady_timer backoff_timer;     ///< the wait before an attempt; close() cancels it
    std::string lost_category;            ///< the category of the session that was lost
    unsigned attempt = 0;                 ///< the attempt waited for or under way (1-based)
    bool active = false;                  ///< from the loss until restored, gave_up or close
    bool stopped = false;                 ///< close() or async_destroy began: a loss ends the session
};

}  // namespace moraine::client
