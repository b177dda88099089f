#pragma once
// Ice::Identity (docs/ice-wire.md §1): name then category, and its stringified form.
#include <compare>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace moraine::protocol {

/// A borrowed identity; the lender is the message or object the strings point into.
struct identity_view {
    std::string_view name;
    std::string_view category;
    friend bool operator==(const identity_view&, const identity_view&) = default;
};

/// An owned identity. Ordered and hashable; compared on name and category exactly.
struct identity {
    std::string name;
    std::string category;
    identity_view view() const noexcept { return {name, category}; }
    static identity from(identity_view v) { return {std::string(v.name), std::string(v.category)}; }
    friend bool operator==(const identity&, const identity&) = default;
    friend auto operator<=>(const identity&, const identity&) = default;
};

/// Stringifies as Ice's identityToString does (mode Unicode): `category/name`, or `name` when the
/// category is empty; `/`, `\`, `'`, `"` and control characters are backslash-escaped
/// (e.g. `\/`, `\\`, `\"`, `\n`, `\t`, `\u00xx`).
std::string identity_to_string(identity_view id);

/// Parses the stringified form (inverse of identity_to_string; an unescaped `/` splits
/// category from name). @return nullopt on a bad escape, more than one unescaped `/`, or empty name.
std::optional<identity> identity_from_string(std::string_view s);

/// Hash over name and category, for unordered containers.
struct identity_hash {
    using is_transparent = void;
    std::size_t operator()(identity_view v) const noexcept;
    std::size_t operator()(const identity& v) const noexcept { return (*this)(v.view()); }
};
/// Transparent equality to pair with identity_hash.
struct identity_equal {
    using is_transparent = void;
    bool operator()(identity_view a, identity_view b) const noexcept { return a == b; }
    bool operator()(const identity& a, identity_view b) const noexcept { return a.view() == b; }
    bool operator()(identity_view a, const identity& b) const noexcept { return a == b.view(); }
    bool operator()(const identity& a, const identity& b) const noexcept { return a == b; }
};

}  // namespace moraine::protocol
