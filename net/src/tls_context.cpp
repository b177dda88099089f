// Builds tls_contexts: reads the certificate, key and CAs once and applies IceSSL's settings to an
// OpenSSL server and client context. Every failure becomes a config_error naming the key the user
// must fix and the file it points to, as resolved.
#include <moraine/net/tls_context.hpp>

#include <moraine/net/config_error.hpp>

#include <boost/asio/ip/address.hpp>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace moraine::net {
namespace {

namespace ssl = boost::asio::ssl;

// Certificate files are a few KiB; the cap stops a path such as /dev/zero from reading forever.
constexpr std::size_t max_file_bytes = 1 << 20;

// unique_ptr deleters for the OpenSSL objects this file owns.
struct openssl_free {
    void operator()(BIO* p) const noexcept { BIO_free(p); }
    void operator()(X509* p) const noexcept { X509_free(p); }
    void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
    void operator()(PKCS12* p) const noexcept { PKCS12_free(p); }
    void operator()(STACK_OF(X509)* p) const noexcept { sk_X509_pop_free(p, X509_free); }
};
template <class T>
using owned = std::unique_ptr<T, openssl_free>;

struct file_close {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

config_error error(const tls_config& cfg, std::string_view ice_key, const std::string& reason) {
    return config_error(cfg.source, key_name(cfg, ice_key), reason);
}

// The cause of the last OpenSSL failure; the queue is then cleared so that it cannot leak into
// the diagnosis of a later call. The oldest entry is the cause ("no start line"); the later ones
// only say which layer gave up ("PEM lib").
std::string openssl_reason() {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return "unknown OpenSSL error";
    const char* reason = ERR_reason_error_string(e);
    return reason ? reason : "OpenSSL error " + std::to_string(e);
}

// IceSSL resolves a relative path against IceSSL.DefaultDir, without falling back to the
// working directory.
std::string resolve(const tls_config& cfg, const std::string& path) {
    if (path.empty() || cfg.default_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
    return (std::filesystem::path(cfg.default_dir) / path).string();
}

// The whole of `path`. Read here rather than by OpenSSL so that a missing or unreadable file is
// reported with errno's words ("cannot read certificate FILE: No such file or directory").
std::string read_file(const tls_config& cfg, std::string_view ice_key, std::string_view what, const std::string& path) {
    auto fail = [&](const std::string& why) {
        return error(cfg, ice_key, "cannot read " + std::string(what) + " " + path + ": " + why);
    };
    std::unique_ptr<std::FILE, file_close> f(std::fopen(path.c_str(), "rb"));
    if (!f) throw fail(std::strerror(errno));
    std::string bytes;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, f.get())) {
        bytes.append(buf, n);
        if (bytes.size() > max_file_bytes) throw fail("larger than 1 MiB");
    }
    if (std::ferror(f.get())) throw fail(std::strerror(errno));
    return bytes;
}

// Whether PEM `text` holds a block whose type ends with `type` ("PRIVATE KEY" matches
// "ENCRYPTED PRIVATE KEY", "EC PRIVATE KEY"...).
bool has_pem_block(const std::string& text, std::string_view type) {
    return text.find("-----BEGIN ") != std::string::npos && text.find(std::string(type) + "-----") != std::string::npos;
}

owned<BIO> memory_bio(const std::string& bytes) {
    owned<BIO> bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
    if (!bio) throw std::bad_alloc();
    return bio;
}

void check_numbers(const tls_config& cfg) {
    if (cfg.verify_peer < 0 || cfg.verify_peer > 2)
        throw error(cfg, "VerifyPeer", "expected 0, 1 or 2, got " + std::to_string(cfg.verify_peer));
    if (cfg.verify_depth_max < 0)
        throw error(cfg, "VerifyDepthMax", "expected 0 (no limit) or more, got " + std::to_string(cfg.verify_depth_max));
    if (cfg.handshake_timeout_ms <= 0)
        throw error(cfg, "HandshakeTimeout", "expected milliseconds > 0, got " + std::to_string(cfg.handshake_timeout_ms));
}

// ---- protocols -------------------------------------------------------------------------------

// OpenSSL's version for one of IceSSL's protocol names, or 0 if unknown. IceSSL lowercases the
// name and takes ssl3/sslv3, tls/tls1/tlsv1/tls1_0/tlsv1_0, tls1_1/tlsv1_1...; "tlsv1.2" is the
// spelling OpenSSL prints, accepted too.
int protocol_version(std::string name) {
    for (char& c : name) c = c == '.' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name.starts_with("tlsv") || name.starts_with("sslv")) name.erase(3, 1);
    if (name == "ssl3") return SSL3_VERSION;
    if (name == "tls" || name == "tls1" || name == "tls1_0") return TLS1_VERSION;
    if (name == "tls1_1") return TLS1_1_VERSION;
    if (name == "tls1_2") return TLS1_2_VERSION;
    if (name == "tls1_3") return TLS1_3_VERSION;
    return 0;
}

