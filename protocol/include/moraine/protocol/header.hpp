#pragma once
// The 14-byte Ice message header (docs/ice-wire.md §2).
#include <moraine/protocol/bytes.hpp>

#include <array>
#include <cstdint>

namespace moraine::protocol {

/// Size of every Ice message header, in bytes.
inline constexpr std::size_t header_size = 14;

/// Message type, byte 8 of the header.
enum class message_type : std::uint8_t {
    request = 0,
    batch_request = 1,
    reply = 2,
    validate_connection = 3,
    close_connection = 4,
};

/// Compression status, byte 9 of the header (docs/ice-wire.md §2, §11).
enum class compression_status : std::uint8_t {
    none = 0,        ///< not compressed, sender does not accept compressed replies
    accepted = 1,    ///< not compressed, sender accepts a compressed reply
    compressed = 2,  ///< body is bzip2: int32 uncompressed total size, then the stream
};

/// A decoded message header.
struct header {
    message_type type = message_type::request;
    compression_status compression = compression_status::none;
    std::int32_t size = 0;  ///< whole message in bytes, header included
};

/// Writes magic, protocol 1.0, encoding 1.0, type, compression and size into `out[0..14)`.
void write_header(std::byte* out, message_type type, compression_status compression, std::int32_t size) noexcept;

/// Overwrites the size field (bytes 10..14) of the header at `message`.
void patch_message_size(std::byte* message, std::int32_t size) noexcept;

/// The validate connection message, also used as a heartbeat: `IceP 0100 0100 03 00 0e000000`.
extern const std::array<std::byte, header_size> validate_connection_message;
/// The close connection message as Ice 3.7 sends it (compression byte 1): `IceP 0100 0100 04 01 0e000000`.
extern const std::array<std::byte, header_size> close_connection_message;

}  // namespace moraine::protocol
