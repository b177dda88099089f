#include <moraine/client/router_address.hpp>

#include <moraine/protocol/endpoint.hpp>

namespace moraine::client {

std::optional<router_address> router_address::parse(std::string_view endpoint) {
    const auto first = endpoint.substr(0, endpoint.find(':'));
    const auto e = protocol::endpoint_from_string(first);
    if (!e || e->host.empty() || e->port <= 0 || e->port > 65535) return std::nullopt;
    const auto type = static_cast<protocol::endpoint_type>(e->type);
    if (type != protocol::endpoint_type::tcp && type != protocol::endpoint_type::ssl) return std::nullopt;
    return router_address{e->host, static_cast<std::uint16_t>(e->port), type == protocol::endpoint_type::ssl};
}

}  // namespace moraine::client
