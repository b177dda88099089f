#pragma once
// One core's share of the runtime: an io_context on its own thread and everything it owns (docs/style.md §7).
#include <moraine/net/asio.hpp>
#include <moraine/net/close_reason.hpp>
#include <moraine/net/memory_budget.hpp>
#include <moraine/net/metrics.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/net/turn_flusher.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

namespace moraine::net {

class shard_set;
class backend_pool;
class datagram_pool;
class ice_connection;
class tls_contexts;
class handshake_pool;
class locator_resolver;

/// What a service on the shard does when the runtime drains (SIGTERM, shard_set::drain).
struct drain_hooks {
    std::function<void()> begin;             ///< stop taking new work
    std::function<std::size_t()> in_flight;  ///< work started and not yet finished
    std::function<void()> finish;            ///< last chance to send what is queued, before the close messages
};

/// Counters of the runtime kept per shard, touched only on the shard's thread; the /metrics
/// exposition reads them there too (shard::collect).
struct shard_metrics {
    unsigned long connections_accepted = 0;
    unsigned long connections_open = 0;  ///< every ice_connection alive on the shard, of any kind
    unsigned long protocol_errors = 0;
    unsigned long slow_consumers_closed = 0;
    unsigned long heartbeats_sent = 0;  ///< validate connection messages sent to idle peers (ACM)
    std::size_t queue_bytes = 0;  ///< bytes waiting in the outbound queues of the shard's connections
    std::size_t queue_footprint = 0;  ///< the memory those queues take (write_queue::footprint)
    std::array<unsigned long, close_reason_count> closed{};  ///< connections closed, by close_reason
    unsigned long close_messages_pending = 0;  ///< graceful closes whose close-connection message is unwritten
    unsigned long reads_held = 0;  ///< times a connection stopped reading because the memory budget was spent
    unsigned long datagrams_dropped = 0;  ///< datagrams received that were not one whole oneway Ice message
    latency_histogram forward_latency;  ///< forwarded twoway request -> its reply relayed (seconds)
};

/// A shard: one io_context (concurrency hint 1) run by one thread. Its connections, back-end
/// connections and the per-shard state of every service on it are touched only by that thread;
/// other shards reach it with shard_set::invoke_on.
class shard {
public:
    shard(shard_set& set, unsigned index, std::shared_ptr<const runtime_config> cfg);
    ~shard();
    shard(const shard&) = delete;
    shard& operator=(const shard&) = delete;

    unsigned index() const noexcept { return index_; }
    shard_set& set() noexcept { return set_; }
    asio::io_context& io() noexcept { return io_; }
    asio::any_io_executor executor() { return io_.get_executor(); }
    const runtime_config& cfg() const noexcept { return *cfg_; }
    backend_pool& backends() noexcept { return *backends_; }
    /// This shard's udp senders (datagram and batch datagram proxies).
    datagram_pool& datagrams() noexcept { return *datagrams_; }
    /// Resolves indirect proxies through Ice.Default.Locator; null when no locator is configured.
    locator_resolver* resolver() noexcept { return resolver_.get(); }
    /// The TLS contexts for new ssl/wss connections, incoming and outgoing; null without TLS.
    /// Replaced on reload (shard_set::reload_tls); connections keep the context they began with.
    const std::shared_ptr<const tls_contexts>& tls() const noexcept { return tls_; }
    void set_tls(std::shared_ptr<const tls_contexts> t) noexcept { tls_ = std::move(t); }
    /// Where accepted connections run their TLS handshake steps; null: on this shard.
    handshake_pool* handshakes() const noexcept { return handshakes_; }
    void set_handshakes(handshake_pool* p) noexcept { handshakes_ = p; }
    shard_metrics& metrics() noexcept { return metrics_; }

