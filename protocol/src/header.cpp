// The 14-byte message header (docs/ice-wire.md §2).
#include <moraine/protocol/header.hpp>

#include "detail/little_endian.hpp"

namespace moraine::protocol {
namespace {

constexpr std::array<std::byte, header_size> make_header(message_type type, std::uint8_t compression) {
    return {std::byte{'I'}, std::byte{'c'}, std::byte{'e'}, std::byte{'P'},
            std::byte{1},   std::byte{0},   std::byte{1},   std::byte{0},  // protocol 1.0, encoding 1.0
            static_cast<std::byte>(type), std::byte{compression},
            std::byte{header_size}, std::byte{0}, std::byte{0}, std::byte{0}};
}

}  // namespace

const std::array<std::byte, header_size> validate_connection_message = make_header(message_type::validate_connection, 0);
// Ice 3.7 sends close connection with compression byte 1 (vector close-connection).
const std::array<std::byte, header_size> close_connection_message = make_header(message_type::close_connection, 1);

void write_header(std::byte* out, message_type type, compression_status compression, std::int32_t size) noexcept {
    auto h = make_header(type, static_cast<std::uint8_t>(compression));
    for (std::size_t i = 0; i < 10; ++i) out[i] = h[i];
    patch_message_size(out, size);
}

void patch_message_size(std::byte* message, std::int32_t size) noexcept {
    detail::store_le<std::int32_t>(message + 10, size);
}

}  // namespace moraine::protocol
