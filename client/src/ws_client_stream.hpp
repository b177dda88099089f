#pragma once
// The WebSocket layer of one session over a `ws` or `wss` router address (private to the library).
#include "tls_stream.hpp"

#include <moraine/client/asio.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/ws_control_frame.hpp>
#include <moraine/transport/ws_frame_decoder.hpp>

#include <cstddef>
#include <memory>
#include <span>

namespace moraine::client {

/** moraine::transport's WebSocket codec (client role) driven over a byte transport: the
    session's socket itself (`ws`), or the TLS layer over it (`wss`, `tls` set), so ws and wss
    share this layer. It holds the upgrade, the decoder of the
    router's frames, and the buffer one write's frames are masked into. The socket stays the
    session's (session_client::close closes it, which ends every operation). Owned by the
    session's read and write coroutines (shared_ptr), so a tcp or ssl session holds none.
    IceWS 3.7's rules (docs/transports.md §1): subprotocol ice.zeroc.com, no extension, one
    Ice message per binary frame, a fresh mask key per frame.

    Reads go into the thread's scratch buffer, as on tcp (over TLS decrypted first, into the
    thread's plaintext buffer): the decoder keeps at most a partial frame header, so an idle
    session holds no read buffer; the messages inside the frames go to the session's
    frame_assembler. Writes: every queued message (up to a batch) is masked into `out` as its
    own frame, after any pong or close the read side queued; over TLS the lot is then sealed
    with one SSL_write; it leaves in one write (wire()). */
struct ws_client_stream final : stream_layer {
    /// Over `socket` (`ws`), or over `tls`, already handshaken on that socket (`wss`).
    explicit ws_client_stream(tcp::socket& socket, std::shared_ptr<tls_stream> tls = nullptr)
        : socket(socket), tls(std::move(tls)) {}

    /** Sends the upgrade request for `router` (Host: host:port, its resource) and checks the
        101 answer (transport::ws_client_upgrade). Bytes read after the answer's head (the
        router's validate connection frame often shares its segment) are kept in `early`.
        Over TLS, the request is sealed and the answer decrypted.
        @return the failure: the socket's error, the refusal with its reason, or over TLS what
        tls_stream::receive says (errc::tls_handshake_failed when the router refuses us). */
    asio::awaitable<error_info> handshake(const router_address& router);

    /// Queues a control frame (a pong, our close answer) to leave before the next messages.
    void queue_control(const transport::ws_control_frame& f) {
        control.insert(control.end(), f.view().begin(), f.view().end());
    }

    /// True if a control frame (or, over TLS, a record the read side made) waits to be sent.
    bool has_control() const noexcept override { return !control.empty() || (tls && !tls->control.empty()); }

    /** Fills `out` with the queued control frames, then `messages` as masked binary frames
        (each with a fresh random key); over TLS seals them all into tls->out.
        @return false if TLS cannot send (tls->engine.error() says why). */
    bool encode(std::span<const protocol::byte_buffer> messages) override;
    /// The bytes of one write, after encode(): the frames, or over TLS their records.
    protocol::byte_view wire() const noexcept override {
        return tls ? protocol::byte_view(tls->out) : protocol::byte_view(out);
    }

    /// After a write: frees `out` when nothing more is queued (an idle session keeps nothing),
    /// else keeps its capacity for the next batch.
    void written(bool queue_empty) noexcept override;
    bool peer_closed() const noexcept override { return close_received; }
    /// OpenSSL's reason (only TLS can make encode() fail).
    std::string error() const override { return tls ? tls->engine.error() : std::string(); }

    tcp::socket& socket;
    std::shared_ptr<tls_stream> tls;  // wss: the bytes go through TLS; null for ws
    transport::ws_frame_decoder decoder{transport::ws_role::client};
    protocol::byte_buffer early;    // frames read with the upgrade's answer, decoded first
    protocol::byte_buffer control;  // pong / close frames queued by the read loop
    protocol::byte_buffer out;      // one write's frames
    bool close_received = false;    // the router sent a close frame: answer it, then close

private:
    // The upgrade's I/O over the byte transport (the loops read and write on their own).
    asio::awaitable<error_info> send(protocol::byte_view bytes);
    /// One read; what it brought (decrypted over TLS) to `on_data`.
    asio::awaitable<error_info> receive(std::span<std::byte> buf, const tls_stream::plain_sink& on_data);
};

}  // namespace moraine::client
