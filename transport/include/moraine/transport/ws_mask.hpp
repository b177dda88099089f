#pragma once
// WebSocket masking (RFC 6455 §5.3): client-to-server payloads XORed with a 4-byte key.
#include <array>
#include <cstddef>
#include <span>

namespace moraine::transport {

/// A masking key: 4 bytes, sent in the frame header after the length.
using ws_mask_key = std::array<std::byte, 4>;

/** XORs `data` in place with `key`, starting at key index `phase` (0-3): the payload offset
    of data[0] within its frame, mod 4. Masking and unmasking are the same operation. Works
    8 bytes at a time. @return the phase after `data`, for the frame's next piece. */
unsigned apply_mask(std::span<std::byte> data, const ws_mask_key& key, unsigned phase) noexcept;

/** A fresh unpredictable key (RFC 6455 §5.3, §10.3: from a strong source of entropy): OpenSSL's
    RAND_bytes, drawn 256 bytes at a time into a per-thread pool so a key costs no system call.
    Aborts if OpenSSL cannot seed its generator (no key is ever predictable). */
ws_mask_key random_mask_key() noexcept;

}  // namespace moraine::transport
