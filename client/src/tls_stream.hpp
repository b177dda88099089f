#pragma once
// The TLS layer of one session over an `ssl` or `wss` router address (private to the library).
#include "stream_layer.hpp"

#include <moraine/client/asio.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/client/tls_context.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/tls_engine.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <string>

namespace moraine::client {

/** moraine::transport's TLS engine driven over the session's socket, as the router's
    connections drive it: reads go into the thread's scratch buffer (as on tcp) and are
    decrypted record by record into a per-thread plaintext buffer, so an idle session holds no
    read buffer; a write seals the queued messages into `out` (one SSL_write per batch, so
    small messages share records) and sends it at once. The socket stays the session's
    (session_client::close closes it, which ends every operation). Owned by the session's read
    and write coroutines (shared_ptr), so a tcp session holds none; under `wss` by the
    WebSocket layer above it (ws_client_stream::tls), which sends and receives through it. */
struct tls_stream final : stream_layer {
    /// A client engine for `socket` (connected, not yet handshaken) from `ctx`. Sends SNI: the
    /// context's server_name, else the router's host, unless that is an IP address.
    tls_stream(tcp::socket& socket, const tls_context& ctx, const router_address& router);

    /** The handshake, over the socket. Records read with the handshake's last flight are
        decrypted into `early`. @return errc::tls_handshake_failed with detail = the router's
        address, then OpenSSL's reason and, when the certificate check failed, its verdict
        ("127.0.0.1:4064: certificate verify failed: hostname mismatch"); the socket's error
        otherwise. */
    asio::awaitable<error_info> handshake(const router_address& router);

    /** Fills `out` with `control` (records the read side produced: they come first, as TLS
        numbers records in the order they are made), then `messages` sealed (application data).
        @return false if the engine cannot send (engine.error() says why). */
    bool seal(std::span<const protocol::byte_buffer> messages);
    /// seal() of one buffer already holding the batch (the WebSocket frames of one write).
    bool seal(protocol::byte_view plain);
    /// After a write: frees `out` (an idle session keeps nothing).
    void written() noexcept { protocol::byte_buffer().swap(out); }

    // stream_layer, for an `ssl` session's write loop (under `wss` the WebSocket layer calls
    // seal() and written() itself).
    bool has_control() const noexcept override { return !control.empty(); }
    bool encode(std::span<const protocol::byte_buffer> messages) override { return seal(messages); }
    protocol::byte_view wire() const noexcept override { return out; }
    void written(bool) noexcept override { written(); }
    bool peer_closed() const noexcept override { return false; }
    std::string error() const override { return engine.error(); }

    /** For a layer above TLS before the session's loops run (the WebSocket upgrade): seals
        `plain` and writes it at once. @return the socket's error, or errc::connection_lost
        with the engine's reason if it cannot send; errc::tls_handshake_failed as receive()
        says it when the write failed because the router refused us (its alert read after). */
    asio::awaitable<error_info> send(protocol::byte_view plain);

    /// Takes one piece of plaintext; false: stop decrypting what this read brought.
    using plain_sink = std::function<bool(std::span<std::byte>)>;
    /** For a layer above TLS before the session's loops run: one read from the socket into
        `buf`, decrypted, each piece of plaintext to `on_plain` (a loan of the thread's
        plaintext buffer). A key update's answer goes to `control`. @return the socket's error
        (eof: errc::connection_lost); errc::tls_handshake_failed "the router refused the
        connection: ..." on a TLS error (TLS 1.3: a refused client certificate shows here). */
    asio::awaitable<error_info> receive(std::span<std::byte> buf, const plain_sink& on_plain);

    tcp::socket& socket;
    transport::tls_engine engine;
    protocol::byte_buffer out;      // the records of one write
    protocol::byte_buffer control;  // records the read side made (a key update's answer)
    protocol::byte_buffer early;  // plaintext that came with the handshake's last flight

private:
    /// After a failed write: errc::tls_handshake_failed if the router's alert waits unread,
    /// else `write_error`.
    error_info refusal_behind(const boost::system::error_code& write_error);
    /// errc::tls_handshake_failed "the router refused the connection: " + the engine's reason.
    error_info refused() const;
};

/// True if `ec` from a read means the router closed the connection (eof).
bool is_eof(const boost::system::error_code& ec) noexcept;

}  // namespace moraine::client
