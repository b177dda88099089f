#pragma once
// All shards, their threads, and the messages between them (docs/style.md §7).
#include <moraine/net/connection_origin.hpp>
#include <moraine/net/asio.hpp>
#include <moraine/net/datagram_listener.hpp>
#include <moraine/net/handshake_pool.hpp>
#include <moraine/net/inherited_listeners.hpp>
#include <moraine/net/listener.hpp>
#include <moraine/net/locator_cache.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <string_view>
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
        @return false (nothing counted) when that many are already open and `origin` is
        accepted; a moved connection is counted over the limit too (refusing it now would end an
        established session).
        Thread-safe: a mutex guards the table, taken once per accept and once per close of a
        counted connection. */
    bool admit_connection(const asio::ip::address& address, connection_origin origin = connection_origin::accepted);
    /// Uncounts a connection admit_connection counted.
    void release_connection(const asio::ip::address& address) noexcept;

    /// Pool for blocking calls (crypt(3) password checks), so I/O threads never block.
    asio::thread_pool& blocking_pool() noexcept { return blocking_; }

    /// Binds `endpoints` on every shard (SO_REUSEPORT); each accepted connection goes to `on_accept` on
    /// the accepting shard, over TLS for an ssl endpoint. Port 0 is chosen by shard 0 and reused by the others. Call before start().
    /// `adapter` names the list in the configuration ("Glacier2.Client", ...): with the endpoint as
    /// configured it says which socket a takeover hands over. An endpoint among the sockets adopt()
    /// gave is not bound: its sockets are taken over (spread over the shards; a shard left without
    /// one binds the same port, SO_REUSEPORT).
    /// `sharing`: whether another process may listen on the same ports (port_sharing::shared:
    /// joining one logs it at info level).
    /// @return the endpoints as bound (real ports). @throws boost::system::system_error ("address
    /// in use" when another process listens there and sharing is exclusive, or when it listens
    /// without SO_REUSEPORT or as another user); config_error for an ssl endpoint without TLS settings.
    std::vector<protocol::endpoint> listen(std::string_view adapter, std::vector<protocol::endpoint> endpoints,
                                           const accept_handler& on_accept,
                                           port_sharing sharing = port_sharing::exclusive);

    /** Binds udp `endpoints` on every shard (SO_REUSEPORT; port 0 is chosen by shard 0 and reused
        by the others), or takes over the sockets adopt() gave for them, as listen() does; each
        request received in a datagram goes to `on_request` on the receiving shard
        (datagram_listener). Call before start().
        @return the endpoints as bound (real ports). @throws boost::system::system_error, also
        ("address in use") when another socket is bound to the port. */
    std::vector<protocol::endpoint> listen_datagrams(std::string_view adapter, std::vector<protocol::endpoint> endpoints,
                                                     const datagram_handler& on_request);

    /// Holds the listening sockets a takeover received, for listen() and listen_datagrams() to
    /// take instead of binding. Call before the first listen().
    void adopt(std::unique_ptr<inherited_listeners> sockets) { inherited_ = std::move(sockets); }
    /// The inherited sockets of `id`, removed from those adopt() gave (a listener outside the
    /// shards takes its own: metrics_server); empty without a takeover.
    std::vector<inherited_socket> take_inherited(const listener_id& id);
    /// The inherited sockets nobody took: a takeover checks that none is left.
    std::vector<listener_record> inherited_left() const;

    /// Records a listening socket outside listen() (metrics_server) for takeovers. Call before start().
    void add_listener(listener_record record, std::weak_ptr<tcp::acceptor> acceptor);
    /// Every listening socket of this process, as recorded (endpoint, bound port, shard).
    std::vector<listener_record> listeners() const;

    /** Takeover, old side: a duplicate of every listening socket with its record, made on each
        shard's thread; the caller owns (and closes) the duplicates. Blocks; the shards must run.
        @throws channel_error if some socket is closed already (the router is draining). */
    std::vector<inherited_socket> share_listeners();
    /** Takeover, old side, once the new process accepts on them: closes this process's copy of
        every listening socket (the sockets live on in the new process, so no connection waiting
        in an accept queue is lost). Blocks; the shards must run. @return the sockets closed. */
    std::size_t release_listeners();

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

    /// Runs `fn(shard&)` on every shard's thread and returns the sum of the results; blocks, so
    /// never call it on a shard's thread (a takeover's or a caller's own thread only).
    std::size_t sum_on_all(std::function<std::size_t(shard&)> fn);
    /// Runs `fn(shard&)` on shard `to`'s thread and waits for it to return; an exception it
    /// throws is rethrown here. Blocks, so never call it on a shard's thread.
    void call_on(unsigned to, std::function<void(shard&)> fn);

private:
    /// The key of the next socket listened on for `ep` of `adapter` (listener_id::ordinal counts repeats).
    listener_id next_id(std::string_view adapter, const protocol::endpoint& ep);
    /// listen() for one endpoint whose sockets a takeover handed over.
    protocol::endpoint adopt_streams(const listener_id& id, std::vector<inherited_socket> sockets,
                                     protocol::endpoint ep, const accept_handler& on_accept);
    protocol::endpoint adopt_datagrams(const listener_id& id, std::vector<inherited_socket> sockets,
                                       protocol::endpoint ep, const datagram_handler& on_request);

    /// A listening socket as a takeover sees it; the socket itself is the shard's.
    struct listening {
        listener_record record;
        std::weak_ptr<tcp::acceptor> acceptor;           // a stream socket, or
        std::weak_ptr<asio::ip::udp::socket> datagram;  // a udp one
    };

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
    std::unique_ptr<inherited_listeners> inherited_;  // a takeover's sockets, until listen() takes them
    std::map<std::pair<std::string, std::string>, std::uint32_t> ordinals_;
    std::vector<listening> listening_;  // written before start(), read on the shards' threads after
};

}  // namespace moraine::net
