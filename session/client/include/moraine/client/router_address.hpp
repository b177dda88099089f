#pragma once
// Where a router's client endpoint is, and whether it speaks TLS.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace moraine::client {

/// Host and port of a router's client endpoint (`Glacier2.Client.Endpoints`), tcp or ssl.
struct router_address {
    std::string host;  ///< a numeric address (no lookup) or a host name (resolved at connect)
    std::uint16_t port = 0;
    /// True for an `ssl` endpoint: the session runs over TLS with session_options::tls, and
    /// async_open fails with errc::tls_not_configured without it (it never falls back to tcp).
    bool tls = false;

    /// Parses an Ice endpoint string, e.g. `tcp -h 127.0.0.1 -p 4063` or `ssl -h 127.0.0.1 -p 4064`
    /// (other options such as `-t` are accepted and ignored); the first of a `:`-separated list is used.
    /// @return nullopt if it is not a tcp or ssl endpoint with a host and a port in 1..65535.
    static std::optional<router_address> parse(std::string_view endpoint);
};

}  // namespace moraine::client
