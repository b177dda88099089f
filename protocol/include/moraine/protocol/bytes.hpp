#pragma once
// Byte spans and owned byte buffers used across the codec.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace moraine::protocol {

/// A read-only loan of bytes; the lender is named where each view is produced.
using byte_view = std::span<const std::byte>;
/// An owned, growable byte buffer.
using byte_buffer = std::vector<std::byte>;

/// Views the characters of `s` as bytes (no copy).
inline byte_view as_bytes(std::string_view s) noexcept {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
/// Views bytes as characters (no copy).
inline std::string_view as_chars(byte_view b) noexcept {
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace moraine::protocol
