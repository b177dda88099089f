#include <moraine/icestorm_bridge/published_aliases.hpp>

#include <algorithm>

namespace moraine::icestorm_bridge {

namespace {

bool unspecified(const std::string& host) { return host.empty() || host == "*" || host == "0.0.0.0" || host == "::"; }

bool loopback(const std::string& host) { return host.starts_with("127.") || host == "::1" || host == "localhost"; }

/// The bound endpoint `published` should reach: same transport, a fixed port, loopback first.
const protocol::endpoint* target_for(const protocol::endpoint& published, const std::vector<protocol::endpoint>& bound) {
    const protocol::endpoint* best = nullptr;
    for (const auto& b : bound) {
        if (b.type != published.type || b.port == 0) continue;
        if (!best || (loopback(b.host) && !loopback(best->host))) best = &b;
    }
    return best;
}

/// Adds an alias for each of `published` not among `bound`.
void add_aliases(const std::vector<protocol::endpoint>& published, const std::vector<protocol::endpoint>& bound,
                 std::vector<net::endpoint_alias>& out) {
    for (const auto& p : published) {
        // The same comparison as backend_pool's aliasing, so that an alias never shadows a bound address.
        const bool is_bound = std::any_of(bound.begin(), bound.end(),
                                          [&](const protocol::endpoint& b) { return protocol::same_address(b, p); });
        const auto* target = is_bound ? nullptr : target_for(p, bound);
        if (!target) continue;
        net::endpoint_alias a{p, *target};
        if (unspecified(a.bound.host)) a.bound.host = target->host == "::" ? "::1" : "127.0.0.1";
        out.push_back(std::move(a));
    }
}

}  // namespace

std::vector<net::endpoint_alias> published_aliases(const topics_config& cfg) {
    std::vector<net::endpoint_alias> out;
    if (!cfg.enabled) return out;
    add_aliases(cfg.topic_manager_published_endpoints, cfg.topic_manager_endpoints, out);
    add_aliases(cfg.publish_published_endpoints, cfg.publish_endpoints, out);
    return out;
}

}  // namespace moraine::icestorm_bridge