    /// The memory budget of every shard (shard_set::budget); null for a shard made alone (tests).
    memory_budget* budget() const noexcept { return budget_; }
    void set_budget(memory_budget* b) noexcept { budget_ = b; }
    /// Tells the budget the memory this shard's outbound queues take now (their footprint).
    void note_queue_bytes() noexcept {
        if (budget_) budget_->set_queued(index_, metrics_.queue_footprint);
    }

    /// A read buffer shared by this shard's connections: a connection reads into it only after
    /// its socket is readable and dispatches every whole message before the next co_await, so
    /// idle connections hold no read buffer (RSS per session stays small).
    std::vector<std::byte>& scratch() noexcept { return scratch_; }

    /// The connections to write once at the end of this loop turn (ice_connection::enqueue).
    turn_flusher& flusher() noexcept { return flusher_; }

    /// Registers work to run on this shard's thread when it stops (a service closing its
    /// connections), before the back-end connections close. Call before run().
    void on_stop(std::function<void()> fn) { stop_hooks_.push_back(std::move(fn)); }

    /// Registers a service's metrics collector: `fn` adds its samples for this shard, on this
    /// shard's thread, at each /metrics scrape. Call before run().
    void add_collector(std::function<void(metric_sink&)> fn) { collectors_.push_back(std::move(fn)); }
    /// The runtime's own samples and every registered collector's. Call on this shard's thread.
    metric_sink collect();

    /// Registers a service's part in draining. Call before run().
    void add_drain(drain_hooks h) { drains_.push_back(std::move(h)); }
    /// An acceptor to close when the shard stops accepting (drain) or stops.
    void add_acceptor(std::shared_ptr<tcp::acceptor> a) { acceptors_.push_back(std::move(a)); }
    /// A receiving udp socket (datagram_listener) to close when the shard drains or stops.
    void add_datagram_socket(std::shared_ptr<asio::ip::udp::socket> s) { datagram_sockets_.push_back(std::move(s)); }
    /// Accepted connections, which a drain closes with a close-connection message.
    void add_accepted(ice_connection* c) { accepted_.insert(c); }
    void remove_accepted(ice_connection* c) noexcept { accepted_.erase(c); }

    /// Drain, step 1 (on this shard's thread): closes the acceptors and runs every begin hook.
    void begin_drain();
    /// Drain, step 2: requests forwarded to back ends awaiting their reply, plus the services' in_flight.
    std::size_t in_flight() const;
    /// Drain, step 3: runs the finish hooks, then closes every accepted connection gracefully
    /// (Ice's close-connection message once its queue is written).
    void finish_drain();
    /// Drain, step 4: close-connection messages still waiting to be written.
    std::size_t close_messages_pending() const noexcept { return metrics_.close_messages_pending; }

    /// Runs the io_context until stop(); called by the shard's thread.
    void run();
    /// Runs the stop hooks, closes the back-end connections and ends run(). Any thread.
    void stop();

private:
    shard_set& set_;
    unsigned index_;
    std::shared_ptr<const runtime_config> cfg_;
    asio::io_context io_{1};
    asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
    std::unique_ptr<backend_pool> backends_;
    std::unique_ptr<datagram_pool> datagrams_;
    std::unique_ptr<locator_resolver> resolver_;
    std::shared_ptr<const tls_contexts> tls_;
    handshake_pool* handshakes_ = nullptr;  // shard_set's, if any
    std::vector<std::byte> scratch_;
    std::vector<std::function<void()>> stop_hooks_;
    std::vector<std::function<void(metric_sink&)>> collectors_;
    std::vector<drain_hooks> drains_;
    std::vector<std::shared_ptr<tcp::acceptor>> acceptors_;
    std::vector<std::shared_ptr<asio::ip::udp::socket>> datagram_sockets_;
    std::unordered_set<ice_connection*> accepted_;
    shard_metrics metrics_;
    memory_budget* budget_ = nullptr;
    // Last: destroyed first, so connections still marked for a flush go while the rest stands.
    turn_flusher flusher_{io_};
};

}  // namespace moraine::net
