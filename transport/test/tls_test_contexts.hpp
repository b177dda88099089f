#pragma once
// OpenSSL contexts for driving transport::tls_engine without files: a server with a fresh
// self-signed certificate and a client that does not verify it. Shared by the engine's tests and
// perf/bench_tls_write.cpp.
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

namespace moraine::transport::test {

struct ctx_deleter {
    void operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }
};
using ctx_ptr = std::unique_ptr<SSL_CTX, ctx_deleter>;

/// A server context with a fresh self-signed P-256 certificate for `common_name`, valid one hour.
inline ctx_ptr server_context(const char* common_name = "localhost") {
    ctx_ptr ctx(SSL_CTX_new(TLS_server_method()));
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1,
                               0);
    X509_set_issuer_name(cert, name);
    X509_sign(cert, key, EVP_sha256());
    SSL_CTX_use_certificate(ctx.get(), cert);
    SSL_CTX_use_PrivateKey(ctx.get(), key);
    X509_free(cert);
    EVP_PKEY_free(key);
    return ctx;
}

/// A client context that accepts any server certificate (the tests' peers are self-signed).
inline ctx_ptr client_context() {
    ctx_ptr ctx(SSL_CTX_new(TLS_client_method()));
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
    return ctx;
}

}  // namespace moraine::transport::test
