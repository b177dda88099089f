#pragma once
// Ice 3.7 property files (`key=value`), as read by glacier2router's communicator. Private to
// moraine::router; config_ice.cpp maps the properties onto router::config.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::router::detail {

/// A property's value and the line that set it (for messages).
struct property_value {
    std::string value;
    std::size_t line = 0;
};

using property_map = std::map<std::string, property_value, std::less<>>;

/** Parses property-file text the way Ice does: `#` starts a comment; key and value are trimmed;
    `\#`, `\=` and `\\` stand for the character itself, `\ ` for a space that is kept even at the
    ends of a value, and any other backslash is kept as is. The first unescaped `=` ends the key.
    A later line overrides an earlier one, and an empty value unsets the key (Ice's setProperty).
    A line with a key but no `=` (or `=` with no key) is skipped with a "FILE:LINE: ..." entry in
    `warnings`, where Ice logs a warning. */
property_map parse_properties(std::string_view text, const std::string& origin, std::vector<std::string>& warnings);

/// Reads and parses `path`. @throws config_error(path, "open", reason) if it cannot be read.
property_map read_property_file(const std::filesystem::path& path, std::vector<std::string>& warnings);

}  // namespace moraine::router::detail
