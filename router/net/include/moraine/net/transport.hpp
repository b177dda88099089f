#pragma once
// A connection's byte stream: plain TCP, or TLS over TCP (ssl endpoints).
#include <moraine/net/asio.hpp>

#include <boost/asio/ssl/stream.hpp>

#include <memory>

namespace moraine::net {

class tls_contexts;

/// TLS over a TCP socket that the stream owns.
using tls_stream = asio::ssl::stream<tcp::socket>;

/** What an ice_connection reads and writes: a TCP socket (tcp endpoints) or a TLS stream over
    one (ssl endpoints). The TLS contexts are shared and immutable; each TLS transport has its
    own SSL object. Not thread-safe: used on its connection's shard only. */
class transport {
public:
    /// Plain TCP over `s`.
    explicit transport(tcp::socket s) : plain_(std::move(s)) {}
    /// TLS over `s`: the server side of an accepted connection (`server` true) or the client
    /// side of an outgoing one, with `contexts`' server or client context.
    transport(tcp::socket s, std::shared_ptr<const tls_contexts> contexts, bool server);
    transport(transport&&) noexcept = default;
    transport& operator=(transport&&) noexcept = default;
    ~transport();

    /// The TCP socket: the transport itself, or the one under TLS.
    tcp::socket& socket() noexcept { return tls_ ? tls_->next_layer() : plain_; }
    const tcp::socket& socket() const noexcept { return tls_ ? tls_->next_layer() : plain_; }
    /// True for TLS.
    bool secure() const noexcept { return tls_ != nullptr; }
    /// The TLS stream; only if secure().
    tls_stream& tls() noexcept { return *tls_; }
    /// True for the accepting side of a TLS connection.
    bool server_side() const noexcept { return server_; }
    /// The shared TLS contexts (and settings); null for plain TCP.
    const std::shared_ptr<const tls_contexts>& contexts() const noexcept { return contexts_; }

private:
    tcp::socket plain_;
    std::shared_ptr<const tls_contexts> contexts_;
    std::unique_ptr<tls_stream> tls_;
    bool server_ = false;
};

}  // namespace moraine::net
