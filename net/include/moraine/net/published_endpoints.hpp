#pragma once
// What an endpoint bound on a wildcard address publishes: the machine's addresses.
#include <moraine/protocol/endpoint.hpp>

#include <string>
#include <vector>

namespace moraine::net {

/// True for a host that means "every interface": "", "*", "0.0.0.0", "::".
bool is_wildcard_host(const std::string& host) noexcept;

/** The endpoints to put in proxies for endpoints that were bound as `bound` (ports resolved):
    each one whose host is a wildcard becomes one endpoint per address of this machine, as an
    Ice object adapter publishes them (IPv4 non-loopback addresses for 0.0.0.0, plus IPv6 global
    ones for "*", "" and "::"; loopback only when the machine has nothing else). Others are kept.
    `addresses` is the machine's address list (local_addresses()), a parameter for tests. */
std::vector<protocol::endpoint> published_endpoints(const std::vector<protocol::endpoint>& bound,
                                                    const std::vector<std::string>& addresses);
std::vector<protocol::endpoint> published_endpoints(const std::vector<protocol::endpoint>& bound);

/// This machine's interface addresses (getifaddrs): IPv4 and IPv6, loopback included, no duplicates.
std::vector<std::string> local_addresses();

}  // namespace moraine::net
