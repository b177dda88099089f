#pragma once
// Ice over WebSocket (ws and wss endpoints): the upgrade, then one Ice message per binary frame.
#include <moraine/protocol/bytes.hpp>
#include <moraine/net/asio.hpp>

#include <boost/asio/ssl/stream.hpp>

#include <memory>
#include <string>
#include <utility>

namespace moraine::net {

/// The WebSocket subprotocol Ice uses (docs/transports.md §1.1).
inline constexpr std::string_view ice_ws_protocol = "ice.zeroc.com";

/** A WebSocket (Boost.Beast, RFC 6455) over a TCP socket it owns (ws), or over a TLS stream
    (wss) that the transport owns and that outlives this object. Compatible with IceWS 3.7
    (docs/transports.md §1): subprotocol `ice.zeroc.com`, no extension (permessage-deflate is
    never accepted), each Ice message in exactly one binary frame. Ping, pong and close frames
    are answered by Beast. One read and one write may be in flight at once; not thread-safe
    otherwise (the connection's shard only). */
class ws_stream {
public:
    /// Over `socket` (ws), which it owns.
    explicit ws_stream(tcp::socket socket);
    /// Over `tls` (wss), after its TLS handshake.
    explicit ws_stream(asio::ssl::stream<tcp::socket>& tls);
    ~ws_stream();
    ws_stream(const ws_stream&) = delete;
    ws_stream& operator=(const ws_stream&) = delete;

    /// The TCP socket at the bottom.
    tcp::socket& socket() noexcept;
    /// "address:port" of the peer as it was at accept() or handshake(), for log lines (Beast
    /// closes the socket when a read fails, after which the socket no longer knows it).
    const std::string& peer() const noexcept { return peer_; }

    /** Server side: reads the HTTP upgrade request (head at most 8 KiB), refuses a
        `Sec-WebSocket-Protocol` other than `ice.zeroc.com` (absent is accepted, as IceWS
        does), and answers 101 with the protocol line only when the request had one. A bad
        request (no key, version not 13, not an upgrade) gets Beast's HTTP error answer.
        Not bounded in time: the caller's deadline closes the socket.
        @return the error, and in `why` a sentence for the log when refused (empty when the
        peer closed before sending a request: a port probe). */
    asio::awaitable<boost::system::error_code> accept(std::string& why);

    /// Client side: the upgrade to `host`:`port` for `resource` ("/" when empty), asking for
    /// `ice.zeroc.com`. @return the error (the caller closes).
    asio::awaitable<boost::system::error_code> handshake(const std::string& host, int port, const std::string& resource);

    /** Reads one whole message (up to the limit set by read_limit, in bytes). A text message
        is an error (errc::protocol_error), as IceWS refuses text. @return the error and the
        payload, valid until the next read. */
    asio::awaitable<std::pair<boost::system::error_code, protocol::byte_view>> read();

    /// Writes one Ice message, `head` then `tail`, as one binary frame (masked on the client
    /// side). @return the error.
    asio::awaitable<boost::system::error_code> write(asio::const_buffer head, asio::const_buffer tail);

    /// Largest message read() accepts, bytes (0 = none); a larger one fails the read with
    /// Beast's message_too_big and a close frame 1009.
    void read_limit(std::size_t bytes);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
    std::string peer_;
    void remember_peer();
};

}  // namespace moraine::net