// The lowest and highest version cfg.protocols names; TLS 1.2..1.3 when it names none.
std::pair<int, int> protocol_range(const tls_config& cfg) {
    int lo = 0;
    int hi = 0;
    for (const std::string& entry : cfg.protocols) {
        // IceSSL splits its property on commas and blanks; an entry may hold the whole list.
        constexpr std::string_view separators = ", \t\r\n";
        for (std::size_t at = entry.find_first_not_of(separators); at != std::string::npos;
             at = entry.find_first_not_of(separators, at)) {
            const std::size_t end = std::min(entry.find_first_of(separators, at), entry.size());
            const std::string word = entry.substr(at, end - at);
            const int v = protocol_version(word);
            if (v == 0)
                throw error(cfg, "Protocols",
                            "unknown protocol \"" + word + "\" (expected tls1_0, tls1_1, tls1_2 or tls1_3)");
            lo = lo == 0 ? v : std::min(lo, v);
            hi = std::max(hi, v);
            at = end;
        }
    }
    if (lo == 0) return {TLS1_2_VERSION, TLS1_3_VERSION};
    return {lo, hi};
}

void set_protocols(SSL_CTX* ctx, const tls_config& cfg, std::pair<int, int> range) {
    if (SSL_CTX_set_min_proto_version(ctx, range.first) != 1 || SSL_CTX_set_max_proto_version(ctx, range.second) != 1)
        throw error(cfg, "Protocols", "not supported by this OpenSSL: " + openssl_reason());
}

void set_ciphers(SSL_CTX* ctx, const tls_config& cfg) {
    // OpenSSL skips unknown names and fails only when nothing usable is left.
    if (!cfg.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, cfg.ciphers.c_str()) != 1)
        throw error(cfg, "Ciphers", "no usable cipher in \"" + cfg.ciphers + "\": " + openssl_reason());
}

// ---- trust -----------------------------------------------------------------------------------

void load_cas(SSL_CTX* ctx, const tls_config& cfg) {
    if (!cfg.cas.empty()) {
        const std::string path = resolve(cfg, cfg.cas);
        std::error_code ignored;
        const bool dir = std::filesystem::is_directory(path, ignored);
        // A directory is searched by hashed name at each handshake; a file is loaded now, after
        // read_file has given a missing one errno's words.
        if (!dir) read_file(cfg, "CAs", "CA certificates", path);
        const int ok = dir ? SSL_CTX_load_verify_locations(ctx, nullptr, path.c_str())
                           : SSL_CTX_load_verify_locations(ctx, path.c_str(), nullptr);
        if (ok != 1) throw error(cfg, "CAs", "cannot read CA certificates " + path + ": " + openssl_reason());
    }
    if (cfg.use_platform_cas && SSL_CTX_set_default_verify_paths(ctx) != 1)
        throw error(cfg, "UsePlatformCAs", "cannot load OpenSSL's default CA store: " + openssl_reason());
}

void set_verify_depth(SSL_CTX* ctx, const tls_config& cfg) {
    // IceSSL counts the whole chain; OpenSSL's depth d counts intermediates only and admits the
    // leaf, d CAs and the trust anchor: d + 2 certificates.
    if (cfg.verify_depth_max > 0) SSL_CTX_set_verify_depth(ctx, std::max(cfg.verify_depth_max - 2, 0));
}

// ---- this side's certificate -----------------------------------------------------------------

// This side's certificate, the rest of its chain and its private key; read once for both contexts.
struct identity {
    owned<X509> cert;  // null: cert_file not set
    owned<STACK_OF(X509)> chain;
    owned<EVP_PKEY> key;
};

// Hands OpenSSL the configured password when a key turns out to be encrypted, and records that it
// asked: a read that then fails means a wrong or missing password rather than a damaged file.
struct password_prompt {
    const std::string& password;
    bool asked = false;
};

int give_password(char* buf, int size, int /*rwflag*/, void* prompt_ptr) {
    auto* prompt = static_cast<password_prompt*>(prompt_ptr);
    prompt->asked = true;
    const std::string& pw = prompt->password;
    if (pw.empty() || pw.size() > static_cast<std::size_t>(size)) return -1;
    std::memcpy(buf, pw.data(), pw.size());
    return static_cast<int>(pw.size());
}

