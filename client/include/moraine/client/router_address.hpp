#pragma once
// Where a router's client endpoint is, and whether it speaks TLS.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace moraine::protocol {
struct endpoint;
}

namespace moraine::client {

/// Host and port of a router's client endpoint (`Glacier2.Client.Endpoints`): tcp, ssl or ws.
struct router_address {
    std::string host;  ///< a numeric address (no lookup) or a host name (resolved at connect)
    std::uint16_t port = 0;
    /// True for an `ssl` endpoint: the session runs over TLS with session_options::tls, and
    /// async_open fails with errc::tls_not_configured without it (it never falls back to tcp).
    bool tls = false;
    /// True for a `ws` endpoint: Ice messages in WebSocket binary frames (subprotocol
    /// ice.zeroc.com, one message per frame), upgraded at `resource`.
    bool websocket = false;
    std::string resource = "/";

    /// Parses an Ice endpoint string, e.g. `tcp -h 127.0.0.1 -p 4063` or `ssl -h 127.0.0.1 -p 4064`
    /// (other options such as `-t` are accepted and ignored). Of a `:`-separated list only the
    /// first is read: parse_router_endpoints (router_endpoints.hpp) keeps them all, and a session
    /// opened with that list fails over along it.
    /// @return nullopt if it is not a tcp, ssl or ws endpoint with a host and a port in 1..65535
    /// (wss is not supported by the library).
    static std::optional<router_address> parse(std::string_view endpoint);

    /// The address of an endpoint already parsed (protocol::endpoint_from_string).
    /// @return nullopt as parse does: not tcp, ssl or ws, no host, or a port outside 1..65535.
    static std::optional<router_address> from_endpoint(const protocol::endpoint& e);
};

}  // namespace moraine::client
