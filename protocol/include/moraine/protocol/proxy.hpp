#pragma once
// Proxies in parameters (docs/ice-wire.md §9) and their string form.
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::protocol {

/// Proxy invocation mode on the wire.
enum class proxy_mode : std::uint8_t { twoway = 0, oneway = 1, batch_oneway = 2, datagram = 3, batch_datagram = 4 };

/// A proxy: identity, facet, mode, secure, versions, endpoints or adapter id. Nil = empty identity name.
struct proxy {
    identity id;
    std::string facet;
    std::uint8_t mode = 0;
    bool secure = false;
    encoding_version protocol_version{1, 0};  ///< only on the wire in 1.1 streams
    encoding_version encoding = encoding_1_1;  ///< only on the wire in 1.1 streams
    std::vector<endpoint> endpoints;
    std::string adapter_id;  ///< used when endpoints is empty; empty too = well-known object
    bool is_nil() const noexcept { return id.name.empty(); }
    friend bool operator==(const proxy&, const proxy&) = default;
};

/// Reads a proxy in the stream's encoding (1.0: no versions; 1.1: protocol + encoding after secure).
/// A nil proxy (empty name) reads only the identity. Errors go to the stream (errc::bad_proxy, ...).
proxy read_proxy(input_stream& in);

/// Writes `p` in the stream's encoding; endpoint encapsulations use the stream's encoding.
void write_proxy(output_stream& out, const proxy& p);

/// Stringified proxy as Ice's proxyToString prints it, e.g.
/// `hello -t -e 1.1:tcp -h 127.0.0.1 -p 41171 -t 60000` (used for Glacier2.Filter.ProxySizeMax).
std::string proxy_to_string(const proxy& p);

/// Parses `identity[ -f facet][ -t|-o|-O|-d|-D][ -s][ -e 1.1][:endpoint[:endpoint...]]` or
/// `identity@adapter`. Used for configuration values (PermissionsVerifier, SessionManager).
/// Endpoints without `-h` get `default_host` (Ice.Default.Host), as endpoint_from_string says.
std::optional<proxy> proxy_from_string(std::string_view s, std::string_view default_host = {});

}  // namespace moraine::protocol
