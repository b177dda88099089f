#pragma once
// What a TLS connection shows of its peer: addresses, the cipher suite and the certificate chain.
// Services above the runtime turn it into their own types (the router: Glacier2::SSLInfo).
#include <boost/asio/ip/tcp.hpp>

#include <openssl/types.h>

#include <string>
#include <vector>

namespace moraine::net {

/// One TLS connection's peer, as this side sees it (the fields IceSSL's connection info gives).
struct tls_peer {
    std::string remote_host;         ///< the peer's address, e.g. "127.0.0.1" or "::1" (no brackets)
    int remote_port = 0;             ///< the peer's TCP port
    std::string local_host;          ///< this side's address
    int local_port = 0;              ///< this side's TCP port
    std::string cipher;              ///< OpenSSL's name of the negotiated suite, e.g. "TLS_AES_256_GCM_SHA384"
    std::vector<std::string> certs;  ///< the peer's chain as PEM, leaf first; empty if it sent none
};

/** Describes the connection of `ssl`, whose handshake has completed, over socket `s`.
    certs is the chain OpenSSL verified (leaf, intermediates, trusted root) when verification
    succeeded, otherwise the leaf and whatever chain the peer sent (a server that did not ask for
    a certificate gets none). Each is PEM text with "\n" line ends, ending in "\n", as IceSSL gives.
    Hosts and ports are left empty and 0 if the socket has no address (closed meanwhile).
    Never throws but std::bad_alloc. */
tls_peer describe_tls_peer(SSL* ssl, const boost::asio::ip::tcp::socket& s);

/// The subject of the peer's certificate in one-line RFC 2253 form ("CN=client,O=Example"), for
/// logs; empty if the peer sent none.
std::string peer_subject(SSL* ssl);

}  // namespace moraine::net
