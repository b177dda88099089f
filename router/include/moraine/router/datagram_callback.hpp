#pragma once
// Callbacks that reach a udp Glacier2.Server.Endpoints: a back end invoking a client's callback
// proxy with ice_datagram() (docs/glacier2.md "udp").
#include <moraine/protocol/request.hpp>

namespace moraine::net {
class shard;
}

namespace moraine::router {

class session_router;

/** Routes request `r`, received in a datagram on shard `sh` (request id 0), as a oneway
    callback over tcp is routed (server_connection): to the client connection of the session
    its identity's category names, on the shard that owns it, context per
    Glacier2.Server.ForwardContext, `_fwd`/`_ovrd` and buffering per Glacier2.Server.*; a call to
    a SessionControl object likewise. Nothing is ever answered: a datagram has no reply, so an
    unknown category, or a `_fwd=d` asking for a datagram toward the client (whose only way is
    its stream connection), loses the request. The view borrows the shard's receive buffer. */
void route_datagram_callback(session_router& router, net::shard& sh, const protocol::request_view& r);

}  // namespace moraine::router
