#pragma once
// Ice 3.7 property files (`key=value`), as read by an Ice communicator (glacier2router's): the
// parser, and a reader with typed getters that every service's configuration uses.
#include <moraine/net/config_values.hpp>

#include <charconv>
#include <climits>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::net {

/// A property's value and the line that set it (for messages).
struct property_value {
    std::string value;
    std::size_t line = 0;
    std::string origin;  ///< where it was set when not in the file, e.g. "command line"
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

/// A parsed property file with typed getters whose errors (config_error) name file, line and key.
class property_file {
public:
    property_file(std::string file, property_map props) : file_(std::move(file)), props_(std::move(props)) {}

    const std::string& file() const noexcept { return file_; }
    const property_map& all() const noexcept { return props_; }

    const std::string* find(std::string_view key) const {
        auto it = props_.find(key);
        return it == props_.end() ? nullptr : &it->second.value;
    }

    /// "FILE:LINE" of the key, "FILE" when it is not set, or its origin ("command line").
    std::string at(std::string_view key) const {
        auto it = props_.find(key);
        if (it != props_.end() && !it->second.origin.empty()) return it->second.origin;
        return where(file_, it == props_.end() ? 0 : it->second.line);
    }

    /// Ice's getPropertyAsInt, but a value that is not an integer is an error rather than a
    /// warning plus the default: the router must not start on a setting it misread.
    template <class T>
    void read_int(std::string_view key, long long min, long long max, T& out) const {
        const std::string* v = find(key);
        if (!v) return;
        std::string_view digits = *v;
        if (digits.starts_with('+')) digits.remove_prefix(1);
        long long n = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (ec != std::errc{} || end != digits.data() + digits.size())
            throw config_error(at(key), std::string(key), "expected an integer, got '" + *v + "'");
        if (n < min || n > max)
            throw config_error(at(key), std::string(key),
                               std::to_string(n) + " is out of range [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "]");
        out = static_cast<T>(n);
    }

    /// Ice booleans are integers: 0 is false, anything else true.
    void read_bool(std::string_view key, bool& out) const {
        long long n = out ? 1 : 0;
        read_int(key, LLONG_MIN, LLONG_MAX, n);
        out = n != 0;
    }

    /// Ice.Default.Host: the host of endpoints and proxies written without `-h` ("" = unset).
    std::string_view default_host() const {
        const std::string* v = find("Ice.Default.Host");
        return v ? std::string_view(*v) : std::string_view();
    }

    /// An endpoint list as an Ice object adapter reads it (no `-p`: port 0; no `-h`: default_host()).
    std::vector<protocol::endpoint> endpoints(std::string_view key) const {
        const std::string* v = find(key);
        return v ? parse_endpoints(*v, at(key), std::string(key), default_host()) : std::vector<protocol::endpoint>{};
    }

    std::vector<std::string> words(std::string_view key) const {
        const std::string* v = find(key);
        return v ? split_words(*v, at(key), std::string(key)) : std::vector<std::string>{};
    }

private:
    std::string file_;
    property_map props_;
};

}  // namespace moraine::net
