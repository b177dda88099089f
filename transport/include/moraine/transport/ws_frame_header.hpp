#pragma once
// WebSocket frame headers out (RFC 6455 §5.2), for Ice over ws and wss (docs/transports.md §1.4).
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/ws_mask.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace moraine::transport {

/// Frame opcodes (RFC 6455 §5.2, §11.8). Ice uses binary; text is refused (docs/transports.md §1.4).
enum class ws_opcode : std::uint8_t {
    continuation = 0x0,
    text = 0x1,
    binary = 0x2,
    close = 0x8,
    ping = 0x9,
    pong = 0xA,
};

/// Which end of the connection a codec object serves: a client masks what it sends and
/// expects unmasked frames; a server the reverse (RFC 6455 §5.1).
enum class ws_role : std::uint8_t { server, client };

/// Largest frame header, bytes: 2 + 8 (64-bit length) + 4 (mask key).
inline constexpr std::size_t ws_max_header_bytes = 14;

/// The header of one frame, built in place: 2, 4 or 10 bytes, 4 more when masked.
struct ws_frame_header {
    std::array<std::byte, ws_max_header_bytes> bytes{};
    std::uint8_t size = 0;  ///< bytes used at the front of `bytes`

    /// The header's bytes, borrowed from this object.
    protocol::byte_view view() const noexcept { return {bytes.data(), size}; }
};

/** Header size in bytes for a payload of `payload_bytes`: 2 up to 125, 4 up to 65,535, else
    10 (the smallest form, RFC 6455 §5.2; docs/transports.md §1.4: 336 -> `7e0150`), plus 4
    when `masked`. */
std::size_t ws_header_size(std::uint64_t payload_bytes, bool masked) noexcept;

/** The unmasked header of a final (FIN=1, RSV=0) frame of `op` carrying `payload_bytes`: what
    a server sends. One Ice message per binary frame (docs/transports.md §1.4), so a server
    writes N messages as N (header, message) pairs gathered into one writev, the payload
    never copied. E.g. the 14-byte validate connection message -> `82 0e`. */
ws_frame_header ws_header(ws_opcode op, std::uint64_t payload_bytes) noexcept;

/** The same with the mask bit and `key` after the length: what a client sends. The payload
    that follows must be masked with `key` from phase 0 (apply_mask). */
ws_frame_header ws_header(ws_opcode op, std::uint64_t payload_bytes, const ws_mask_key& key) noexcept;

}  // namespace moraine::transport
