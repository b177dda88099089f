#pragma once
// Whitespace/quote splitting for stringified endpoints and proxies (Ice's string syntax:
// arguments separated by blanks, a "..." or '...' argument may contain blanks and ':').
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::protocol::detail {

inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// Splits `s` into arguments; quotes are removed, `\"` inside "..." keeps the quote.
/// @return nullopt on an unterminated quote.
inline std::optional<std::vector<std::string>> split_args(std::string_view s) {
    std::vector<std::string> args;
    std::size_t i = 0;
    while (i < s.size()) {
        if (is_blank(s[i])) {
            ++i;
            continue;
        }
        std::string arg;
        while (i < s.size() && !is_blank(s[i])) {
            const char c = s[i];
            if (c == '"' || c == '\'') {
                std::size_t j = i + 1;
                for (; j < s.size() && s[j] != c; ++j) {
                    if (s[j] == '\\' && j + 1 < s.size() && s[j + 1] == c) ++j;  // escaped quote
                    arg += s[j];
                }
                if (j >= s.size()) return std::nullopt;
                i = j + 1;
            } else {
                arg += c;
                ++i;
            }
        }
        args.push_back(std::move(arg));
    }
    return args;
}

/// Index of the first `sep` in `s` at or after `from` that is outside quotes; npos if none.
inline std::size_t find_unquoted(std::string_view s, char sep, std::size_t from = 0) noexcept {
    char quote = 0;
    for (std::size_t i = from; i < s.size(); ++i) {
        const char c = s[i];
        if (quote) {
            if (c == '\\' && i + 1 < s.size()) ++i;
            else if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == sep) {
            return i;
        }
    }
    return std::string_view::npos;
}

/// Parses a whole decimal integer in [lo, hi]; nullopt otherwise.
inline std::optional<long long> parse_int(std::string_view s, long long lo, long long hi) noexcept {
    if (s.empty() || s.size() > 18) return std::nullopt;  // 18 digits cannot overflow
    std::size_t i = 0;
    bool negative = false;
    if (s[0] == '-' || s[0] == '+') {
        negative = s[0] == '-';
        if (++i == s.size()) return std::nullopt;
    }
    long long v = 0;
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9') return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    if (negative) v = -v;
    if (v < lo || v > hi) return std::nullopt;
    return v;
}

/// Quotes `s` with "..." when it contains any of `specials` (Ice uses " :@" for
/// identities, facets and adapter ids, ":" for hosts and ws resources).
inline std::string quote_if(std::string s, std::string_view specials) {
    bool needs = false;
    for (char c : s)
        if (specials.find(c) != std::string_view::npos) needs = true;
    return needs ? "\"" + s + "\"" : s;
}

}  // namespace moraine::protocol::detail
