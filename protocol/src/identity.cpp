// Stringified identities (Ice 3.7 identityToString / stringToIdentity, ToStringMode::Unicode).
#include <moraine/protocol/identity.hpp>

#include "detail/escape.hpp"

namespace moraine::protocol {

std::string identity_to_string(identity_view id) {
    std::string out;
    out.reserve(id.name.size() + id.category.size() + 1);
    if (!id.category.empty()) {
        detail::append_escaped(out, id.category, "/");
        out += '/';
    }
    detail::append_escaped(out, id.name, "/");
    return out;
}

std::optional<identity> identity_from_string(std::string_view s) {
    // Find the unescaped slashes: the first splits category from name, a second is an error.
    std::size_t slash = std::string_view::npos;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\') {
            ++i;  // skip the escaped character
        } else if (s[i] == '/') {
            if (slash != std::string_view::npos) return std::nullopt;
            slash = i;
        }
    }
    identity id;
    if (slash == std::string_view::npos) {
        auto name = detail::unescape(s);
        if (!name) return std::nullopt;
        id.name = std::move(*name);
    } else {
        auto category = detail::unescape(s.substr(0, slash));
        auto name = detail::unescape(s.substr(slash + 1));
        if (!category || !name) return std::nullopt;
        id.category = std::move(*category);
        id.name = std::move(*name);
    }
    if (id.name.empty()) return std::nullopt;
    return id;
}

std::size_t identity_hash::operator()(identity_view v) const noexcept {
    // Combine as boost::hash_combine does; the two fields must not commute ("a/b" != "b/a").
    std::size_t h = std::hash<std::string_view>{}(v.name);
    h ^= std::hash<std::string_view>{}(v.category) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

}  // namespace moraine::protocol
