#pragma once
// The router object <InstanceName>/router: Ice::Router and Glacier2::Router (docs/glacier2.md §1-4).
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/router/config.hpp>

#include <cstdint>

namespace moraine::router {

class client_connection;

/// True for `<InstanceName>/router` and `Ice/RouterFinder`, the objects the client endpoint serves itself.
bool is_router_identity(const config& cfg, protocol::identity_view id) noexcept;

/** Dispatches a request addressed to the router object on client connection `c`:
    ice_isA/ice_ping/ice_id/ice_ids, getClientProxy, getServerProxy, addProxies,
    getCategoryForClient, createSession, createSessionFromSecureConnection, refreshSession,
    destroySession, getSessionTimeout, getACMTimeout; Ice::RouterFinder::getRouter.
    Answers as glacier2router does, including closing the connection for session-only
    operations called without a session (docs/glacier2.md §4).
    @return false if the connection was closed. */
bool dispatch_router_request(client_connection& c, const protocol::request_view& r, std::uint8_t compression);

}  // namespace moraine::router
