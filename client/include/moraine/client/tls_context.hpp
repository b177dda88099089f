#pragma once
// The loaded TLS client settings that sessions to `ssl` and `wss` router endpoints share.
#include <moraine/client/error.hpp>
#include <moraine/client/tls_options.hpp>

#include <boost/asio/ssl/context.hpp>
#include <memory>

namespace moraine::client {

/** tls_options loaded once: the CA file, the client certificate and key are read here, not per
    session, so thousands of sessions share one OpenSSL context. Immutable once made: share it
    (session_options::tls) between sessions on any threads. */
class tls_context {
public:
    /** Reads and checks the files of `opts`.
        @return the context; or nullptr with `err` = errc::bad_tls_config and a detail naming the
        file and OpenSSL's reason: a file missing or not PEM, an encrypted key without the right
        key_password, a key that does not match cert_file, key_file without cert_file. */
    static std::shared_ptr<const tls_context> create(const tls_options& opts, error_info& err);

    tls_context(const tls_context&) = delete;
    tls_context& operator=(const tls_context&) = delete;

    /// The settings it was made from, key_password cleared.
    const tls_options& options() const noexcept { return opts_; }

    /// The OpenSSL context each TLS session starts from (`asio::ssl::stream` needs it non-const).
    /// Tune it (ciphers...) only before the first session uses it: sessions only read it.
    boost::asio::ssl::context& native_context() const noexcept { return ctx_; }

private:
    explicit tls_context(tls_options opts);

    tls_options opts_;
    mutable boost::asio::ssl::context ctx_;
};

}  // namespace moraine::client
