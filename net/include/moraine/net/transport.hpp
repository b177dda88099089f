#pragma once
// A connection's byte stream: plain TCP, TLS over TCP (ssl), WebSocket over either (ws, wss).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/net/asio.hpp>

#include <openssl/ssl.h>

#include <memory>

namespace moraine::transport {
class tls_engine;
}

namespace moraine::net {

class tls_contexts;

/// The layers a connection speaks over TCP, after its endpoint type.
enum class transport_kind { tcp, ssl, ws, wss };

/// The kind serving or reaching `ep` (tcp for anything not ssl, ws or wss).
transport_kind kind_of(const protocol::endpoint& ep) noexcept;

/** What an ice_connection reads and writes: a TCP socket (tcp endpoints), with TLS over it (ssl,
    wss: a transport::tls_engine that the connection drives over its own reads and writes) and
    WebSocket framing (ws, wss: transport's WebSocket codec, docs/transports.md §1) as the kind
    says. The TLS contexts are shared and immutable; each TLS transport has its own SSL object. The TCP socket keeps its
    address when the transport moves (connections keep a reference to it). Not thread-safe:
    used on its connection's shard only. */
class transport {
public:
    /// `kind` over `s`, on the accepting (`server` true) or connecting side. TLS (ssl, wss) uses
    /// `contexts`' server or client context; `contexts` is needed for those only
    /// (std::invalid_argument when missing there).
    transport(tcp::socket s, transport_kind kind, std::shared_ptr<const tls_contexts> contexts, bool server);
    transport(transport&&) noexcept;
    transport& operator=(transport&&) noexcept;
    ~transport();

    /// The TCP socket: the transport itself, or the one under TLS or WebSocket.
    tcp::socket& socket() noexcept { return socket_; }
    const tcp::socket& socket() const noexcept { return socket_; }
    /// True for TLS (ssl and wss).
    bool secure() const noexcept { return engine_ != nullptr; }
    /// The TLS engine of an ssl or wss transport; null for tcp and ws.
    moraine::transport::tls_engine* engine() noexcept { return engine_.get(); }
    /// The SSL of a TLS transport (either kind), for its peer's certificate and the cipher;
    /// null without TLS.
    SSL* ssl() const noexcept;
    /// True for WebSocket (ws and wss).
    bool websocket() const noexcept { return kind_ == transport_kind::ws || kind_ == transport_kind::wss; }
    /// True for the accepting side.
    bool server_side() const noexcept { return server_; }
    /// The shared TLS contexts (and settings); null without TLS.
    const std::shared_ptr<const tls_contexts>& contexts() const noexcept { return contexts_; }

private:
    tcp::socket socket_;
    std::shared_ptr<const tls_contexts> contexts_;
    std::unique_ptr<moraine::transport::tls_engine> engine_;  // ssl, wss
    transport_kind kind_ = transport_kind::tcp;
    bool server_ = false;
};

}  // namespace moraine::net
