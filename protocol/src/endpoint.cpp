// Endpoints: wire form inside proxies (docs/ice-wire.md §9) and Ice's string form.
#include <moraine/protocol/endpoint.hpp>

#include <moraine/protocol/error.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include "detail/string_args.hpp"

#include <boost/beast/core/detail/base64.hpp>

#include <algorithm>
#include <cctype>

namespace moraine::protocol {
namespace {

bool is_known(std::int16_t type) noexcept { return type >= 1 && type <= 5; }
bool is_udp(std::int16_t type) noexcept { return type == static_cast<std::int16_t>(endpoint_type::udp); }
bool is_ws(std::int16_t type) noexcept {
    return type == static_cast<std::int16_t>(endpoint_type::ws) || type == static_cast<std::int16_t>(endpoint_type::wss);
}

// The body of a tcp/ssl/udp/ws/wss endpoint encapsulation of version `enc`.
void read_known_body(input_stream& in, encoding_version enc, endpoint& e) {
    e.host = std::string(in.read_string());
    e.port = in.read_int();
    if (is_udp(e.type)) {
        // A 1.0 udp body carries protocol 1.0 + encoding 1.0; they are fixed, so skip them.
        if (enc == encoding_1_0) (void)in.read_bytes(4);
        e.timeout = -1;
    } else {
        e.timeout = in.read_int();
    }
    e.compress = in.read_bool();
    if (is_ws(e.type)) e.resource = std::string(in.read_string());
}

void write_known_body(output_stream& out, const endpoint& e) {
    out.write_string(e.host);
    out.write_int(e.port);
    if (is_udp(e.type)) {
        if (out.encoding() == encoding_1_0) out.write_bytes(std::array{std::byte{1}, std::byte{0}, std::byte{1}, std::byte{0}});
    } else {
        out.write_int(e.timeout);
    }
    out.write_bool(e.compress);
    if (is_ws(e.type)) out.write_string(e.resource);
}

std::optional<std::int16_t> type_from_name(std::string_view name) noexcept {
    if (name == "tcp" || name == "default") return 1;
    if (name == "ssl") return 2;
    if (name == "udp") return 3;
    if (name == "ws") return 4;
    if (name == "wss") return 5;
    return std::nullopt;
}

const char* type_name(std::int16_t type) noexcept {
    switch (type) {
    case 1: return "tcp";
    case 2: return "ssl";
    case 3: return "udp";
    case 4: return "ws";
    case 5: return "wss";
    default: return "opaque";
    }
}

std::string opaque_to_string(const endpoint& e) {
    std::string b64(boost::beast::detail::base64::encoded_size(e.opaque.size()), '\0');
    b64.resize(boost::beast::detail::base64::encode(b64.data(), e.opaque.data(), e.opaque.size()));
    return "opaque -t " + std::to_string(e.type) + " -e " + std::to_string(e.encoding.major) + "." +
           std::to_string(e.encoding.minor) + " -v " + b64;
}

}  // namespace

endpoint read_endpoint(input_stream& in) {
    endpoint e;
    e.type = in.read_short();
    const std::int32_t size = in.read_int();
    if (!in.ok()) return {};
    if (size < 6) {
        in.fail(errc::bad_proxy);
        return {};
    }
    e.encoding.major = in.read_byte();
    e.encoding.minor = in.read_byte();
    const byte_view body = in.read_bytes(static_cast<std::size_t>(size) - 6);  // bounds-checked
    if (!in.ok()) return {};
    if (!is_known(e.type)) {
        // Unknown transport: keep the body so the proxy can be forwarded unchanged.
        e.opaque.assign(body.begin(), body.end());
        e.timeout = -1;
        return e;
    }
    if (e.encoding != encoding_1_0 && e.encoding != encoding_1_1) {
        in.fail(errc::unsupported_encoding);
        return {};
    }
    input_stream body_in(body, e.encoding);
    read_known_body(body_in, e.encoding, e);
    if (!body_in.ok() || body_in.remaining() != 0) {
        in.fail(errc::bad_proxy);
        return {};
    }
    return e;
}

void write_endpoint(output_stream& out, const endpoint& e) {
    out.write_short(e.type);
    if (!is_known(e.type)) {
        out.write_int(static_cast<std::int32_t>(6 + e.opaque.size()));
        out.write_byte(e.encoding.major);
        out.write_byte(e.encoding.minor);
        out.write_bytes(e.opaque);
        return;
    }
    const std::size_t start = out.start_encapsulation(out.encoding());
    write_known_body(out, e);
    out.end_encapsulation(start);
}

std::optional<endpoint> endpoint_from_string(std::string_view s, std::string_view default_host) {
    const auto args = detail::split_args(s);
    if (!args || args->empty()) return std::nullopt;
    const auto type = type_from_name((*args)[0]);
    if (!type) return std::nullopt;
    endpoint e;
    e.type = *type;
    if (is_udp(e.type)) e.timeout = -1;
    e.host = default_host == "*" ? std::string() : std::string(default_host);
    for (std::size_t i = 1; i < args->size(); ++i) {
        const std::string& opt = (*args)[i];
        const bool has_arg = i + 1 < args->size() && (*args)[i + 1].rfind('-', 0) != 0;
        if (opt == "-z") {
            e.compress = true;
            continue;
        }
        if (!has_arg) return std::nullopt;  // every other option takes an argument
        if (opt == "-h") {
            const std::string& h = (*args)[++i];
            e.host = h == "*" ? std::string() : h;
        } else if (opt == "-p") {
            const auto port = detail::parse_int((*args)[++i], 0, 65535);
            if (!port) return std::nullopt;
            e.port = static_cast<std::int32_t>(*port);
        } else if (opt == "-t" && !is_udp(e.type)) {
            const std::string& t = (*args)[++i];
            if (t == "infinite") {
                e.timeout = -1;
            } else {
                const auto ms = detail::parse_int(t, 1, INT32_MAX);  // Ice rejects 0 and negatives
                if (!ms) return std::nullopt;
                e.timeout = static_cast<std::int32_t>(*ms);
            }
        } else if (opt == "-r" && is_ws(e.type)) {
            e.resource = (*args)[++i];
        } else {
            return std::nullopt;
        }
    }
    // Ice's default resource: a ws endpoint published without -r must still give clients a
    // request target ("GET / HTTP/1.1"); an empty one is not a valid HTTP request line.
    if (is_ws(e.type) && e.resource.empty()) e.resource = "/";
    return e;
}

std::optional<std::vector<endpoint>> endpoints_from_string(std::string_view s, std::string_view default_host) {
    std::vector<endpoint> out;
    std::size_t from = 0;
    while (true) {
        const std::size_t colon = detail::find_unquoted(s, ':', from);
        auto e = endpoint_from_string(s.substr(from, colon == std::string_view::npos ? std::string_view::npos : colon - from),
                                      default_host);
        if (!e) return std::nullopt;
        out.push_back(std::move(*e));
        if (colon == std::string_view::npos) break;
        from = colon + 1;
    }
    return out;
}

std::string endpoint_to_string(const endpoint& e) {
    if (!is_known(e.type)) return opaque_to_string(e);
    std::string s = type_name(e.type);
    if (!e.host.empty()) s += " -h " + detail::quote_if(e.host, ":");  // IPv6 hosts contain ':'
    s += " -p " + std::to_string(e.port);
    if (!is_udp(e.type)) s += e.timeout == -1 ? std::string(" -t infinite") : " -t " + std::to_string(e.timeout);
    if (e.compress) s += " -z";
    if (is_ws(e.type) && !e.resource.empty()) s += " -r " + detail::quote_if(e.resource, ":");
    return s;
}

bool same_address(const endpoint& a, const endpoint& b) noexcept {
    const auto same_char = [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    };
    return a.type == b.type && a.port == b.port &&
           std::equal(a.host.begin(), a.host.end(), b.host.begin(), b.host.end(), same_char);
}

}  // namespace moraine::protocol
