#pragma once
// The WebSocket layer of one session over a `ws` router address (private to the library).
#include <moraine/client/asio.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/protocol/bytes.hpp>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <utility>

namespace moraine::client {

/** A Beast WebSocket (client role) over the session's socket, and its read buffer. The socket
    stays the session's (session_client::close closes it, which ends every operation). Owned by
    the session's read and write coroutines (shared_ptr), so a tcp session holds none. IceWS
    3.7's rules: subprotocol ice.zeroc.com, no extension, one Ice message per binary frame. */
struct ws_client_stream {
    explicit ws_client_stream(tcp::socket& socket);

    /// The upgrade to `router` (Host: host:port, target: its resource).
    asio::awaitable<boost::system::error_code> handshake(const router_address& router);
    /// One whole message; the view is valid until the next read. A text message is
    /// errc::protocol_error.
    asio::awaitable<std::pair<boost::system::error_code, protocol::byte_view>> read();
    /// One Ice message in one binary frame (masked, as a client's must be).
    asio::awaitable<boost::system::error_code> write(asio::const_buffer message);

    boost::beast::websocket::stream<tcp::socket&> stream;
    boost::beast::flat_buffer in;
};

}  // namespace moraine::client
