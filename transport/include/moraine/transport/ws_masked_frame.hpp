#pragma once
// A client's whole frame, header and masked payload, in the caller's buffer (RFC 6455 §5.3).
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/ws_frame_header.hpp>
#include <moraine/transport/ws_mask.hpp>

#include <initializer_list>
#include <span>

namespace moraine::transport {

/** Appends one final frame of `op` to `out`: the masked header (`key` in it) followed by the
    concatenation of `pieces` XORed with `key`. Masking needs a copy (the caller's message must
    stay intact for a retry or another peer), so a client batches N messages as N frames into
    one buffer and writes it at once. Use a fresh random_mask_key() per frame (RFC 6455 §5.3;
    Ice 3.7 clients do, docs/transports.md §1.4). `pieces` must not alias `out`.
    @return bytes appended: ws_header_size(payload, true) + payload. */
std::size_t append_masked_frame(protocol::byte_buffer& out, ws_opcode op, std::span<const protocol::byte_view> pieces,
                                const ws_mask_key& key);

/// The same for a payload in one piece (an Ice message in one buffer).
std::size_t append_masked_frame(protocol::byte_buffer& out, ws_opcode op, protocol::byte_view payload,
                                const ws_mask_key& key);

}  // namespace moraine::transport
