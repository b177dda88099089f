#pragma once
// WebSocket frames in (RFC 6455 §5), sans-I/O: the Ice stream inside them, a byte range at a time.
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/ws_control_frame.hpp>
#include <moraine/transport/ws_error.hpp>
#include <moraine/transport/ws_frame_header.hpp>
#include <moraine/transport/ws_mask.hpp>

#include <boost/system/error_code.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace moraine::transport {

/// What one ws_frame_decoder::decode() call found.
enum class ws_input : std::uint8_t {
    need_more,  ///< every input byte was used (a partial header is kept): read more
    payload,    ///< `payload` holds message bytes, unmasked, lent from the caller's buffer
    ping,       ///< `reply` is the pong to send (the ping's data, RFC 6455 §5.5.2)
    close,      ///< the peer closed: send `reply` (close 1000) and close the connection
    error,      ///< `ec` says why; ws_close_code(ec) is the close code to send, if any
};

/// The result of one ws_frame_decoder::decode() call.
struct ws_decoded {
    ws_input what = ws_input::need_more;
    std::size_t consumed = 0;               ///< input bytes used; pass the rest to the next call
    std::span<const std::byte> payload;     ///< ws_input::payload: a loan of the caller's input
    ws_control_frame reply;                 ///< ws_input::ping and ::close: the frame to send
    std::uint16_t close_code = 0;           ///< ws_input::close: the peer's status (1005: none)
};

/** Decodes the frames of one WebSocket connection from its byte stream, read in pieces of any
    size (a frame may be split anywhere, a read may hold several frames). Allocates nothing and
    owns no buffer for data: the payload of binary and continuation frames is unmasked in place
    in the caller's buffer and lent back as byte ranges, which need not align with Ice messages
    (the caller feeds them to protocol::frame_assembler). A partial header (at most 14 bytes) is
    kept inside; so is a control frame's payload (at most 125 bytes, allocated only while such a
    frame straddles two reads, which real Ice peers never send).

    Control frames: a ping yields the pong to send, a pong is skipped, a close yields close 1000
    to send and ends the stream (ws_errc::closed afterwards). Control frames may arrive between
    the fragments of a message (RFC 6455 §5.4).

    Errors (the connection is then unusable; every later call returns the same error): text
    frame (Ice uses binary only, docs/transports.md §1.4), unmasked frame on the server side,
    masked frame on the client side (RFC 6455 §5.1), reserved bits (no extension is ever
    negotiated), reserved opcode, continuation out of sequence, length not in its smallest form,
    control frame fragmented or over 125 bytes (§5.5), a message larger than the limit (checked
    on each frame's header, before its payload arrives; close code 1009). Not thread-safe. */
class ws_frame_decoder {
public:
    /// For the `role` end of the connection (the server expects masked frames); messages over
    /// `max_message_bytes` (summed over their fragments) are refused; 0 = no limit.
    explicit ws_frame_decoder(ws_role role, std::uint64_t max_message_bytes = 0) noexcept;

    /** Decodes from the front of `input` up to the first thing to report. Clears `ec` on entry.
        @param input bytes just read, in the order read; masked payload bytes in it are
               unmasked in place (so a payload range stays valid as long as `input` does).
        @return what was found and how many bytes of `input` it used; call again with the rest
                until it reports need_more with everything used. */
    ws_decoded decode(std::span<std::byte> input, boost::system::error_code& ec) noexcept;

    /// Changes the message limit (bytes, 0 = none); applies from the next frame header.
    void max_message_bytes(std::uint64_t bytes) noexcept { max_message_bytes_ = bytes; }

    /// True once a close frame was decoded or an error found: nothing more will be decoded.
    bool done() const noexcept { return state_ == state::done; }
    /// True between two messages: no header byte, payload or fragment held, so a fresh decoder
    /// would go on from here exactly as this one (a takeover moves the connection then).
    bool at_message_boundary() const noexcept { return state_ == state::header && head_size_ == 0 && !in_message_; }

private:
    enum class state : std::uint8_t { header, data, control, done };

    /// Takes header bytes from `input` into head_; sets `ec` on a bad header. @return bytes used.
    std::size_t take_header(std::span<const std::byte> input, boost::system::error_code& ec) noexcept;
    /// Checks the first two header bytes (all but the extended length) as soon as they are in.
    boost::system::error_code check_start() const noexcept;
    /// Reads the whole header in head_: length (smallest form), mask, message limit.
    boost::system::error_code finish_header() noexcept;
    /// Hands out payload bytes of a data frame from the front of `input`.
    ws_decoded data_bytes(std::span<std::byte> input) noexcept;
    /// Collects a control frame's payload; reports it once whole.
    ws_decoded control_bytes(std::span<std::byte> input, boost::system::error_code& ec);
    /// The event of a whole control frame whose unmasked payload is `payload`.
    ws_decoded control_event(std::span<const std::byte> payload, boost::system::error_code& ec) noexcept;
    ws_decoded fail(ws_errc why, std::size_t consumed, boost::system::error_code& ec) noexcept;
    std::uint8_t head_byte(std::size_t i) const noexcept { return static_cast<std::uint8_t>(head_[i]); }

    std::uint64_t frame_left_ = 0;         // payload bytes of the current frame not yet handed out
    std::uint64_t message_bytes_ = 0;      // payload of the current message so far (all its frames)
    std::uint64_t max_message_bytes_;
    // A control frame's payload while it straddles reads; null otherwise (nearly always).
    std::unique_ptr<std::array<std::byte, ws_max_control_payload>> control_;
    ws_mask_key mask_{};
    std::array<std::byte, ws_max_header_bytes> head_{};
    std::uint8_t head_size_ = 0;           // bytes of head_ filled
    std::uint8_t control_size_ = 0;        // bytes of control_ filled
    std::uint8_t phase_ = 0;               // mask index of the next payload byte
    ws_role role_;
    state state_ = state::header;
    bool in_message_ = false;              // a fragmented message has begun and not ended
    ws_errc failed_{};                     // the error once done, or {} after a close
};

}  // namespace moraine::transport
