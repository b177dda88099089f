#pragma once
// TLS settings for ssl endpoints: IceSSL 3.7's keys (OpenSSL implementation) and their YAML names.
#include <string>
#include <string_view>
#include <vector>

namespace moraine::net {

/// TLS settings, one field per IceSSL 3.7 property with IceSSL's default, read from a property
/// file (`IceSSL.CertFile`) or YAML (`tls.cert_file`). Checked when tls_contexts::create loads them.
struct tls_config {
    /// Any IceSSL.* / tls.* key was given.
    bool configured = false;
    /// The file the settings came from, for messages.
    std::string source;
    /// Name keys as YAML does in messages (`tls.cert_file`) rather than as properties (`IceSSL.CertFile`).
    bool yaml = false;

    /// IceSSL.DefaultDir / tls.default_dir: the base of every relative path below; empty = the
    /// working directory.
    std::string default_dir;
    /// IceSSL.CAs / tls.cas: the CAs trusted to sign peer certificates: a PEM file, or a directory
    /// of PEM files in OpenSSL's hashed-name layout (`openssl rehash DIR`), as IceSSL on OpenSSL
    /// reads it. Empty = none.
    std::string cas;
    /// IceSSL.UsePlatformCAs / tls.use_platform_cas: also trust OpenSSL's default CA store.
    bool use_platform_cas = false;
    /// IceSSL.CertFile / tls.cert_file: this side's certificate in PEM, optionally followed by its
    /// chain (leaf first); or a DER PKCS#12 bundle (certificate, key and chain). Empty = none, and
    /// then an ssl endpoint cannot accept (require_server_certificate).
    std::string cert_file;
    /// IceSSL.KeyFile / tls.key_file: the PEM private key of cert_file; empty = the key stored in
    /// cert_file (PEM after the certificates, or inside the PKCS#12 bundle).
    std::string key_file;
    /// IceSSL.Password / tls.password: decrypts key_file or the PKCS#12 bundle; empty = none.
    std::string password;
    /// IceSSL.VerifyPeer / tls.verify_peer: 0 = a server does not ask for a client certificate and a
    /// client does not verify the server's; 1 = a server asks and verifies a certificate if one is
    /// sent, a client verifies; 2 = a server requires one, a client verifies. Other values are errors.
    int verify_peer = 2;
    /// IceSSL.VerifyDepthMax / tls.verify_depth_max: the longest peer chain accepted, leaf and root
    /// included (3 = leaf, one intermediate CA, root); 0 = no limit. OpenSSL always admits a leaf
    /// plus its trust anchor, so 1 behaves as 2.
    int verify_depth_max = 3;
    /// IceSSL.CheckCertName / tls.check_cert_name: a client checks that the server certificate names
    /// the host of the endpoint it connects to (DNS or IP subjectAltName; the CN when it has no DNS
    /// names). Needs verify_peer > 0: a client that verifies nothing checks no name either.
    bool check_cert_name = false;
    /// IceSSL.Protocols / tls.protocols: the TLS versions allowed, case-insensitive, as IceSSL spells
    /// them: ssl3, tls1_0 (tls, tls1), tls1_1, tls1_2, tls1_3, each also as tlsv1_2 or tlsv1.2;
    /// an entry may hold several separated by commas or blanks. OpenSSL takes a range, so a set with
    /// gaps allows every version between its lowest and highest. Empty = TLS 1.2 and 1.3.
    /// (OpenSSL 3 refuses TLS 1.0 and 1.1 unless ciphers ends with `@SECLEVEL=0`.)
    std::vector<std::string> protocols;
    /// IceSSL.Ciphers / tls.ciphers: an OpenSSL cipher list (`openssl ciphers`) for TLS 1.2 and
    /// below; TLS 1.3 suites are not affected. Empty = OpenSSL's default.
    std::string ciphers;
    /// Moraine.TLS.HandshakeTimeout / tls.handshake_timeout_ms: milliseconds an accepted or
    /// outgoing connection has to finish its TLS handshake before it is closed; an accepted ws
    /// or wss connection its WebSocket upgrade too (with or without TLS); must be > 0.
    int handshake_timeout_ms = 10000;
    /// Moraine.TLS.HandshakeThreads / tls.handshake_threads: threads that run accepted
    /// connections' TLS handshake steps beside the shards, at a lower priority (handshake_pool),
    /// so a flood of handshakes cannot hold up established sessions; 0 runs them on the shard
    /// that owns the connection. 0..64.
    int handshake_threads = 1;
};

/// One setting's names: IceSSL's short key, the property name and the YAML name.
struct tls_key {
    std::string_view ice;
    std::string_view property;
    std::string_view yaml;
};

/// Every key tls_config reads, in the order of its fields.
inline constexpr tls_key tls_keys[] = {
    {"DefaultDir", "IceSSL.DefaultDir", "tls.default_dir"},
    {"CAs", "IceSSL.CAs", "tls.cas"},
    {"UsePlatformCAs", "IceSSL.UsePlatformCAs", "tls.use_platform_cas"},
    {"CertFile", "IceSSL.CertFile", "tls.cert_file"},
    {"KeyFile", "IceSSL.KeyFile", "tls.key_file"},
    {"Password", "IceSSL.Password", "tls.password"},
    {"VerifyPeer", "IceSSL.VerifyPeer", "tls.verify_peer"},
    {"VerifyDepthMax", "IceSSL.VerifyDepthMax", "tls.verify_depth_max"},
    {"CheckCertName", "IceSSL.CheckCertName", "tls.check_cert_name"},
    {"Protocols", "IceSSL.Protocols", "tls.protocols"},
    {"Ciphers", "IceSSL.Ciphers", "tls.ciphers"},
    {"HandshakeTimeout", "Moraine.TLS.HandshakeTimeout", "tls.handshake_timeout_ms"},
};

/// The name the user wrote for IceSSL key `ice_key` ("CertFile"): "IceSSL.CertFile", or
/// "tls.cert_file" when cfg.yaml. A key not in tls_keys gets the "IceSSL." or "tls." prefix as is.
inline std::string key_name(const tls_config& cfg, std::string_view ice_key) {
    for (const tls_key& k : tls_keys)
        if (k.ice == ice_key) return std::string(cfg.yaml ? k.yaml : k.property);
    return (cfg.yaml ? "tls." : "IceSSL.") + std::string(ice_key);
}

}  // namespace moraine::net
