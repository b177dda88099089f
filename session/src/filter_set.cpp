// Glacier2.Filter.*: which requests and which added proxies a session may use (docs/glacier2.md §4, §7).
#include <moraine/session/filter_set.hpp>

#include "address_rule.hpp"

#include <algorithm>

namespace moraine::session {
namespace {

// No legal host name is longer; Glacier2 refuses such endpoints whenever any rule is set, which
// also bounds the matcher's work on hostile input.
constexpr std::size_t max_host_size = 255;

// Endpoint types that carry a host and port (tcp, ssl, udp, ws, wss); the rest are opaque.
bool has_address(const protocol::endpoint& e) noexcept {
    return e.type >= static_cast<std::int16_t>(protocol::endpoint_type::tcp) &&
           e.type <= static_cast<std::int16_t>(protocol::endpoint_type::wss);
}

bool any_rule_matches(const std::vector<detail::address_rule>& rules, const protocol::endpoint& e) {
    if (!has_address(e)) return false;
    return std::any_of(rules.begin(), rules.end(), [&](const auto& r) { return r.matches(e.host, e.port); });
}

bool has_oversized_host(const protocol::proxy& p) {
    return std::any_of(p.endpoints.begin(), p.endpoints.end(),
                       [](const auto& e) { return e.host.size() > max_host_size; });
}

template <class T, class U>
bool contains(const std::vector<T>& list, const U& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

void validate_address_rules(std::string_view rules) {
    (void)detail::parse_address_rules(rules);
}

filter_set::filter_set(const filter_config& cfg, std::string_view user_id)
    : categories_(cfg.category_accept),
      adapter_ids_(cfg.adapter_id_accept),
      identities_(cfg.identity_accept),
      address_accept_(cfg.address_accept),
      address_reject_(cfg.address_reject),
      proxy_size_max_(cfg.proxy_size_max) {
    validate_address_rules(address_accept_);
    validate_address_rules(address_reject_);
    // Glacier2.Filter.Category.AcceptUser: lets a session reach its user's own objects. A session
    // without a user id (none is known) gets nothing added.
    if (user_id.empty()) return;
    if (cfg.category_accept_user == 1) categories_.emplace_back(user_id);
    if (cfg.category_accept_user == 2) categories_.push_back("_" + std::string(user_id));
}

bool filter_set::accepts_request(protocol::identity_view target, std::string_view adapter_id) const {
    // Each non-empty list is a way in; a request needs one of them, none if no list is set.
    bool filtered = false;
    if (!categories_.empty()) {
        filtered = true;
        if (contains(categories_, target.category)) return true;
    }
    if (!identities_.empty()) {
        filtered = true;
        if (std::any_of(identities_.begin(), identities_.end(), [&](const auto& id) { return id.view() == target; }))
            return true;
    }
    // The adapter-id list only judges proxies that carry an adapter id: a direct proxy is not
    // filtered by it (glacier2router 3.7.8, observed: filter_adapter_id_direct_proxy).
    if (!adapter_ids_.empty() && !adapter_id.empty()) {
        filtered = true;
        if (contains(adapter_ids_, adapter_id)) return true;
    }
    return !filtered;
}

bool filter_set::accepts_proxy(const protocol::proxy& p) const {
    // Parsed per call rather than kept: addProxies runs once per new identity, and the rules are
    // short, so this stays cheap next to the proxy's own unmarshalling.
    const auto accept = detail::parse_address_rules(address_accept_);
    const auto reject = detail::parse_address_rules(address_reject_);
    if (accept.empty() && reject.empty() && proxy_size_max_ == 0) return true;

    if (has_oversized_host(p)) return false;
    if (proxy_size_max_ != 0 && protocol::proxy_to_string(p).size() > proxy_size_max_) return false;
    // Each endpoint is a place the router would connect to, so each one must pass on its own:
    // accepted by some Accept rule (when there are any) and matched by no Reject rule. A proxy
    // without endpoints (indirect or well-known) matches no rule.
    if (p.endpoints.empty()) return accept.empty();
    return std::all_of(p.endpoints.begin(), p.endpoints.end(), [&](const protocol::endpoint& e) {
        return (accept.empty() || any_rule_matches(accept, e)) && !any_rule_matches(reject, e);
    });
}

}  // namespace moraine::session
