#pragma once
// The read side of a WebSocket connection, sans-I/O: one read's bytes through a frame decoder,
// the payload to the Ice framing, the control answers to the writer. Both ends use it: the
// router's connections (net::ice_connection) and the client library's session_client.
#include <moraine/transport/ws_frame_decoder.hpp>

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <span>

namespace moraine::transport {

/// Why read_ws_frames returned.
enum class ws_read_end : std::uint8_t {
    need_more,  ///< every byte was decoded (a partial frame is kept): read more
    stopped,    ///< a callback returned false: stop reading
    closed,     ///< the peer sent a close frame; its answer went to on_control: close
    error,      ///< a WebSocket protocol error, in `ec`; ws_close_code(ec) is the code to send
};

/** Decodes all of `input` (one read, in order; masked payload is unmasked in place) with
    `decoder`. Each payload range goes to `on_payload(std::span<const std::byte>) -> bool`, a
    loan of `input`; each control frame to send (the pong of a ping, the answer to a close,
    RFC 6455 §5.5) to `on_control(const ws_control_frame&) -> bool`. A callback returning false
    stops the loop (e.g. the connection closed). Pongs are skipped by the decoder. */
template <class OnPayload, class OnControl>
ws_read_end read_ws_frames(ws_frame_decoder& decoder, std::span<std::byte> input, boost::system::error_code& ec,
                           OnPayload&& on_payload, OnControl&& on_control) {
    for (;;) {
        const ws_decoded d = decoder.decode(input, ec);
        input = input.subspan(d.consumed);
        switch (d.what) {
        case ws_input::need_more:
            return ws_read_end::need_more;
        case ws_input::payload:
            if (!on_payload(d.payload)) return ws_read_end::stopped;
            break;
        case ws_input::ping:
            if (!on_control(d.reply)) return ws_read_end::stopped;
            break;
        case ws_input::close:
            on_control(d.reply);
            return ws_read_end::closed;
        case ws_input::error:
            return ws_read_end::error;
        }
    }
}

}  // namespace moraine::transport
