#pragma once
// Control frames a codec answers with: close and pong (RFC 6455 §5.5).
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/ws_frame_header.hpp>

#include <array>
#include <cstdint>

namespace moraine::transport {

/// Largest control payload, bytes (RFC 6455 §5.5).
inline constexpr std::size_t ws_max_control_payload = 125;

/// One whole control frame, built in place (at most 2 + 4 + 125 bytes).
struct ws_control_frame {
    std::array<std::byte, 6 + ws_max_control_payload> bytes{};
    std::uint8_t size = 0;  ///< bytes used; 0 = no frame

    /// The frame's bytes, borrowed from this object.
    protocol::byte_view view() const noexcept { return {bytes.data(), size}; }
    bool empty() const noexcept { return size == 0; }
};

/** A close frame with status `code` and no reason (RFC 6455 §5.5.1, §7.4): unmasked from a
    server (1000 -> `880203e8`, docs/transports.md §1.5), masked with a fresh random key from
    a client. */
ws_control_frame ws_close_frame(ws_role sender, std::uint16_t code) noexcept;

/** A pong carrying `payload` (the ping's application data, unmasked; RFC 6455 §5.5.3), masked
    with a fresh random key from a client. A payload over 125 bytes is cut to 125 (a decoder
    never hands out a longer one: it refuses such a ping). */
ws_control_frame ws_pong_frame(ws_role sender, protocol::byte_view payload) noexcept;

}  // namespace moraine::transport
