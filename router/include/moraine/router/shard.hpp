#pragma once
// One core's share of the router: an io_context on its own thread and everything it owns (style.md §7).
#include <moraine/router/asio.hpp>
#include <moraine/router/config.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace moraine::router {

class shard_set;
class client_connection;
class backend_pool;

/// Hash for string keys that also accepts string_view, so lookups on the per-event path
/// (a session by its category) allocate nothing.
struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// Counters kept per shard; read off-thread only as approximate figures.
struct shard_metrics {
    unsigned long connections_accepted = 0;
    unsigned long sessions_created = 0;
    unsigned long sessions_destroyed = 0;
    unsigned long requests_forwarded = 0;
    unsigned long replies_forwarded = 0;
    unsigned long callbacks_forwarded = 0;
    unsigned long protocol_errors = 0;
    unsigned long slow_consumers_closed = 0;
};

/// A shard: one io_context (concurrency hint 1) run by one thread. Its client connections,
/// sessions, back-end connections and callback routes are touched only by that thread; other
/// shards reach it with shard_set::invoke_on.
class shard {
public:
    shard(shard_set& set, unsigned index, std::shared_ptr<const config> cfg);
    ~shard();
    shard(const shard&) = delete;
    shard& operator=(const shard&) = delete;

    unsigned index() const noexcept { return index_; }
    shard_set& set() noexcept { return set_; }
    asio::io_context& io() noexcept { return io_; }
    asio::any_io_executor executor() { return io_.get_executor(); }
    const config& cfg() const noexcept { return *cfg_; }
    backend_pool& backends() noexcept { return *backends_; }
    shard_metrics& metrics() noexcept { return metrics_; }

    /// A new session category: 20 random printable characters (33..126) whose first character
    /// names this shard, so a callback landing on another shard finds its owner without a shared table.
    std::string new_category();

    /// Sessions on this shard by category. The connection erases itself when it closes.
    void add_session(const std::string& category, client_connection* c);
    void remove_session(const std::string& category) noexcept;
    client_connection* find_session(std::string_view category) const noexcept;
    std::size_t session_count() const noexcept { return sessions_.size(); }

    /// Every open client connection, for the idle sweep (ACM close on idle, spec/glacier2.md §4).
    void add_client(client_connection* c) { clients_.insert(c); }
    void remove_client(client_connection* c) noexcept { clients_.erase(c); }

    /// A read buffer shared by this shard's connections: a connection reads into it only after
    /// its socket is readable and dispatches every whole message before the next co_await, so
    /// idle connections hold no read buffer (RSS per session stays small).
    std::vector<std::byte>& scratch() noexcept { return scratch_; }

    /// Starts the idle sweep; call on this shard's thread or before run().
    void start();
    /// Runs the io_context until stop(); called by the shard's thread.
    void run();
    void stop();

private:
    asio::awaitable<void> idle_sweep();

    shard_set& set_;
    unsigned index_;
    std::shared_ptr<const config> cfg_;
    asio::io_context io_{1};
    asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
    std::unique_ptr<backend_pool> backends_;
    std::unordered_map<std::string, client_connection*, string_hash, std::equal_to<>> sessions_;
    std::unordered_set<client_connection*> clients_;
    std::vector<std::byte> scratch_;
    shard_metrics metrics_;
};

}  // namespace moraine::router
