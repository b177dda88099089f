#pragma once
// What the runtime itself needs to know: threads, message and queue limits, back-end connects.
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/tls_config.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace moraine::net {

/// An address this process serves under another name: a back-end connection for a proxy naming
/// `published` connects to `bound` instead. The embedded topic service's published TopicManager
/// endpoints are the one use (app_config fills them in): a client's `IceStorm/TopicManager`
/// proxy reaches this router's own topic service, even where several routers share one host and
/// the published address (e.g. 127.0.0.1:10000) is bound by none of them (docs/deployment.md).
struct endpoint_alias {
    protocol::endpoint published;  ///< as in proxies: type, host (compared as written) and port
    protocol::endpoint bound;      ///< where this process listens for it
};

/// The /metrics HTTP endpoint (Moraine.Metrics.Listen / metrics.listen): off unless configured.
struct metrics_config {
    bool enabled = false;
    std::string host = "127.0.0.1";  ///< an IP address; loopback unless the operator names another
    unsigned short port = 0;         ///< 0: any free port (tests), logged at start
};

/// Live upgrade (docs/takeover.md): where a new moraine-router asks this one for its listening
/// sockets, and how long this one then serves its sessions. Off unless `socket` is set.
struct takeover_config {
    /// Path of the Unix socket (Moraine.Takeover.Socket / takeover.socket), created mode 0600;
    /// empty: no takeover socket.
    std::string socket;
    /// After handing over: ms the established sessions may go on here before they are closed
    /// gracefully (Moraine.Takeover.DrainTimeout / takeover.drain_timeout_ms).
    int drain_timeout_ms = 60000;
};

/// Settings of the per-core runtime, shared by every service on it (router, topics). Read by
/// read_runtime_properties / read_runtime_yaml; immutable once the shards start.
struct runtime_config {
    unsigned threads = 0;                            ///< I/O threads (shards); 0 = one per usable CPU (usable_cpus)
    std::size_t message_size_max = 1024 * 1024;      ///< bytes (Ice.MessageSizeMax KiB × 1024); 0 = unlimited
    std::size_t connection_queue_high = 256 * 1024;  ///< outbound queue bytes at which the feeder is paused
    std::size_t connection_queue_low = 64 * 1024;    ///< ...and resumed
    std::size_t connection_queue_max = 16 << 20;     ///< a connection whose queue exceeds this is closed
    int backend_connect_timeout_ms = 10000;          ///< connect + validate deadline for outgoing connections
    /// A proxy with several endpoints: try them in random order (Ice's default) or as listed
    /// (Ice.Default.EndpointSelection=Ordered; YAML limits.endpoint_selection: ordered).
    bool endpoints_ordered = false;
    /// SO_SNDBUF / SO_RCVBUF of every TCP socket, accepted or connected (Ice.TCP.SndSize,
    /// Ice.TCP.RcvSize; YAML limits.tcp_send_buffer, limits.tcp_receive_buffer), bytes; 0 = the
    /// kernel's default, autotuned. A small send buffer keeps a slow peer's backlog in the
    /// connection's queue, where the queue limits and the memory budget see it (socket_buffers.hpp).
    std::size_t tcp_send_buffer = 0;
    std::size_t tcp_receive_buffer = 0;
    /// The listen queue of every listening socket (Ice.TCP.Backlog; YAML limits.tcp_backlog),
    /// connections; 0 = SOMAXCONN, 4096 on Linux. The kernel caps it at net.core.somaxconn.
    /// Connections past it are dropped by the kernel and retried by the client's TCP after 1 s.
    int tcp_backlog = 0;
    std::size_t connections_per_address = 0;         ///< accepted connections open at once from one IP address; 0 = no limit
    /// The Ice::Locator indirect proxies are resolved through (Ice.Default.Locator; YAML
    /// locator.proxy): a direct proxy, e.g. `IceGrid/Locator:tcp -h registry -p 4061`. Unset:
    /// an indirect proxy has no endpoint (NoEndpointException), as in Ice without a locator.
    std::optional<protocol::proxy> locator;
    /// Seconds a resolution is reused (Ice.Default.LocatorCacheTimeout; YAML locator.cache_timeout_s):
    /// -1 forever, 0 never.
    int locator_cache_timeout_s = -1;
    /// Endpoints this process serves under another address (endpoint_alias); empty by default.
    std::vector<endpoint_alias> endpoint_aliases;
    tls_config tls;                                  ///< ssl endpoints, incoming and outgoing (IceSSL.* / tls:)
    metrics_config metrics;                          ///< the Prometheus endpoint
    /// Bytes the shards may hold in outbound queues and cross-shard event posts before the
    /// connections of publishers (topic service) and of IceStorm's server-endpoint deliveries
    /// stop reading (memory_budget); 0 = no budget. Moraine.Topics.MemoryBudget / topics.memory_budget_bytes.
    std::size_t memory_budget_bytes = 256u << 20;
    int drain_timeout_ms = 30000;                    ///< SIGTERM: in-flight requests get this long to finish
    takeover_config takeover;                        ///< live upgrade: the takeover socket
    std::string log_level;                           ///< trace..off; empty: the command line's (default info)
};

}  // namespace moraine::net
