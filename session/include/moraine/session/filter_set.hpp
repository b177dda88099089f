#pragma once
// Glacier2.Filter.*: what a session may reach (docs/glacier2.md §4, §7).
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::session {

/// Filter settings from the configuration (shared, immutable).
struct filter_config {
    std::vector<std::string> category_accept;         ///< Glacier2.Filter.Category.Accept
    int category_accept_user = 0;                     ///< .AcceptUser: 1 add user id, 2 add "_" + user id
    std::vector<protocol::identity> identity_accept;  ///< Glacier2.Filter.Identity.Accept (parsed)
    std::vector<std::string> adapter_id_accept;       ///< Glacier2.Filter.AdapterId.Accept
    std::string address_accept;                       ///< Glacier2.Filter.Address.Accept rule list
    std::string address_reject;                       ///< Glacier2.Filter.Address.Reject rule list
    std::size_t proxy_size_max = 0;                   ///< Glacier2.Filter.ProxySizeMax, 0 = none
};

/// Checks an `address[:port]` rule list's syntax (`*`, `[a,b]`, `[a-b]` in address; number or
/// `[...]` group for the port). @throws std::invalid_argument with the reason ("expected number"...).
void validate_address_rules(std::string_view rules);

/// A session's filters: built from the config at session creation, then edited by
/// SessionControl (categories/adapterIds/identities add/remove). Shard-local.
class filter_set {
public:
    filter_set() = default;
    /// @throws std::invalid_argument on a bad address rule.
    filter_set(const filter_config& cfg, std::string_view user_id);

    /** Request check (Glacier2 client blobject): if any of the category, identity or adapter-id
        accept lists is non-empty, the request must match at least one of them (category of
        `target`, `target` itself, or `adapter_id` of the routed proxy); else it is accepted.
        A rejected request gets ObjectNotExist with its own identity, facet and operation. */
    bool accepts_request(protocol::identity_view target, std::string_view adapter_id) const;

    /** addProxies check: every endpoint host[:port] must pass the address accept/reject rules,
        and proxy_to_string(p).size() <= proxy_size_max. A rejection closes the connection. */
    bool accepts_proxy(const protocol::proxy& p) const;

    // SessionControl edits (Glacier2::StringSet / IdentitySet); get returns the current list.
    std::vector<std::string>& categories() noexcept { return categories_; }
    std::vector<std::string>& adapter_ids() noexcept { return adapter_ids_; }
    std::vector<protocol::identity>& identities() noexcept { return identities_; }

private:
    std::vector<std::string> categories_;
    std::vector<std::string> adapter_ids_;
    std::vector<protocol::identity> identities_;
    std::string address_accept_;
    std::string address_reject_;
    std::size_t proxy_size_max_ = 0;
};

}  // namespace moraine::session
