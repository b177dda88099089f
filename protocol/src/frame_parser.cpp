// Finding whole messages in a byte stream (docs/ice-wire.md §2, §3 "Malformed input").
#include <moraine/protocol/frame_parser.hpp>

#include <moraine/protocol/error.hpp>

#include "detail/little_endian.hpp"

#include <algorithm>

namespace moraine::protocol {
namespace {

constexpr std::byte magic[4] = {std::byte{'I'}, std::byte{'c'}, std::byte{'e'}, std::byte{'P'}};

// Compares the magic bytes already received, so garbage is rejected on its first bytes rather
// than after 14 of them arrive (the outcome is the same as Ice's: the connection is dropped).
bool magic_prefix_ok(byte_view input) noexcept {
    const auto n = std::min<std::size_t>(input.size(), 4);
    return std::equal(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(n), magic);
}

// Header-only checks, in the order Ice performs them after reading a header.
errc check_header(byte_view h, const limits& lim, header& out) noexcept {
    if (h[4] != std::byte{1} || h[5] != std::byte{0}) return errc::unsupported_protocol;
    if (h[6] != std::byte{1} || h[7] != std::byte{0}) return errc::unsupported_encoding;
    const auto size = detail::load_le<std::int32_t>(h.data() + 10);
    if (size < static_cast<std::int32_t>(header_size)) return errc::illegal_message_size;  // also negative
    if (lim.max_message_bytes != 0 && static_cast<std::size_t>(size) > lim.max_message_bytes)
        return errc::message_too_large;
    const auto type = static_cast<std::uint8_t>(h[8]);
    if (type > static_cast<std::uint8_t>(message_type::close_connection)) return errc::unknown_message_type;
    out.type = static_cast<message_type>(type);
    out.compression = static_cast<compression_status>(h[9]);
    out.size = size;
    // Validate and close connection are header-only; a body would desynchronise the stream.
    const bool header_only = out.type == message_type::validate_connection || out.type == message_type::close_connection;
    if (header_only && size != static_cast<std::int32_t>(header_size)) return errc::illegal_message_size;
    // A compressed message carries at least the 4-byte uncompressed-size prefix; header-only
    // messages are never compressed (a 3.7 peer fails decompressing either and drops the connection).
    if (out.compression == compression_status::compressed &&
        (header_only || size < static_cast<std::int32_t>(header_size + 4)))
        return errc::bad_compression;
    return {};
}

}  // namespace

std::optional<frame_view> parse_frame(byte_view input, const limits& lim, boost::system::error_code& ec) noexcept {
    ec.clear();
    if (!magic_prefix_ok(input)) {
        ec = errc::bad_magic;
        return std::nullopt;
    }
    if (input.size() < header_size) return std::nullopt;
    frame_view f;
    if (const errc e = check_header(input.first(header_size), lim, f.header); e != errc{}) {
        ec = e;
        return std::nullopt;
    }
    const auto size = static_cast<std::size_t>(f.header.size);
    if (input.size() < size) return std::nullopt;  // the body has not arrived yet
    f.bytes = input.first(size);
    return f;
}

}  // namespace moraine::protocol
