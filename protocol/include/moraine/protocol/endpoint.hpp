#pragma once
// Endpoints inside proxies (docs/ice-wire.md §9) and in configuration strings.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/encapsulation.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::protocol {

class input_stream;
class output_stream;

/// Endpoint type ids on the wire.
enum class endpoint_type : std::int16_t { tcp = 1, ssl = 2, udp = 3, ws = 4, wss = 5 };

/// An endpoint. tcp/ssl/ws/wss/udp are decoded; any other type keeps its body opaque.
struct endpoint {
    std::int16_t type = 1;
    encoding_version encoding = encoding_1_1;  ///< version of the endpoint encapsulation
    std::string host;
    std::int32_t port = 0;
    std::int32_t timeout = 60000;  ///< ms, -1 = none (tcp/ssl/ws/wss)
    bool compress = false;
    std::string resource;          ///< ws/wss only
    byte_buffer opaque;            ///< body of an unknown endpoint type
    friend bool operator==(const endpoint&, const endpoint&) = default;
    bool is_tcp() const noexcept { return type == static_cast<std::int16_t>(endpoint_type::tcp); }
    bool is_ssl() const noexcept { return type == static_cast<std::int16_t>(endpoint_type::ssl); }
    bool is_ws() const noexcept { return type == static_cast<std::int16_t>(endpoint_type::ws); }
    bool is_wss() const noexcept { return type == static_cast<std::int16_t>(endpoint_type::wss); }
    /// udp: one whole Ice message per datagram, oneway only (docs/ice-wire.md §3).
    bool is_udp() const noexcept { return type == static_cast<std::int16_t>(endpoint_type::udp); }
    /// ws or wss: Ice messages in WebSocket binary frames (docs/transports.md §1).
    bool websocket() const noexcept { return is_ws() || is_wss(); }
    /// ssl or wss: the bytes travel inside TLS.
    bool secure() const noexcept { return is_ssl() || is_wss(); }
    /// A stream endpoint the router can serve and reach: tcp, ssl, ws or wss (not udp, not opaque).
    bool stream() const noexcept { return is_tcp() || secure() || is_ws(); }
};

/// Reads one endpoint from a proxy (docs/ice-wire.md §9): short type, then an encapsulation
/// whose body is decoded for tcp/ssl/udp/ws/wss and kept opaque (`opaque`, `encoding`) for any
/// other type. A known body must fill its encapsulation exactly. Errors go to the stream
/// (errc::bad_proxy, ::out_of_bounds, ::unsupported_encoding).
endpoint read_endpoint(input_stream& in);

/// Writes `e` as read_endpoint expects it. A known type's encapsulation uses the stream's
/// encoding (as Ice does); an opaque one keeps `e.encoding` and its body verbatim.
void write_endpoint(output_stream& out, const endpoint& e);

/// Parses one endpoint in Ice's string form: `tcp -h 127.0.0.1 -p 4063 -t 60000 -z`. Types tcp,
/// ssl, udp, ws, wss. As Ice reads it: no `-p` is port 0 (an object adapter binds an ephemeral
/// port), no `-h` is `default_host` (Ice.Default.Host; empty = all interfaces when bound,
/// loopback when connected to), and `-h *` is all interfaces whatever the default (empty host).
/// @return nullopt on an unknown type, a bad port, or an unknown option.
std::optional<endpoint> endpoint_from_string(std::string_view s, std::string_view default_host = {});

/// Parses a `:`-separated endpoint list as in `Glacier2.Client.Endpoints` (each part as
/// endpoint_from_string reads it, with `default_host`). nullopt if any part is bad.
std::optional<std::vector<endpoint>> endpoints_from_string(std::string_view s, std::string_view default_host = {});

/// The string form, as Ice prints it: `tcp -h 127.0.0.1 -p 4063 -t 60000` (+ ` -z`, ` -r /x`);
/// `-t infinite` for timeout -1; udp has no `-t`; unknown types print as
/// `opaque -t <type> -e <major.minor> -v <base64 body>`.
std::string endpoint_to_string(const endpoint& e);

/// True when `a` and `b` name the same address: the same type and port, and host names equal
/// ignoring ASCII case (DNS names are case-insensitive). Timeout, compression and resource are
/// not part of the address.
bool same_address(const endpoint& a, const endpoint& b) noexcept;

}  // namespace moraine::protocol
