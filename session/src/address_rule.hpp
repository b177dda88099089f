#pragma once
// Glacier2.Filter.Address.Accept / .Reject rules (docs/glacier2.md §7): parsed form and matching.
// Private to moraine::session; filter_set and validate_address_rules are the public face.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moraine::session::detail {

/// The integers named by a group such as `1,3,10-20` (inclusive ranges; a single value is [v, v]).
struct number_set {
    std::vector<std::pair<long, long>> ranges;
    bool contains(long value) const noexcept;
};

/// One piece of an address pattern: a literal run, a `*`, or a `[...]` group matching one number.
struct address_piece {
    enum class kind { literal, wildcard, number };
    kind what = kind::literal;
    std::string text;    ///< literal only, lower-cased (host names compare case-insensitively)
    number_set numbers;  ///< number only
};

/// One `address[:port]` rule.
struct address_rule {
    std::vector<address_piece> host;
    std::optional<number_set> port;  ///< nullopt = any port

    /** True if `host` (as in the endpoint, any case) and `port` fit the rule. The pattern must
        cover the whole host; a group matches a whole run of digits. An empty host (an endpoint
        without `-h`, or an opaque one) matches no rule, as in Glacier2.
        @note at most O(pieces × host.size()²): backtracking over `*` is memoised, because the
              host comes from an untrusted client. */
    bool matches(std::string_view host, std::int32_t port) const;
};

/** Parses a space-separated rule list. Whitespace only = no rules.
    @throws std::invalid_argument "rule 'R': reason", reason one of "expected number",
            "unclosed group", "empty group", "wildcards not permitted in groups", ... */
std::vector<address_rule> parse_address_rules(std::string_view rules);

}  // namespace moraine::session::detail
