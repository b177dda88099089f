#include <moraine/client/router_address.hpp>

#include <moraine/protocol/endpoint.hpp>

namespace moraine::client {

std::optional<router_address> router_address::parse(std::string_view endpoint) {
    const auto first = endpoint.substr(0, endpoint.find(':'));
    const auto e = protocol::endpoint_from_string(first);
    if (!e) return std::nullopt;
    return from_endpoint(*e);
}

std::optional<router_address> router_address::from_endpoint(const protocol::endpoint& e) {
    if (e.host.empty() || e.port <= 0 || e.port > 65535) return std::nullopt;
    if (!e.stream()) return std::nullopt;  // tcp, ssl, ws, wss
    router_address a{e.host, static_cast<std::uint16_t>(e.port), e.secure()};
    a.websocket = e.websocket();
    if (a.websocket && !e.resource.empty()) a.resource = e.resource;
    return a;
}

}  // namespace moraine::client
