#pragma once
// Documented Glacier2 3.7 property keys that Moraine accepts without acting on them, and those it
// refuses (docs/properties.md lists every key and what Moraine does with it). Private to
// moraine::router (config_ice.cpp).
#include <optional>
#include <string>
#include <string_view>

namespace moraine::router::detail {

/** Why a documented Glacier2.* key set to `value` has no effect in Moraine, for the start-up
    warning `<file>:<line>: <key>: accepted, has no effect in Moraine (<why>)`; nullopt when
    Moraine honours the key (or the value), or when it is not a documented key. */
std::optional<std::string> glacier2_noop_reason(std::string_view key, std::string_view value);

/** Why Moraine refuses to start with `key` set: a security setting it would otherwise ignore
    silently (glacier2router's removed Glacier2.AllowCategories filter). nullopt = not refused. */
std::optional<std::string> glacier2_refusal(std::string_view key);

}  // namespace moraine::router::detail
