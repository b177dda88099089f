#pragma once
// What a client needs to talk TLS to a router's `ssl` or `wss` endpoint: whom to trust, who it is.
#include <string>

namespace moraine::client {

/// TLS client settings, turned into a tls_context once (tls_context::create) and shared by
/// sessions. Files are PEM. The router's certificate chain is always verified; TLS 1.2 or later.
/// (The `{}` initialisers let `tls_options{.ca_file = ...}` name any subset under -Wextra.)
struct tls_options {
    /// The CA certificate(s) the router's certificate must chain to (IceSSL.CAs of an Ice client).
    /// Empty: OpenSSL's default trust store (the system's CAs).
    std::string ca_file{};
    /// This client's certificate chain, presented when the router asks for it (IceSSL.CertFile):
    /// what createSessionFromSecureConnection and Glacier2.SSLPermissionsVerifier see. Empty: none.
    std::string cert_file{};
    /// The private key of cert_file (IceSSL.KeyFile). Empty: read from cert_file itself.
    std::string key_file{};
    /// Password of an encrypted key_file (IceSSL.Password). Never prompted for on a terminal:
    /// an encrypted key without the right password is errc::bad_tls_config.
    std::string key_password{};
    /// If not empty, the router's certificate must also name this DNS name or IP address, e.g.
    /// "router.example.com" or "127.0.0.1" (its subjectAltName, as OpenSSL's X509_check_host and
    /// X509_check_ip read it), as IceSSL.CheckCertName does. Empty: only the chain is checked.
    /// SNI carries this name, or else the router address's host, unless it is an IP address.
    std::string server_name{};
};

}  // namespace moraine::client