// `bytes` as a DER PKCS#12 bundle, or null when they are something else (PEM, then).
owned<PKCS12> as_pkcs12(const std::string& bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    owned<PKCS12> p12(d2i_PKCS12(nullptr, &p, static_cast<long>(bytes.size())));
    ERR_clear_error();  // not being PKCS#12 is no error
    return p12;
}

identity read_pkcs12(const tls_config& cfg, const std::string& path, PKCS12* p12) {
    EVP_PKEY* key = nullptr;
    X509* cert = nullptr;
    STACK_OF(X509)* cas = nullptr;
    if (PKCS12_parse(p12, cfg.password.c_str(), &key, &cert, &cas) != 1) {
        const std::string reason = openssl_reason();
        const bool bad_password = PKCS12_mac_present(p12) && PKCS12_verify_mac(p12, cfg.password.c_str(), -1) != 1;
        ERR_clear_error();
        if (bad_password)
            throw error(cfg, "Password", cfg.password.empty() ? "the PKCS#12 file " + path + " is encrypted and no password is set"
                                                              : "wrong password for the PKCS#12 file " + path);
        throw error(cfg, "CertFile", "cannot read PKCS#12 file " + path + ": " + reason);
    }
    identity id{owned<X509>(cert), owned<STACK_OF(X509)>(cas), owned<EVP_PKEY>(key)};
    if (!id.cert) throw error(cfg, "CertFile", "no certificate in PKCS#12 file " + path);
    return id;
}

// The certificate at the head of PEM `bytes` and the chain certificates after it.
identity read_pem_chain(const tls_config& cfg, const std::string& path, const std::string& bytes) {
    owned<BIO> bio = memory_bio(bytes);
    identity id;
    id.cert.reset(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!id.cert) {
        // OpenSSL's "no start line" says little to someone who gave a DER or key file.
        const std::string reason = openssl_reason();
        throw error(cfg, "CertFile", "cannot read certificate " + path + ": " +
                                         (has_pem_block(bytes, "CERTIFICATE") ? reason : "neither a PEM certificate nor PKCS#12"));
    }
    id.chain.reset(sk_X509_new_null());
    if (!id.chain) throw std::bad_alloc();
    while (owned<X509> ca{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
        if (sk_X509_push(id.chain.get(), ca.get()) == 0) throw std::bad_alloc();
        ca.release();  // the stack owns it now
    }
    // The loop ends with "no start line" at the end of the text; anything else is a damaged CA.
    const unsigned long e = ERR_peek_last_error();
    if (ERR_GET_LIB(e) != ERR_LIB_PEM || ERR_GET_REASON(e) != PEM_R_NO_START_LINE)
        throw error(cfg, "CertFile", "cannot read the chain after the certificate in " + path + ": " + openssl_reason());
    ERR_clear_error();
    return id;
}

// The private key in `path`: key_file, or cert_file when that holds the key too.
owned<EVP_PKEY> read_private_key(const tls_config& cfg, const std::string& path) {
    const std::string bytes = read_file(cfg, "KeyFile", "private key", path);
    owned<BIO> bio = memory_bio(bytes);
    password_prompt prompt{cfg.password};
    owned<EVP_PKEY> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, &give_password, &prompt));
    if (key) return key;
    // OpenSSL 3 says "unsupported" when there is no key at all: say that instead.
    const std::string reason = has_pem_block(bytes, "PRIVATE KEY") ? openssl_reason() : "no PEM private key in it";
    ERR_clear_error();
    if (prompt.asked)
        throw error(cfg, "Password", cfg.password.empty() ? "the private key in " + path + " is encrypted and no password is set"
                                                          : "wrong password for the private key in " + path);
    if (cfg.key_file.empty())
        throw error(cfg, "KeyFile", "cannot read private key " + path + ": " + reason + "; set " + key_name(cfg, "KeyFile"));
    throw error(cfg, "KeyFile", "cannot read private key " + path + ": " + reason);
}

identity read_identity(const tls_config& cfg) {
    if (cfg.cert_file.empty()) {
        if (!cfg.key_file.empty())
            throw error(cfg, "KeyFile", "a private key needs its certificate: set " + key_name(cfg, "CertFile"));
        return {};
    }
    const std::string cert_path = resolve(cfg, cfg.cert_file);
    const std::string bytes = read_file(cfg, "CertFile", "certificate", cert_path);
    owned<PKCS12> p12 = as_pkcs12(bytes);
    identity id = p12 ? read_pkcs12(cfg, cert_path, p12.get()) : read_pem_chain(cfg, cert_path, bytes);
    const std::string key_path = cfg.key_file.empty() ? cert_path : resolve(cfg, cfg.key_file);
    if (!cfg.key_file.empty() || !id.key) id.key = read_private_key(cfg, key_path);
    if (X509_check_private_key(id.cert.get(), id.key.get()) != 1) {
        ERR_clear_error();
        throw error(cfg, "KeyFile", "the private key in " + key_path + " does not match the certificate in " + cert_path);
    }
    return id;
}

