// Proxies in parameters (docs/ice-wire.md §9) and their string form.
#include <moraine/protocol/proxy.hpp>

#include <moraine/protocol/error.hpp>

#include "detail/escape.hpp"
#include "detail/string_args.hpp"

namespace moraine::protocol {
namespace {

constexpr std::uint8_t max_proxy_mode = static_cast<std::uint8_t>(proxy_mode::batch_datagram);
// Smallest endpoint on the wire: short type + 6-byte encapsulation header.
constexpr std::size_t min_endpoint_bytes = 8;

void read_endpoints(input_stream& in, proxy& p) {
    const std::int32_t count = in.read_size();
    if (!in.ok()) return;
    if (count == 0) {
        p.adapter_id = std::string(in.read_string());  // indirect proxy (empty = well-known)
        return;
    }
    // Check the count against the bytes left before reserving anything for it.
    if (static_cast<std::size_t>(count) > in.remaining() / min_endpoint_bytes) {
        in.fail(errc::out_of_bounds);
        return;
    }
    p.endpoints.reserve(static_cast<std::size_t>(count));
    for (std::int32_t i = 0; i < count && in.ok(); ++i) p.endpoints.push_back(read_endpoint(in));
}

std::string version_string(encoding_version v) {
    return std::to_string(v.major) + "." + std::to_string(v.minor);
}

std::optional<encoding_version> parse_version(std::string_view s) {
    const auto dot = s.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const auto major = detail::parse_int(s.substr(0, dot), 0, 255);
    const auto minor = detail::parse_int(s.substr(dot + 1), 0, 255);
    if (!major || !minor) return std::nullopt;
    return encoding_version{static_cast<std::uint8_t>(*major), static_cast<std::uint8_t>(*minor)};
}

const char* mode_option(std::uint8_t mode) noexcept {
    switch (mode) {
    case 1: return " -o";
    case 2: return " -O";
    case 3: return " -d";
    case 4: return " -D";
    default: return " -t";
    }
}

std::string escaped(std::string_view s) {
    std::string out;
    detail::append_escaped(out, s, "");
    return out;
}

// A cursor over a stringified proxy. Tokens end at a blank, ':' or '@' unless quoted.
struct proxy_scanner {
    std::string_view s;
    std::size_t i = 0;

