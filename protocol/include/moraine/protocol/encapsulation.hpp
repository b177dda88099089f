#pragma once
// Encapsulations (docs/ice-wire.md §7): int32 size (incl. itself and 2 version bytes), major, minor, payload.
#include <moraine/protocol/bytes.hpp>

#include <cstdint>

namespace moraine::protocol {

/// An encoding version (major.minor); Ice 3.7 uses 1.0 and 1.1.
struct encoding_version {
    std::uint8_t major = 1;
    std::uint8_t minor = 1;
    friend bool operator==(encoding_version, encoding_version) = default;
};
inline constexpr encoding_version encoding_1_0{1, 0};
inline constexpr encoding_version encoding_1_1{1, 1};

/// A whole encapsulation inside a message. A loan of the message's bytes; forwarded opaque.
struct encapsulation_view {
    byte_view bytes;  ///< size field, version and payload: copied verbatim when forwarding
    encoding_version encoding;
    /// The payload after the 6-byte encapsulation header.
    byte_view payload() const noexcept { return bytes.subspan(6); }
};

}  // namespace moraine::protocol
