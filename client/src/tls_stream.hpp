#pragma once
// The TLS layer of one session over an `ssl` router address (private to the library).
#include <moraine/client/asio.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/client/tls_context.hpp>

#include <boost/asio/ssl/stream.hpp>

#include <array>
#include <cstddef>

namespace moraine::client {

/// Bytes a TLS session reads at a time, into its own buffer.
inline constexpr std::size_t tls_read_chunk_bytes = 8 * 1024;

/** An asio ssl::stream over the session's socket, and the session's read buffer. The socket
    stays the session's (session_client::close closes it, which ends every TLS operation).
    Owned by the session's read and write coroutines (shared_ptr), so a tcp session holds none.
    The read buffer is never shared between sessions, unlike the tcp path's per-thread one:
    ssl::stream fills it inside the operation, before the reading coroutine resumes, while
    other sessions on the thread run. */
struct tls_stream {
    /// A client stream on `socket` (connected, not yet handshaken) from `ctx`. Sends SNI: the
    /// context's server_name, else the router's host, unless that is an IP address.
    tls_stream(tcp::socket& socket, const tls_context& ctx, const router_address& router);

    asio::ssl::stream<tcp::socket&> stream;
    std::array<std::byte, tls_read_chunk_bytes> in;
};

/// errc::tls_handshake_failed for a handshake that ended with `ec`: detail = the router's
/// address, OpenSSL's reason, and the certificate check's verdict when that was the cause
/// ("127.0.0.1:4064: certificate verify failed (SSL routines): hostname mismatch").
error_info handshake_error(tls_stream& t, const router_address& router, const boost::system::error_code& ec);

/// True if `ec` from a read means the router closed the connection: eof (tcp, or TLS
/// close_notify), or the socket closed without a close_notify (ssl::error::stream_truncated).
bool is_eof(const boost::system::error_code& ec) noexcept;

/// True if `ec` comes from OpenSSL (a TLS alert or protocol error), not from the socket.
bool is_tls_error(const boost::system::error_code& ec) noexcept;

}  // namespace moraine::client
