#pragma once
// Glacier2::SessionControl and its StringSet / IdentitySet objects, served on the server endpoints.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/router/config.hpp>

#include <string>
#include <string_view>

namespace moraine::router {

class session_shard;

/** The category of a session's control objects: `<InstanceName>.SessionControl`, with suffixes
    `.categories`, `.adapterIds`, `.identities` for its filter sets. The identity name is the
    session's own category, which names the owning shard (shard::new_category). */
std::string session_control_category(const config& cfg);

/// True if `category` names one of the SessionControl objects.
bool is_session_control_category(const config& cfg, std::string_view category) noexcept;

/// The SessionControl proxy handed to SessionManager::create for the session `session_category`,
/// on `server_endpoints`: the server endpoints as bound and published (session_router::
/// server_endpoints(), so `tcp -p 0` publishes the port it got). Nil without server endpoints:
/// nobody could reach it.
protocol::proxy session_control_proxy(const config& cfg, const std::vector<protocol::endpoint>& server_endpoints,
                                      const std::string& session_category);

/** Dispatches a request (the whole request `message`) to a SessionControl, StringSet or IdentitySet
    object, on the shard that owns the session, and sends the reply back along `route`.
    SessionControl: categories, adapterIds, identities, getSessionTimeout, destroy.
    StringSet / IdentitySet: add, remove, get (edit the session's filters).
    An unknown session gets ObjectNotExistException. */
void dispatch_session_control(session_shard& owner, protocol::byte_buffer message, bool twoway,
                              net::callback_route route);

}  // namespace moraine::router
