#pragma once
// Sending Ice messages as udp datagrams: a shard's udp senders, one per destination endpoint.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/asio.hpp>

#include <memory>
#include <string>
#include <unordered_map>

namespace moraine::net {

class shard;

/// True for a proxy whose invocations travel as datagrams: mode datagram (`-d`) or batch
/// datagram (`-D`).
bool datagram_mode(const protocol::proxy& p) noexcept;

/** One shard's udp senders, keyed by destination (host and port): a connected udp socket each,
    as an Ice communicator keeps one udp connection per endpoint, so the receiver sees one peer
    address per sender. Shard-local; nothing is ever waited for: a datagram the kernel does not
    take at once is lost, as UDP loses it, and counted. */
class datagram_pool {
public:
    explicit datagram_pool(shard& home);
    ~datagram_pool();
    datagram_pool(const datagram_pool&) = delete;
    datagram_pool& operator=(const datagram_pool&) = delete;

    /** Sends `message` (one whole Ice message: a request with id 0 or a batch request) to the
        first udp endpoint of `p`, whose mode is datagram or batch datagram. A host name is
        looked up once, without blocking the shard; up to 64 messages wait for the answer.
        @return false with `failure` set when `p` has no udp endpoint (Ice's NoEndpointException
        text) or `message` is over max_datagram_bytes (Ice's DatagramLimitException); true once
        the message is handed to the kernel, waits for the lookup, or was lost on the way. */
    bool send(const protocol::proxy& p, protocol::byte_view message, std::string& failure);

    /// Closes every socket (shard shutdown).
    void close_all() noexcept;

    std::size_t size() const noexcept { return peers_.size(); }
    /// Datagrams handed to the kernel.
    unsigned long sent() const noexcept { return sent_; }
    /// Datagrams lost before the kernel took them: its send buffer was full, the lookup failed.
    unsigned long lost() const noexcept { return lost_; }

private:
    struct peer;
    peer& peer_for(const protocol::endpoint& ep);
    void write(peer& p, protocol::byte_view message);
    void resolved(const std::string& key, const boost::system::error_code& ec, const asio::ip::udp::endpoint& to);

    shard& home_;
    std::unordered_map<std::string, std::unique_ptr<peer>> peers_;
    unsigned long sent_ = 0, lost_ = 0;
};

}  // namespace moraine::net
