#pragma once
// The outcome of feeding bytes to an opening handshake (RFC 6455 §4), either side.
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace moraine::transport {

/// Where a handshake stands after the bytes given so far.
enum class ws_upgrade_status : std::uint8_t {
    need_more,  ///< the HTTP head is not complete: read more (every byte given was kept)
    accepted,   ///< the connection is a WebSocket now
    refused,    ///< the handshake failed: send `answer` (if any), then close
};

/// What ws_server_upgrade::put or ws_client_upgrade::put found.
struct ws_upgrade_result {
    ws_upgrade_status status = ws_upgrade_status::need_more;
    /// Bytes of the last input that belonged to the HTTP head. The rest, if any, already
    /// belongs to the frame stream (e.g. the router's first frame read with its 101 answer,
    /// docs/transports.md §1.2): give it to the ws_frame_decoder.
    std::size_t consumed = 0;
    /// Server side: bytes to send, the 101 answer or an HTTP error answer; empty when the
    /// connection is to be closed without a byte. Client side: always empty.
    std::string answer;
    /// When refused: a sentence for the log, naming the cause.
    std::string why;
    /// When refused: the cause as a ws_errc.
    boost::system::error_code ec;
};

}  // namespace moraine::transport
