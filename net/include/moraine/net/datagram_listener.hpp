#pragma once
// Receiving Ice messages on a udp endpoint: one whole message per datagram, no connection
// validation (docs/ice-wire.md §3), requests always oneway.
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/net/asio.hpp>
#include <moraine/net/unique_fd.hpp>

#include <cstddef>
#include <functional>
#include <memory>

namespace moraine::net {

class shard;
using udp = asio::ip::udp;

/// Largest UDP payload over IPv4 (65,535 - 20 - 8 bytes): the largest Ice message a udp endpoint
/// can carry, in either direction.
inline constexpr std::size_t max_datagram_bytes = 65507;

/// Handles one request that arrived in a datagram (request id 0), on the receiving shard. The
/// view borrows the shard's receive buffer: valid during the call.
using datagram_handler = std::function<void(shard&, const protocol::request_view&)>;

/** Binds udp endpoint `ep` on `sh` with SO_REUSEPORT, so every shard receives on the same port
    (the kernel spreads senders over the sockets). An empty host or `*` binds all interfaces; a
    multicast host binds its port and joins the group on every interface (Ice's `--interface`
    is not supported: the kernel's default route picks one).
    @throws boost::system::system_error if binding fails. */
udp::socket bind_datagram(shard& sh, const protocol::endpoint& ep);

/** Takes over `fd`, a bound udp socket received from the running process (takeover), on `sh`'s
    io_context: its port, group memberships and queued datagrams come with it.
    @throws boost::system::system_error if it is not an IPv4 or IPv6 socket. */
udp::socket adopt_datagram(shard& sh, unique_fd fd);

/// Throws boost::system::system_error ("address in use") if another socket is bound to unicast
/// udp endpoint `ep`, which the shards' SO_REUSEPORT binds would otherwise share with it. Call
/// once per endpoint, before bind_datagram on the shards. Multicast groups are shared by design.
void ensure_datagram_port_free(shard& sh, const protocol::endpoint& ep);

/** Receives on `socket` until it closes (the shard holds it; drain and stop close it). Each
    datagram must be one whole Ice message, its size field equal to the datagram's size
    (docs/ice-wire.md §2): a request with request id 0 or a batch request, bzip2-compressed or
    not; each request goes to `on_request`. Anything else (a twoway request, a truncated or
    malformed datagram) is dropped and counted in moraine_datagrams_dropped_total, as an Ice
    udp endpoint drops it: there is no connection to close. While the shards' memory budget is
    spent, nothing is received: the kernel's receive buffer fills and drops, as UDP does.
    @return the socket, shared with the shard and the receiver (a takeover hands it over). */
std::shared_ptr<udp::socket> start_receiving(shard& sh, udp::socket socket, datagram_handler on_request);

}  // namespace moraine::net
