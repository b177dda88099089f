#pragma once
// Hex helpers and the golden frames of docs/transports.md §1 for the WebSocket codec's tests.
#include <moraine/protocol/bytes.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::transport::test {

/// "820e..." -> bytes.
inline protocol::byte_buffer hex(std::string_view h) {
    protocol::byte_buffer out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
        out.push_back(static_cast<std::byte>(std::stoul(std::string(h.substr(i, 2)), nullptr, 16)));
    return out;
}

/// bytes -> "820e...".
inline std::string to_hex(protocol::byte_view b) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (auto x : b) {
        s += digits[std::to_integer<unsigned>(x) >> 4];
        s += digits[std::to_integer<unsigned>(x) & 15];
    }
    return s;
}

/// `n` bytes of a pattern that differs at every offset of a 251-byte cycle.
inline protocol::byte_buffer pattern(std::size_t n, unsigned seed = 1) {
    protocol::byte_buffer v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) % 251);
    return v;
}

/// The router's validate connection message in its binary frame (docs/transports.md §1.2).
inline constexpr std::string_view validate_frame_hex = "820e496365500100010003000e000000";
/// The Ice message inside it.
inline constexpr std::string_view validate_message_hex = "496365500100010003000e000000";

/// An Ice 3.7 client's first frame, as read from the socket [ws-session-ice37]: ice_isA on
/// Glacier2/router, 70 bytes, masked with key 645664df.
inline constexpr std::string_view ice_isa_frame_hex =
    "82c6645664df2d35018f655665df645622df645665df645662ad0b2310ba165e23b305350dba166464d80d3501800d2525de644f64df"
    "645765cd5e6c23b305350dba16645ee5363911ab0124";
/// Its payload, unmasked [ws-session-ice37].
inline constexpr std::string_view ice_isa_message_hex =
    "49636550010001000000460000000100000006726f7574657208476c61636965723200076963655f6973410100190000000101123a3a"
    "476c6163696572323a3a526f75746572";

}  // namespace moraine::transport::test