void use_identity(SSL_CTX* ctx, const tls_config& cfg, const identity& id) {
    if (!id.cert) return;
    // Fails on what the security level refuses: a small key, a weak signature ("ca md too weak").
    if (SSL_CTX_use_cert_and_key(ctx, id.cert.get(), id.key.get(), id.chain.get(), 1) != 1)
        throw error(cfg, "CertFile", "cannot use certificate " + resolve(cfg, cfg.cert_file) + ": " + openssl_reason());
}

// ---- the two contexts ------------------------------------------------------------------------

void configure_common(SSL_CTX* ctx, const tls_config& cfg, std::pair<int, int> versions, const identity& id) {
    set_protocols(ctx, cfg, versions);
    set_ciphers(ctx, cfg);
    load_cas(ctx, cfg);
    use_identity(ctx, cfg, id);
    set_verify_depth(ctx, cfg);
    // Frees an idle connection's 16 KiB+ read and write buffers: most router clients are idle.
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
}

void configure_server(SSL_CTX* ctx, const tls_config& cfg) {
    constexpr int modes[] = {SSL_VERIFY_NONE, SSL_VERIFY_PEER, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT};
    SSL_CTX_set_verify(ctx, modes[cfg.verify_peer], nullptr);
    // Without an id context OpenSSL refuses to resume a session that carried a client certificate.
    static constexpr unsigned char session_context[] = "moraine";
    SSL_CTX_set_session_id_context(ctx, session_context, sizeof session_context - 1);
    // Ice never renegotiates, and a client asking to costs the server a full handshake each time.
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
}

void configure_client(SSL_CTX* ctx, const tls_config& cfg) {
    SSL_CTX_set_verify(ctx, cfg.verify_peer > 0 ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
}

// An endpoint's host as certificates spell it: no [brackets] around an IPv6 literal, no %zone
// (certificates hold none), no trailing dot of a fully qualified DNS name.
std::string bare_host(std::string_view host) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.find(':') != std::string_view::npos) host = host.substr(0, host.find('%'));  // only IPv6 has zones
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);
    return std::string(host);
}

// Fails every certificate: the fallback when the name to check could not be set.
int reject_all(int /*preverify_ok*/, X509_STORE_CTX* /*store*/) { return 0; }

}  // namespace

tls_contexts::tls_contexts(const tls_config& cfg)
    : config_(cfg), server_(ssl::context::tls_server), client_(ssl::context::tls_client) {
    config_.password.clear();  // needed only to read the key below
    ERR_clear_error();         // start the diagnosis from an empty queue
    check_numbers(cfg);
    const std::pair<int, int> versions = protocol_range(cfg);
    const identity id = read_identity(cfg);
    configure_common(server_.native_handle(), cfg, versions, id);
    configure_common(client_.native_handle(), cfg, versions, id);
    configure_server(server_.native_handle(), cfg);
    configure_client(client_.native_handle(), cfg);
}

std::shared_ptr<const tls_contexts> tls_contexts::create(const tls_config& cfg) {
    return std::shared_ptr<const tls_contexts>(new tls_contexts(cfg));  // the constructor is private
}

boost::system::error_code prepare_client(SSL* ssl, const tls_config& cfg, std::string_view host) {
    const std::string name = bare_host(host);
    boost::system::error_code not_ip;
    boost::asio::ip::make_address(name, not_ip);
    const bool ip = !not_ip;
    // SNI only helps the server pick a certificate; a name it cannot carry is simply not sent.
    if (!ip && !name.empty()) SSL_set_tlsext_host_name(ssl, name.c_str());
    if (!cfg.check_cert_name) {
        ERR_clear_error();
        return {};
    }
    int ok = 0;
    if (ip) {
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
    } else if (!name.empty()) {  // an empty name would clear the check rather than set it
        SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ok = SSL_set1_host(ssl, name.c_str());
    }
    ERR_clear_error();
    if (ok == 1) return {};
    SSL_set_verify(ssl, SSL_VERIFY_PEER, &reject_all);
    return make_error_code(boost::system::errc::invalid_argument);
}

void require_server_certificate(const tls_config& cfg, std::string_view endpoint_key) {
    if (!cfg.cert_file.empty()) return;
    throw error(cfg, "CertFile",
                "an ssl or wss endpoint in " + std::string(endpoint_key) + " needs a certificate: set " + key_name(cfg, "CertFile") +
                    " (and " + key_name(cfg, "KeyFile") + ")");
}

}  // namespace moraine::net
