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

/// Host and port of a router's client endpoint (`Glacier2.Client.Endpoints`): tcp, ssl, ws or wss.
struct router_address {
    std::string host;  ///< a numeric address (no lookup) or a host name (resolved at connect)
    std::uint16_t port = 0;
    /// True for an `ssl` or `wss` endpoint: the session runs over TLS with session_options::tls,
    /// and async_open fails with errc::tls_not_configured without it (it never falls back to
    /// tcp or ws).
    bool tls = false;
    /// True for a `ws` or `wss` endpoint: Ice messages in WebSocket binary frames (subprotocol
    /// ice.zeroc.com, one message per frame), upgraded at `resource`; with `tls` too (wss), the
    /// upgrade and the frames go over TLS.
    bool websocket = false;
    std::string resource = "/";

    /// Parses an Ice endpoint string, e.g. `tcp -h 127.0.0.1 -p 4063`, `ssl -h 127.0.0.1 -p 4064`
    /// or `wss -h 127.0.0.1 -p 4066 -r /ice` (other options such as `-t` are accepted and
    /// ignored). Of a `:`-separated list only the first is read: parse_router_endpoints
    /// (router_endpoints.hpp) keeps them all, and a session opened with that list fails over
    /// along it.
    /// @return nullopt if it is not a tcp, ssl, ws or wss endpoint with a host and a port in 1..65535.
    static std::optional<router_address> parse(std::string_view endpoint);

    /// The address of an endpoint already parsed (protocol::endpoint_from_string).
    /// @return nullopt as parse does: not tcp, ssl, ws or wss, no host, or a port outside 1..65535.
    static std::optional<router_address> from_endpoint(const protocol::endpoint& e);
};

}  // namespace moraine::client