    void skip_blanks() noexcept {
        while (i < s.size() && detail::is_blank(s[i])) ++i;
    }
    bool at_end() noexcept {
        skip_blanks();
        return i >= s.size();
    }
    /// The next token with its quotes removed (escapes kept for the caller to undo).
    std::optional<std::string_view> token() noexcept {
        skip_blanks();
        if (i >= s.size()) return std::nullopt;
        if (s[i] == '"') {
            std::size_t j = i + 1;
            while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
            if (j >= s.size()) return std::nullopt;  // unterminated quote
            auto t = s.substr(i + 1, j - i - 1);
            i = j + 1;
            return t;
        }
        const std::size_t start = i;
        while (i < s.size() && !detail::is_blank(s[i]) && s[i] != ':' && s[i] != '@') ++i;
        if (i == start) return std::nullopt;
        return s.substr(start, i - start);
    }
};

// Applies one `-x [arg]` option; false if unknown or its argument is bad.
bool apply_option(std::string_view opt, proxy_scanner& sc, proxy& p) {
    if (opt == "-t") p.mode = 0;
    else if (opt == "-o") p.mode = 1;
    else if (opt == "-O") p.mode = 2;
    else if (opt == "-d") p.mode = 3;
    else if (opt == "-D") p.mode = 4;
    else if (opt == "-s") p.secure = true;
    else if (opt == "-f" || opt == "-e" || opt == "-p") {
        const auto arg = sc.token();
        if (!arg) return false;
        if (opt == "-f") {
            auto facet = detail::unescape(*arg);
            if (!facet) return false;
            p.facet = std::move(*facet);
        } else {
            const auto v = parse_version(*arg);
            if (!v) return false;
            (opt == "-e" ? p.encoding : p.protocol_version) = *v;
        }
    } else {
        return false;
    }
    return true;
}

}  // namespace

proxy read_proxy(input_stream& in) {
    const identity_view id = in.read_identity();
    if (!in.ok() || id.name.empty()) return {};  // nil proxy: nothing follows the identity
    proxy p;
    p.id = identity::from(id);
    p.facet = std::string(in.read_facet());
    p.mode = in.read_byte();
    p.secure = in.read_bool();
    if (in.ok() && p.mode > max_proxy_mode) {
        in.fail(errc::bad_proxy);
        return {};
    }
    if (in.encoding() == encoding_1_0) {
        // 1.0 streams carry no versions; Ice gives such a proxy protocol 1.0 and encoding 1.0.
        p.protocol_version = {1, 0};
        p.encoding = encoding_1_0;
    } else {
        p.protocol_version.major = in.read_byte();
        p.protocol_version.minor = in.read_byte();
        p.encoding.major = in.read_byte();
        p.encoding.minor = in.read_byte();
    }
    read_endpoints(in, p);
    if (!in.ok()) return {};
    return p;
}

void write_proxy(output_stream& out, const proxy& p) {
    if (p.is_nil()) {
        out.write_identity({});
        return;
    }
    out.write_identity(p.id.view());
    out.write_facet(p.facet);
    out.write_byte(p.mode);
    out.write_bool(p.secure);
    if (out.encoding() != encoding_1_0) {
        out.write_byte(p.protocol_version.major);
        out.write_byte(p.protocol_version.minor);
        out.write_byte(p.encoding.major);
        out.write_byte(p.encoding.minor);
    }
    out.write_size(static_cast<std::int32_t>(p.endpoints.size()));
    if (p.endpoints.empty()) {
        out.write_string(p.adapter_id);
        return;
    }
    for (const endpoint& e : p.endpoints) write_endpoint(out, e);
}

// Appends piece by piece rather than `s += " -f " + piece`, which inserts the literal at the
// front of the temporary (shifting it) before copying it: g++ 12 at -O3 flags that insert with a
// bogus -Wrestrict (GCC bug 105329).
std::string proxy_to_string(const proxy& p) {
    if (p.is_nil()) return {};
    std::string s = detail::quote_if(identity_to_string(p.id.view()), " :@");
    if (!p.facet.empty()) s.append(" -f ").append(detail::quote_if(escaped(p.facet), " :@"));
    s += mode_option(p.mode);
    if (p.secure) s += " -s";
    if (p.protocol_version != encoding_version{1, 0}) s.append(" -p ").append(version_string(p.protocol_version));
    s.append(" -e ").append(version_string(p.encoding));  // Ice always prints the encoding
    if (!p.endpoints.empty()) {
        for (const endpoint& e : p.endpoints) s.append(":").append(endpoint_to_string(e));
    } else if (!p.adapter_id.empty()) {
        s.append(" @ ").append(detail::quote_if(escaped(p.adapter_id), " :@"));
    }
    return s;
}

std::optional<proxy> proxy_from_string(std::string_view s, std::string_view default_host) {
    proxy_scanner sc{s};
    const auto ident_token = sc.token();
    if (!ident_token) return std::nullopt;
    auto id = identity_from_string(*ident_token);
    if (!id) return std::nullopt;
    proxy p;
    p.id = std::move(*id);
    while (!sc.at_end()) {
        const char c = s[sc.i];
        if (c == ':') {
            auto eps = endpoints_from_string(s.substr(sc.i + 1), default_host);
            if (!eps) return std::nullopt;
            p.endpoints = std::move(*eps);
            return p;
        }
        if (c == '@') {
            ++sc.i;
            const auto adapter = sc.token();
            if (!adapter || !sc.at_end()) return std::nullopt;
            auto unescaped = detail::unescape(*adapter);
            if (!unescaped || unescaped->empty()) return std::nullopt;
            p.adapter_id = std::move(*unescaped);
            return p;
        }
        if (c != '-') return std::nullopt;
        const auto opt = sc.token();
        if (!opt || !apply_option(*opt, sc, p)) return std::nullopt;
    }
    return p;
}

}  // namespace moraine::protocol
