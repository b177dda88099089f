#include <moraine/transport/ws_masked_frame.hpp>

#include <cstring>

namespace moraine::transport {

std::size_t append_masked_frame(protocol::byte_buffer& out, ws_opcode op, std::span<const protocol::byte_view> pieces,
                                const ws_mask_key& key) {
    std::size_t payload = 0;
    for (const auto& p : pieces) payload += p.size();
    const ws_frame_header head = ws_header(op, payload, key);
    const std::size_t start = out.size();
    out.resize(start + head.size + payload);  // one growth per frame, then copy and mask in place
    std::byte* at = out.data() + start;
    std::memcpy(at, head.bytes.data(), head.size);
    at += head.size;
    unsigned phase = 0;
    for (const auto& p : pieces) {
        if (p.empty()) continue;
        std::memcpy(at, p.data(), p.size());
        phase = apply_mask(std::span<std::byte>(at, p.size()), key, phase);
        at += p.size();
    }
    return head.size + payload;
}

std::size_t append_masked_frame(protocol::byte_buffer& out, ws_opcode op, protocol::byte_view payload,
                                const ws_mask_key& key) {
    return append_masked_frame(out, op, std::span<const protocol::byte_view>(&payload, 1), key);
}

}  // namespace moraine::transport
