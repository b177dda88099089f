#pragma once
// The WebSocket layer of one session over a `ws` router address (private to the library).
#include <moraine/client/asio.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/ws_control_frame.hpp>
#include <moraine/transport/ws_frame_decoder.hpp>

#include <cstddef>
#include <span>

namespace moraine::client {

/** moraine::transport's WebSocket codec (client role) driven over the session's socket: the
    upgrade, the decoder of the router's frames, and the buffer one write's frames are masked
    into. The socket stays the session's (session_client::close closes it, which ends every
    operation). Owned by the session's read and write coroutines (shared_ptr), so a tcp
    session holds none. IceWS 3.7's rules (docs/transports.md §1): subprotocol ice.zeroc.com,
    no extension, one Ice message per binary frame, a fresh mask key per frame.

    Reads go into the thread's scratch buffer, as on tcp: the decoder keeps at most a partial
    frame header, so an idle session holds no read buffer; the messages inside the frames go
    to the session's frame_assembler. Writes: every queued message (up to a batch) is masked
    into `out` as its own frame, after any pong or close the read side queued, and the lot
    leaves in one write. */
struct ws_client_stream {
    explicit ws_client_stream(tcp::socket& socket) : socket(socket) {}

    /** Sends the upgrade request for `router` (Host: host:port, its resource) and checks the
        101 answer (transport::ws_client_upgrade). Bytes read after the answer's head (the
        router's validate connection frame often shares its segment) are kept in `early`.
        @return the failure: the socket's error, or the refusal with its reason. */
    asio::awaitable<error_info> handshake(const router_address& router);

    /// Queues a control frame (a pong, our close answer) to leave before the next messages.
    void queue_control(const transport::ws_control_frame& f) {
        control.insert(control.end(), f.view().begin(), f.view().end());
    }

    /** Fills `out` with the queued control frames, then `messages` as masked binary frames
        (each with a fresh random key). @return bytes to write. */
    std::size_t frame(std::span<const protocol::byte_buffer> messages);

    /// After a write: frees `out` when nothing more is queued (an idle session keeps nothing),
    /// else keeps its capacity for the next batch.
    void written(bool queue_empty) noexcept;

    tcp::socket& socket;
    transport::ws_frame_decoder decoder{transport::ws_role::client};
    protocol::byte_buffer early;    // frames read with the upgrade's answer, decoded first
    protocol::byte_buffer control;  // pong / close frames queued by the read loop
    protocol::byte_buffer out;      // one write's frames
    bool peer_closed = false;       // the router sent a close frame: answer it, then close
};

}  // namespace moraine::client
