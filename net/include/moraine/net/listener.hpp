#pragma once
// Accepting connections on a shard: one SO_REUSEPORT acceptor per endpoint per shard (docs/style.md §7).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/net/asio.hpp>
#include <moraine/net/transport.hpp>
#include <moraine/net/unique_fd.hpp>

#include <sys/socket.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

namespace moraine::net {

class shard;
struct runtime_config;

/// Creates the connection object for an accepted connection (TCP, or TLS / WebSocket not yet
/// handshaken), on the accepting shard.
using accept_handler = std::function<void(shard&, transport)>;

/// SO_REUSEPORT as an asio socket option: every shard binds the same port and the kernel spreads
/// connections (and datagrams) over their sockets. set_option throws system_error if refused.
using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

/// The local address `ep` names for binding: any IPv4 address for an empty host, `*` or
/// `0.0.0.0`, else its literal address or, for a name, the first address it resolves to (a
/// blocking lookup: start-up only). @throws boost::system::system_error if the lookup fails.
asio::ip::address bind_address(asio::io_context& io, const protocol::endpoint& ep);

/// Connections start_accepting takes from the accept queue in one go, after the one it waited
/// for: a burst of connections leaves the queue at once instead of one per loop turn.
inline constexpr std::size_t accept_batch = 64;

/// The listen queue bind_listener asks for: cfg.tcp_backlog (Ice.TCP.Backlog), else SOMAXCONN
/// (4096 on Linux). The kernel caps it at net.core.somaxconn.
int listen_backlog(const runtime_config& cfg);

/** Binds `ep` (tcp, ssl, ws or wss; empty host or `*` = all interfaces) on `sh`'s io_context with SO_REUSEPORT,
    so every shard listens on the same port and the kernel spreads connections.
    @return the acceptor, listening. @throws boost::system::system_error if binding fails. */
tcp::acceptor bind_listener(shard& sh, const protocol::endpoint& ep);

/** Whether `fd`, a socket received from the running process (takeover), is IPv4 (true) or
    IPv6 (false), read with getsockname: what asio needs to adopt it (assign).
    @throws boost::system::system_error if getsockname fails, or address_family_not_supported
            ("adopting " + `what`) for any other family (e.g. a Unix socket). */
bool adopted_is_ipv4(const unique_fd& fd, std::string_view what);

/** Takes over `fd`, a listening TCP socket received from the running process (takeover), as
    an acceptor on `sh`'s io_context: its accept queue and port come with it, nothing is bound.
    @throws boost::system::system_error if it is not an IPv4 or IPv6 socket asio can adopt. */
tcp::acceptor adopt_listener(shard& sh, unique_fd fd);

/// Throws boost::system::system_error ("address in use") if another socket listens on `ep`,
/// which SO_REUSEPORT would otherwise let two processes share. Call once per endpoint, before
/// bind_listener on the shards.
void ensure_port_free(shard& sh, const protocol::endpoint& ep);

/// Whether no other socket is bound to `ep`'s address and port (a bind without SO_REUSEPORT
/// succeeds there); true for port 0. @throws boost::system::system_error for another error than
/// "address in use" (an address this host does not have, ...).
bool port_is_free(shard& sh, const protocol::endpoint& ep);

/// Who, besides this process's own shards, may listen on an endpoint's port.
enum class port_sharing {
    /// Nobody: another listener there stops start-up with "address in use" (the default).
    exclusive,
    /// Other processes that also bind it with SO_REUSEPORT under the same user (several routers
    /// on one client port, Moraine.Client.ReusePort): the kernel spreads new connections over
    /// the sockets of all of them, and a process that exits leaves the others serving the port.
    shared,
};

/// Accepts forever on `acceptor`, handing each connection to `on_accept` as a transport of
/// `kind` (TLS with the shard's current server context for ssl and wss); stops when the
/// acceptor closes (the shard holds it: drain and stop close it).
/// @return the acceptor, shared with the shard and its accept loop (a takeover hands it over).
std::shared_ptr<tcp::acceptor> start_accepting(shard& sh, tcp::acceptor acceptor, transport_kind kind,
                                               accept_handler on_accept);

}  // namespace moraine::net
