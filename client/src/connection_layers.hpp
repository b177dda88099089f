#pragma once
// The TLS and WebSocket layers of one router connection (private to the library).
#include <moraine/client/router_address.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/layered_stream.hpp>
#include <moraine/transport/tls_engine.hpp>

#include <optional>

namespace moraine::client {

class tls_context;

/** What an ssl, ws or wss connection has above its socket: transport's TLS engine (ssl, wss)
    and the transport::layered_stream over it, the same codec the router's connections run, in
    the client role (masks its frames). A tcp connection has none. The
    two buffers are empty whenever nothing waits to be sent: an idle connection keeps only
    OpenSSL's state and the codec's few bytes. Not movable: the codec points at the engine. */
struct connection_layers {
    /** For router address `a` (its tls and websocket flags); `tls` must be set for a TLS
        address. Sends SNI: the context's server_name, else the router's host, unless that is an
        IP address. The handshakes are transport::client_handshake's (router_connection::open). */
    connection_layers(const router_address& a, const tls_context* tls);
    connection_layers(const connection_layers&) = delete;
    connection_layers& operator=(const connection_layers&) = delete;

    std::optional<transport::tls_engine> engine;  ///< ssl, wss; its handshake is the connection's
    transport::layered_stream codec;              ///< over `engine` if any
    protocol::byte_buffer control;  ///< wire bytes the read side made (answers): before the next batch
    protocol::byte_buffer wire;     ///< the bytes of the write under way
    bool peer_closed = false;       ///< the router's close frame was read: our answer goes, then the end
};

}  // namespace moraine::client
