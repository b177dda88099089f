#pragma once
// Protocol errors as boost::system error codes (docs/style.md §8).
#include <boost/system/error_code.hpp>
#include <type_traits>

namespace moraine::protocol {

/// Why bytes from a peer were rejected. Each maps to the Ice local exception a 3.7 peer
/// raises in the same case (docs/ice-wire.md §3 "Malformed input").
enum class errc {
    bad_magic = 1,            ///< BadMagicException
    unsupported_protocol,     ///< UnsupportedProtocolException (protocol != 1.0)
    unsupported_encoding,     ///< UnsupportedEncodingException (protocol encoding != 1.0, or encapsulation encoding not 1.0/1.1)
    illegal_message_size,     ///< IllegalMessageSizeException (size < 14, negative)
    message_too_large,        ///< MemoryLimitException (size > limits::max_message_bytes)
    unknown_message_type,     ///< UnknownMessageException
    out_of_bounds,            ///< UnmarshalOutOfBoundsException (truncated field)
    negative_size,            ///< negative size or count
    bad_encapsulation,        ///< encapsulation size inconsistent with the bytes
    bad_facet,                ///< facet sequence with more than one element
    bad_proxy,                ///< malformed proxy or endpoint
    bad_compression,          ///< CompressionException: corrupt bzip2 stream or bad size prefix
    bad_reply_status,         ///< reply status byte > 7
    bad_string,               ///< stringified identity / proxy / endpoint could not be parsed
};

/// The category of protocol::errc ("moraine.protocol").
const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace moraine::protocol

template <>
struct boost::system::is_error_code_enum<moraine::protocol::errc> : std::true_type {};
