#pragma once
// WebSocket errors (RFC 6455 as IceWS 3.7 uses it, docs/transports.md §1) as boost::system
// error codes (docs/style.md §8).
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <type_traits>

namespace moraine::transport {

/// Why a WebSocket upgrade or frame from the peer was refused. Each is fatal for the
/// connection; ws_close_code() gives the close code to send before closing, if any.
enum class ws_errc {
    // The upgrade (docs/transports.md §1.1-1.3).
    bad_http = 1,          ///< not an HTTP head, or a head longer than 8 KiB
    bad_upgrade,           ///< HTTP but not a WebSocket 13 upgrade (version, Upgrade, Connection, key, Host)
    unsupported_protocol,  ///< Sec-WebSocket-Protocol other than ice.zeroc.com (not read as a list)
    upgrade_refused,       ///< client side: the answer is not 101, or lacks Upgrade / Connection
    bad_accept_key,        ///< client side: Sec-WebSocket-Accept does not match our key
    // Frames (RFC 6455 §5).
    text_frame,            ///< opcode 1: Ice sends binary frames only (§1.4)
    unmasked_frame,        ///< server side: a client frame without a mask (RFC 6455 §5.1)
    masked_frame,          ///< client side: a server frame with a mask (RFC 6455 §5.1)
    reserved_bits,         ///< RSV1-3 set: no extension was negotiated (RFC 6455 §5.2)
    bad_opcode,            ///< a reserved opcode (3-7, 0xB-0xF)
    bad_continuation,      ///< continuation with no message begun, or a new message before FIN
    bad_length,            ///< length not in its smallest form, or a 64-bit length with the top bit set
    bad_control_frame,     ///< control frame with FIN clear or a payload over 125 bytes (RFC 6455 §5.5)
    message_too_big,       ///< a message over the decoder's limit (close code 1009)
    closed,                ///< the peer sent a close frame (RFC 6455 §5.5.1); nothing more is read
};

/// The category of ws_errc ("moraine.ws").
const boost::system::error_category& ws_category() noexcept;

inline boost::system::error_code make_error_code(ws_errc e) noexcept {
    return {static_cast<int>(e), ws_category()};
}

/** The close code to send before closing for a frame error (RFC 6455 §7.4.1): 1009 for
    message_too_big, 1003 for text_frame, 1002 for the other frame errors; 0 (send no close
    frame) for upgrade errors, ws_errc::closed (the decoder already answered it) and errors of
    other categories. */
std::uint16_t ws_close_code(const boost::system::error_code& ec) noexcept;

}  // namespace moraine::transport

template <>
struct boost::system::is_error_code_enum<moraine::transport::ws_errc> : std::true_type {};
