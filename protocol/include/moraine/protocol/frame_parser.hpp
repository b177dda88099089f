#pragma once
// Finding whole messages in a byte stream (sans-I/O; docs/style.md §5).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/header.hpp>

#include <boost/system/error_code.hpp>
#include <optional>

namespace moraine::protocol {

/// Receiver-side limits. `max_message_bytes` mirrors Ice.MessageSizeMax (KiB × 1024; 0 = unlimited).
struct limits {
    std::size_t max_message_bytes = 1024 * 1024;
};

/// One whole message inside a caller's buffer. A loan: valid while that buffer is unchanged.
struct frame_view {
    protocol::header header;
    byte_view bytes;  ///< the whole message, header included
    /// Everything after the 14-byte header.
    byte_view body() const noexcept { return bytes.subspan(header_size); }
    std::size_t size() const noexcept { return bytes.size(); }
};

/// Finds the first whole Ice message at the front of `input` (docs/ice-wire.md §2, §3).
/// Checks, in Ice's order, magic (errc::bad_magic, already on the first wrong byte), protocol 1.0
/// (::unsupported_protocol), protocol encoding 1.0 (::unsupported_encoding), size >= 14
/// (::illegal_message_size, also for a negative size), size <= lim.max_message_bytes unless it
/// is 0 (::message_too_large), message type 0..4 (::unknown_message_type); then a validate or
/// close connection message must be exactly 14 bytes (::illegal_message_size) and a compressed
/// (status 2) message must be neither of those and hold the 4-byte size prefix
/// (::bad_compression). All checks use the header alone, before the body arrives.
/// Allocates nothing; the view borrows `input`. Clears `ec` on entry.
/// @return the message; nullopt if more bytes are needed (ec clear) or the input is bad (ec set).
std::optional<frame_view> parse_frame(byte_view input, const limits& lim, boost::system::error_code& ec) noexcept;

}  // namespace moraine::protocol
