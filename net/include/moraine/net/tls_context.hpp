#pragma once
// The server and client TLS contexts, built once from tls_config and shared by every I/O thread.
#include <moraine/net/tls_config.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string_view>

namespace moraine::net {

/** The OpenSSL contexts of ssl endpoints: `server()` for accepted connections, `client()` for
    outgoing ones, both loaded with the same certificate, CAs, protocols and ciphers.
    Thread-safety: immutable after create(). Every shard shares one instance and makes its own
    `ssl::stream<tcp::socket>(socket, contexts->server())` per connection; OpenSSL allows
    concurrent SSL_new and handshakes on one SSL_CTX as long as nobody changes it, so never
    call a setter on these contexts after create(). */
class tls_contexts {
public:
    /** Builds both contexts from `cfg`, resolving relative paths against cfg.default_dir.
        The certificate and key are read once; the password is not kept.
        @throws config_error naming the key at fault (as key_name(cfg, ...) spells it) and the
        resolved file: CertFile (unreadable or not a certificate), KeyFile (unreadable, no key,
        key not matching the certificate), Password (encrypted key or PKCS#12 and a missing or
        wrong password), CAs (unreadable), Protocols (unknown name), Ciphers (no usable cipher),
        VerifyPeer (not 0..2), VerifyDepthMax (< 0), HandshakeTimeout (<= 0). */
    static std::shared_ptr<const tls_contexts> create(const tls_config& cfg);

    tls_contexts(const tls_contexts&) = delete;
    tls_contexts& operator=(const tls_contexts&) = delete;

    /// The context for accepted connections. Non-const only because ssl::stream's constructor
    /// takes `context&`; see the class comment.
    boost::asio::ssl::context& server() const noexcept { return server_; }
    /// The context for outgoing connections; call prepare_client on each stream made from it.
    boost::asio::ssl::context& client() const noexcept { return client_; }
    /// The settings the contexts were built from, password cleared.
    const tls_config& config() const noexcept { return config_; }
    /// Whether cert_file was set, so that server() can complete a handshake.
    bool has_certificate() const noexcept { return !config_.cert_file.empty(); }

private:
    explicit tls_contexts(const tls_config& cfg);

    tls_config config_;
    // mutable: handed out as context& for ssl::stream, which only reads it (see class comment).
    mutable boost::asio::ssl::context server_;
    mutable boost::asio::ssl::context client_;
};

/** Prepares an outgoing connection's SSL (from tls_contexts::client()) before its handshake:
    sends `host` as SNI if it is a DNS name (RFC 6066 forbids IP literals there) and, when
    cfg.check_cert_name, makes verification require a certificate for `host` (DNS name, or an
    IP literal matched against IP subjectAltNames). `host` is the endpoint's `-h`, with or
    without [brackets] or a %zone.
    @return an error if the expected name cannot be set (empty or malformed `host`); the SSL
    then fails every handshake, so a caller that ignores the result still never connects to
    an unchecked server. Per connection; touches only `ssl`. */
boost::system::error_code prepare_client(SSL* ssl, const tls_config& cfg, std::string_view host);

/** Stops start-up when an ssl endpoint is configured without a certificate, which would make
    every handshake on it fail. `endpoint_key` names the setting holding the ssl endpoint
    (e.g. "Glacier2.Client.Endpoints").
    @throws config_error naming CertFile: "an ssl endpoint in KEY needs a certificate: set
    IceSSL.CertFile (and IceSSL.KeyFile)" (tls.* names when cfg.yaml). */
void require_server_certificate(const tls_config& cfg, std::string_view endpoint_key);

}  // namespace moraine::net
