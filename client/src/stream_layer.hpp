#pragma once
// What the session's one write loop needs from the layers above its socket (private to the library).
#include <moraine/protocol/bytes.hpp>

#include <span>
#include <string>

namespace moraine::client {

/** The write side of the layers of one connection above its socket: TLS (an `ssl` address,
    tls_stream), WebSocket (`ws`, ws_client_stream) or WebSocket over TLS (`wss`, the
    ws_client_stream over its tls_stream). A tcp session has none: its write loop sends the
    queued messages as they are, gathered, and pays nothing for the others. With a layer, each
    write is: control bytes the read side made (a pong, a close answer, a key update's answer),
    then a batch of queued Ice messages, encoded into one buffer (wire()) and sent at once. */
class stream_layer {
public:
    virtual ~stream_layer() = default;

    /// True if bytes the read side made wait to be sent, even with no message queued.
    virtual bool has_control() const noexcept = 0;
    /** Fills wire() with the control bytes, then `messages` (each a whole Ice message) as this
        layer carries them: masked binary frames, TLS records of them, or records of the messages.
        @return false if TLS cannot send: error() says why, and the connection is to be closed. */
    virtual bool encode(std::span<const protocol::byte_buffer> messages) = 0;
    /// The bytes of one write, after encode().
    virtual protocol::byte_view wire() const noexcept = 0;
    /// After wire() was written: frees what an idle session need not keep (all of it when
    /// `queue_empty`, i.e. no message waits to be sent).
    virtual void written(bool queue_empty) noexcept = 0;
    /// True once the router's WebSocket close frame was read: only our answer goes (encode()
    /// is given no message), then the connection ends (RFC 6455 §5.5.1). Never for TLS alone.
    virtual bool peer_closed() const noexcept = 0;
    /// Why encode() failed: OpenSSL's reason.
    virtual std::string error() const = 0;
};

}  // namespace moraine::client
