#pragma once
// All shards, their threads, and the messages between them (docs/style.md §7).
#include <moraine/net/asio.hpp>
#include <moraine/net/datagram_listener.hpp>
#include <moraine/net/handshake_pool.hpp>
#include <moraine/net/listener.hpp>
#include <moraine/net/locator_cache.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <thread>
#include <vector>

namespace moraine::net {

/// Owns the shards, their threads and a small pool for blocking work (crypt(3)).
class shard_set {
public:
    /// @param cfg the runtime settings; cfg->threads shards (0 = one per core).
    /// @throws config_error if the TLS settings cannot be loaded (tls_contexts::create).
    explicit shard_set(std::shared_ptr<const runtime_config> cfg);
    ~shard_set();

    std::size_t size() const noexcept { return shards_.size(); }
    shard& at(unsigned i) noexcept { return *shards_[i]; }
    const runtime_config& cfg() const noexcept { return *cfg_; }
    /// The locator's answers, shared by every shard's locator_resolver (Ice.Default.LocatorCacheTimeout).
    const std::shared_ptr<locator_cache>& locator_answers() const noexcept { return locator_answers_; }
    /// What the shards hold for messages on their way out, against runtime_config::memory_budget_bytes.
    memory_budget& budget() noexcept { return *budget_; }

    /// Runs `fn(shard&)` on shard `to`'s thread. `fn` must own everything it captures: values,
    /// or shared immutable data, never references into the sender's shard.
    template <class Fn>
    void invoke_on(unsigned to, Fn fn) {
        shard& target = *shards_[to];
        asio::post(target.io(), [&target, fn = std::move(fn)]() mutable { fn(target); });
    }

    /// The TLS contexts of ssl endpoints, incoming and outgoing; null when TLS is not configured.
    const std::shared_ptr<const tls_contexts>& tls() const noexcept { return tls_; }

    /** Installs reloaded TLS contexts (SIGHUP; made by tls_contexts::create, which validates
        them): new handshakes, incoming and outgoing, use them; established connections keep
        theirs. Call from the main thread. */
    void install_tls(std::shared_ptr<const tls_contexts> fresh);

    /** Counts an accepted connection from `address` against runtime_config::connections_per_address.
        @return false (nothing counted) when that many are already open. Thread-safe: a mutex
        guards the table, taken once per accept and once per close of a counted connection. */
    bool admit_connection(const asio::ip::address& address);
    /// Uncounts a connection admit_connection counted.
    void release_connection(const asio::ip::address& address) noexcept;

    /// Pool for blocking calls (crypt(3) password checks), so I/O threads never block.
    asio::thread_pool& blocking_pool() noexcept { return blocking_; }

    /// Binds `endpoints` on every shard (SO_REUSEPORT); each accepted connection goes to `on_accept` on
    /// the accepting shard, over TLS for an ssl endpoint. Port 0 is chosen by shard 0 and reused by the others. Call before start().
    /// `sharing`: whether another process may listen on the same ports (port_sharing::shared:
    /// joining one logs it at info level).
    /// @return the endpoints as bound (real ports). @throws boost::system::system_error ("address
    /// in use" when another process listens there and sharing is exclusive, or when it listens
    /// without SO_REUSEPORT or as another user); config_error for an ssl endpoint without TLS settings.
    std::vector<protocol::endpoint> listen(std::vector<protocol::endpoint> endpoints, const accept_handler& on_accept,
                                           port_sharing sharing = port_sharing::exclusive);

    /** Binds udp `endpoints` on every shard (SO_REUSEPORT; port 0 is chosen by shard 0 and reused
        by the others); each request received in a datagram goes to `on_request` on the receiving
        shard (datagram_listener). Call before start().
        @return the endpoints as bound (real ports). @throws boost::system::system_error, also
        ("address in use") when another socket is bound to the port. */
    std::vector<protocol::endpoint> listen_datagrams(std::vector<protocol::endpoint> endpoints,
                                                     const datagram_handler& on_request);

    /// Starts the shard threads.
    void start();
    /** Graceful shutdown (SIGTERM), run from a thread that is not a shard's, which it blocks:
        stops accepting, lets requests in flight finish for at most `deadline` while services
        take no new work (drain_hooks), then closes every accepted connection with Ice's
        close-connection message and waits (up to 2 s more) for those messages to be written.
        The caller then stops the shards. @return the requests still in flight at the deadline. */
    std::size_t drain(std::chrono::milliseconds deadline);

    /// Stops every shard and joins the threads. Idempotent; callable from any thread.
    void stop();
    /// Blocks until every shard thread has ended.
    void join();

private:
    /// Runs `fn(shard&)` on every shard's thread and returns the sum of the results; blocks.
    std::size_t sum_on_all(std::function<std::size_t(shard&)> fn);

    std::shared_ptr<const runtime_config> cfg_;
    std::shared_ptr<locator_cache> locator_answers_;  // before shards_: each shard's resolver uses it
    std::unique_ptr<memory_budget> budget_;  // before shards_, which point to it
    std::vector<std::unique_ptr<shard>> shards_;
    std::shared_ptr<const tls_contexts> tls_;
    // After shards_: destroyed (its threads joined) before them, since its jobs post to them.
    std::unique_ptr<handshake_pool> handshakes_;
    std::vector<std::thread> threads_;
    asio::thread_pool blocking_{2};
    std::mutex per_address_mutex_;
    std::unordered_map<asio::ip::address, std::size_t> per_address_;
};

}  // namespace moraine::net
