#pragma once
// Glacier2.AddConnectionContext: the `_con.*` context entries that describe a client's connection.
#include <moraine/protocol/context.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace moraine::router {

/// What the `_con.*` entries say about one client connection.
struct connection_facts {
    std::string type;            ///< "tcp", "ssl", "ws" or "wss"
    std::string local_address;   ///< the router's end
    std::uint16_t local_port = 0;
    std::string remote_address;  ///< the client's end
    std::uint16_t remote_port = 0;
    std::string cipher;          ///< ssl only: OpenSSL's name of the negotiated suite
    std::string peer_cert;       ///< ssl only: the client's certificate as PEM, empty without one
};

/// True for the keys the router reserves for `_con.*` entries (`_con.type`, `_con.localAddress`,
/// `_con.localPort`, `_con.remoteAddress`, `_con.remotePort`, `_con.cipher`, `_con.peerCert`);
/// other `_con.`-prefixed keys are ordinary entries.
bool is_connection_context_key(std::string_view key) noexcept;

/** The `_con.*` entries for `f`, sorted by key: type, addresses and ports always; `_con.cipher`
    when `f.cipher` is set, `_con.peerCert` when `f.peer_cert` is (glacier2router 3.7.8 gives
    both on ssl connections, the certificate only if the client sent one). */
protocol::context make_connection_context(const connection_facts& f);

/** The context of the router's PermissionsVerifier / SSLPermissionsVerifier / SessionManager /
    SSLSessionManager call for a createSession* request with context `client`: the client's
    entries without the reserved keys (whatever AddConnectionContext says: a client cannot pass
    its own), plus `con` when `add_connection_context` is 1 or 2 (both add them to these calls,
    as glacier2router 3.7.8 does). */
protocol::context session_call_context(const protocol::context_view& client, int add_connection_context,
                                       const protocol::context& con);

}  // namespace moraine::router
