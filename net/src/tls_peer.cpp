// A TLS connection's peer from OpenSSL: addresses, cipher, and the peer chain as PEM (tls_peer.hpp).
#include <moraine/net/tls_peer.hpp>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

namespace moraine::net {
namespace {

struct peer_free {
    void operator()(BIO* p) const noexcept { BIO_free(p); }
    void operator()(X509* p) const noexcept { X509_free(p); }
};
template <class T>
using peer_owned = std::unique_ptr<T, peer_free>;

// What was written to a memory BIO.
std::string contents(BIO* bio) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

peer_owned<BIO> memory_bio() {
    peer_owned<BIO> bio(BIO_new(BIO_s_mem()));
    if (!bio) throw std::bad_alloc();
    return bio;
}

// PEM_write_bio_X509 writes "-----BEGIN CERTIFICATE-----\n", 64-column base64 lines and the
// END line, each ending in "\n": IceSSL's encoding of SSLInfo.certs.
std::string to_pem(X509* cert) {
    peer_owned<BIO> bio = memory_bio();
    if (PEM_write_bio_X509(bio.get(), cert) != 1) throw std::bad_alloc();  // a memory BIO fails only so
    return contents(bio.get());
}

std::vector<std::string> peer_chain(SSL* ssl) {
    peer_owned<X509> leaf(SSL_get1_peer_certificate(ssl));
    if (!leaf) return {};
    std::vector<std::string> pems;
    // The verified chain includes the trusted root the peer need not have sent. It is absent on a
    // resumed session (nothing was verified), and partial when verification failed.
    STACK_OF(X509)* verified = SSL_get_verify_result(ssl) == X509_V_OK ? SSL_get0_verified_chain(ssl) : nullptr;
    if (verified && sk_X509_num(verified) > 0) {
        for (int i = 0; i < sk_X509_num(verified); ++i) pems.push_back(to_pem(sk_X509_value(verified, i)));
        return pems;
    }
    pems.push_back(to_pem(leaf.get()));
    // As sent: a client's view of it starts with the leaf, a server's does not.
    STACK_OF(X509)* sent = SSL_get_peer_cert_chain(ssl);
    for (int i = 0; sent && i < sk_X509_num(sent); ++i)
        if (X509* c = sk_X509_value(sent, i); X509_cmp(c, leaf.get()) != 0) pems.push_back(to_pem(c));
    return pems;
}

}  // namespace

tls_peer describe_tls_peer(SSL* ssl, const boost::asio::ip::tcp::socket& s) {
    tls_peer info;
    boost::system::error_code ec;
    if (const auto remote = s.remote_endpoint(ec); !ec) {
        info.remote_host = remote.address().to_string();
        info.remote_port = remote.port();
    }
    if (const auto local = s.local_endpoint(ec); !ec) {
        info.local_host = local.address().to_string();
        info.local_port = local.port();
    }
    if (const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl)) info.cipher = SSL_CIPHER_get_name(cipher);
    info.certs = peer_chain(ssl);
    return info;
}

std::string peer_subject(SSL* ssl) {
    peer_owned<X509> leaf(SSL_get1_peer_certificate(ssl));
    if (!leaf) return {};
    peer_owned<BIO> bio = memory_bio();
    X509_NAME_print_ex(bio.get(), X509_get_subject_name(leaf.get()), 0, XN_FLAG_RFC2253);
    return contents(bio.get());
}

}  // namespace moraine::net
