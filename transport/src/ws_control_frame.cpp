#include <moraine/transport/ws_control_frame.hpp>

#include <moraine/transport/ws_mask.hpp>

#include <cstring>

namespace moraine::transport {

namespace {
ws_control_frame control(ws_role sender, ws_opcode op, protocol::byte_view payload) noexcept {
    if (payload.size() > ws_max_control_payload) payload = payload.first(ws_max_control_payload);
    ws_control_frame f;
    const bool masked = sender == ws_role::client;
    const ws_mask_key key = masked ? random_mask_key() : ws_mask_key{};
    const ws_frame_header h = masked ? ws_header(op, payload.size(), key) : ws_header(op, payload.size());
    std::memcpy(f.bytes.data(), h.bytes.data(), h.size);
    if (!payload.empty()) std::memcpy(f.bytes.data() + h.size, payload.data(), payload.size());
    if (masked) apply_mask(std::span<std::byte>(f.bytes.data() + h.size, payload.size()), key, 0);
    f.size = static_cast<std::uint8_t>(h.size + payload.size());
    return f;
}
}  // namespace

ws_control_frame ws_close_frame(ws_role sender, std::uint16_t code) noexcept {
    const std::array<std::byte, 2> status{static_cast<std::byte>(code >> 8), static_cast<std::byte>(code)};
    return control(sender, ws_opcode::close, status);
}

ws_control_frame ws_pong_frame(ws_role sender, protocol::byte_view payload) noexcept {
    return control(sender, ws_opcode::pong, payload);
}

}  // namespace moraine::transport
