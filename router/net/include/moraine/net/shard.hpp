#pragma once
// One core's share of the runtime: an io_context on its own thread and everything it owns (style.md §7).
#include <moraine/net/asio.hpp>
#include <moraine/net/runtime_config.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace moraine::net {

class shard_set;
class backend_pool;

/// Counters of the runtime kept per shard; read off-thread only as approximate figures.
struct shard_metrics {
    unsigned long connections_accepted = 0;
    unsigned long protocol_errors = 0;
    unsigned long slow_consumers_closed = 0;
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
    shard_metrics& metrics() noexcept { return metrics_; }

    /// A read buffer shared by this shard's connections: a connection reads into it only after
    /// its socket is readable and dispatches every whole message before the next co_await, so
    /// idle connections hold no read buffer (RSS per session stays small).
    std::vector<std::byte>& scratch() noexcept { return scratch_; }

    /// Registers work to run on this shard's thread when it stops (a service closing its
    /// connections), before the back-end connections close. Call before run().
    void on_stop(std::function<void()> fn) { stop_hooks_.push_back(std::move(fn)); }

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
    std::vector<std::byte> scratch_;
    std::vector<std::function<void()>> stop_hooks_;
    shard_metrics metrics_;
};

}  // namespace moraine::net
