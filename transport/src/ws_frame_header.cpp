#include <moraine/transport/ws_frame_header.hpp>

namespace moraine::transport {

namespace {
constexpr std::byte fin_flag{0x80};
constexpr std::byte mask_flag{0x80};
constexpr std::uint64_t max_7bit = 125;
constexpr std::uint64_t max_16bit = 0xffff;
constexpr std::uint8_t length_16bit_marker = 126;
constexpr std::uint8_t length_64bit_marker = 127;

// Opcode, length and (optionally) the mask bit; the caller appends a key if it set the bit.
ws_frame_header build(ws_opcode op, std::uint64_t n, std::byte mask) noexcept {
    ws_frame_header h;
    h.bytes[0] = fin_flag | static_cast<std::byte>(op);
    if (n <= max_7bit) {
        h.bytes[1] = mask | static_cast<std::byte>(n);
        h.size = 2;
    } else if (n <= max_16bit) {
        h.bytes[1] = mask | std::byte{length_16bit_marker};
        h.bytes[2] = static_cast<std::byte>(n >> 8);
        h.bytes[3] = static_cast<std::byte>(n);
        h.size = 4;
    } else {
        h.bytes[1] = mask | std::byte{length_64bit_marker};
        for (int i = 0; i < 8; ++i) h.bytes[2 + i] = static_cast<std::byte>(n >> (56 - 8 * i));  // network order
        h.size = 10;
    }
    return h;
}
}  // namespace

std::size_t ws_header_size(std::uint64_t payload_bytes, bool masked) noexcept {
    const std::size_t base = payload_bytes <= max_7bit ? 2 : payload_bytes <= max_16bit ? 4 : 10;
    return masked ? base + 4 : base;
}

ws_frame_header ws_header(ws_opcode op, std::uint64_t payload_bytes) noexcept {
    return build(op, payload_bytes, std::byte{0});
}

ws_frame_header ws_header(ws_opcode op, std::uint64_t payload_bytes, const ws_mask_key& key) noexcept {
    ws_frame_header h = build(op, payload_bytes, mask_flag);
    for (std::size_t i = 0; i < key.size(); ++i) h.bytes[h.size + i] = key[i];
    h.size += 4;
    return h;
}

}  // namespace moraine::transport
