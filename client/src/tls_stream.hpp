#pragma once
// The TLS layer of one session over an `ssl` router address (private to the library).
#include <moraine/client/asio.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/client/tls_context.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/tls_engine.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace moraine::client {

/** moraine::transport's TLS engine driven over the session's socket, as the router's
    connections drive it: reads go into the thread's scratch buffer (as on tcp) and are
    decrypted record by record into a per-thread plaintext buffer, so an idle session holds no
    read buffer; a write seals the queued messages into `out` (one SSL_write per batch, so
    small messages share records) and sends it at once. The socket stays the session's
    (session_client::close closes it, which ends every operation). Owned by the session's read
    and write coroutines (shared_ptr), so a tcp session holds none. */
struct tls_stream {
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
    /// After a write: frees `out` (an idle session keeps nothing).
    void written() noexcept { protocol::byte_buffer().swap(out); }

    tcp::socket& socket;
    transport::tls_engine engine;
    protocol::byte_buffer out;      // the records of one write
    protocol::byte_buffer control;  // records the read side made (a key update's answer)
    protocol::byte_buffer early;  // plaintext that came with the handshake's last flight
};

/// True if `ec` from a read means the router closed the connection (eof).
bool is_eof(const boost::system::error_code& ec) noexcept;

}  // namespace moraine::client
