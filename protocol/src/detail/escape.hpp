#pragma once
// Ice's string escaping for stringified identities, facets and adapter ids (Ice 3.7,
// ToStringMode::Unicode: UTF-8 passes through, other controls become \u00xx).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace moraine::protocol::detail {

inline constexpr char hex_digits[] = "0123456789abcdef";

/// Appends `s` escaped as Ice 3.7 escapeString does in Unicode mode; each character of
/// `specials` is also backslash-escaped (`/` for identity components).
inline void append_escaped(std::string& out, std::string_view s, std::string_view specials) {
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (ch) {
        case '\\': out += "\\\\"; break;
        case '\'': out += "\\'"; break;
        case '"': out += "\\\""; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (specials.find(ch) != std::string_view::npos) {
                out += '\\';
                out += ch;
            } else if (c < 32 || c == 127) {  // other controls: \u00xx; UTF-8 above 127 passes through (Unicode mode)
                out += "\\u00";
                out += hex_digits[c >> 4];
                out += hex_digits[c & 0xF];
            } else {
                out += ch;
            }
        }
    }
}

inline int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// Reads exactly `n` hex digits at s[i..]; -1 if they are not all there.
inline long read_hex(std::string_view s, std::size_t& i, std::size_t n) noexcept {
    if (s.size() - i < n) return -1;
    long v = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const int d = hex_value(s[i++]);
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

// Decodes one backslash escape starting after the backslash at s[i]; false on a bad escape.
inline bool unescape_one(std::string_view s, std::size_t& i, std::string& out) {
    if (i >= s.size()) return false;
    const char c = s[i++];
    switch (c) {
    case '\\': case '\'': case '"': case '?': case '/': out += c; return true;
    case 'a': out += '\a'; return true;
    case 'b': out += '\b'; return true;
    case 'f': out += '\f'; return true;
    case 'n': out += '\n'; return true;
    case 'r': out += '\r'; return true;
    case 't': out += '\t'; return true;
    case 'v': out += '\v'; return true;
    case 'u':
    case 'U': {
        const long cp = read_hex(s, i, c == 'u' ? 4 : 8);
        if (cp < 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        append_utf8(out, static_cast<std::uint32_t>(cp));
        return true;
    }
    case 'x': {  // one or two hex digits: a raw byte
        int v = 0, digits = 0;
        while (digits < 2 && i < s.size() && hex_value(s[i]) >= 0) v = v * 16 + hex_value(s[i++]), ++digits;
        if (digits == 0) return false;
        out += static_cast<char>(v);
        return true;
    }
    default:
        if (c >= '0' && c <= '7') {  // up to three octal digits: a raw byte
            int v = c - '0', digits = 1;
            while (digits < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7') v = v * 8 + (s[i++] - '0'), ++digits;
            if (v > 255) return false;
            out += static_cast<char>(v);
            return true;
        }
        return false;
    }
}

/// Undoes Ice escapes (\\ \' \" \? \/ \a \b \f \n \r \t \v \uXXXX \UXXXXXXXX \xHH \ooo).
/// @return nullopt on a bad escape or an unescaped control character.
inline std::optional<std::string> unescape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\\') {
            ++i;
            if (!unescape_one(s, i, out)) return std::nullopt;
        } else if (c < 32 || c == 127) {
            return std::nullopt;  // control characters must be escaped
        } else {
            out += s[i++];
        }
    }
    return out;
}

}  // namespace moraine::protocol::detail
