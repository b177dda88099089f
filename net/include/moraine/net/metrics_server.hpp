#pragma once
// The Prometheus endpoint: GET /metrics over HTTP/1.1 (Boost.Beast), served on shard 0.
#include <moraine/net/asio.hpp>
#include <moraine/net/takeover_message.hpp>
#include <moraine/net/runtime_config.hpp>

#include <memory>

namespace moraine::net {

class shard_set;

/// How a takeover names the /metrics listening socket: adapter "Moraine.Metrics", endpoint
/// "tcp -h HOST -p PORT" as configured. @throws boost::system::system_error for a bad host.
listener_id metrics_listener_id(const metrics_config& cfg);

/** Serves the Prometheus text exposition of every shard's counters (shard::collect, gathered on
    each shard's own thread) and the process figures at `GET /metrics`; any other path is 404,
    any other method 405. It runs as coroutines of shard 0, so it needs no thread or lock of its
    own. Request heads are bounded (8 KiB) and each read has a 10 s deadline. */
class metrics_server {
public:
    /// Binds `cfg.host:cfg.port` on shard 0's io_context. Call before the shards start.
    /// @throws boost::system::system_error if the address cannot be bound.
    metrics_server(shard_set& shards, const metrics_config& cfg);
    ~metrics_server();

    /// The bound port (the configured one, or the one chosen for port 0).
    unsigned short port() const noexcept { return port_; }

    struct state;  ///< the acceptor, shared with its accept loop

private:
    std::shared_ptr<state> state_;
    unsigned short port_ = 0;
};

}  // namespace moraine::net
