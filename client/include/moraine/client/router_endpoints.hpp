#pragma once
// Every client endpoint of a router proxy: the list a session spreads over and fails over along.
#include <moraine/client/router_address.hpp>

#include <optional>
#include <string_view>
#include <vector>

namespace moraine::client {

/** The endpoints of a router proxy (`tcp -h A -p 4063:tcp -h B -p 4063`), in the order given.
    session_client tries them in a random order per connection attempt, as an Ice client with
    Ice.Default.EndpointSelection=Random does: the sessions of one process spread over the
    routers, and an attempt after a router died reaches a survivor. Never empty when parsed. */
using router_endpoints = std::vector<router_address>;

/// Parses a `:`-separated endpoint list (a `:` inside a quoted host or resource does not split),
/// each part as router_address::parse reads one endpoint.
/// @return nullopt if any part is not a tcp, ssl, ws or wss endpoint with a host and a port in 1..65535.
std::optional<router_endpoints> parse_router_endpoints(std::string_view endpoints);

}  // namespace moraine::client
