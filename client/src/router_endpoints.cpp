#include <moraine/client/router_endpoints.hpp>

#include <moraine/protocol/endpoint.hpp>

namespace moraine::client {

std::optional<router_endpoints> parse_router_endpoints(std::string_view endpoints) {
    // protocol splits the list as Ice does (quotes protect IPv6 hosts); each part is then held
    // to what the library can connect to, so a bad one fails the whole list.
    const auto parsed = protocol::endpoints_from_string(endpoints);
    if (!parsed) return std::nullopt;
    router_endpoints out;
    out.reserve(parsed->size());
    for (const auto& e : *parsed) {
        auto a = router_address::from_endpoint(e);
        if (!a) return std::nullopt;
        out.push_back(std::move(*a));
    }
    return out;
}

}  // namespace moraine::client
