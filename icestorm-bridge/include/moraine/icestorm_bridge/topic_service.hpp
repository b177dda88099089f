#pragma once
// The embedded IceStorm-compatible topic service: endpoints, objects, and the fan-out across shards.
#include <moraine/icestorm_bridge/catalog.hpp>
#include <moraine/icestorm_bridge/event.hpp>
#include <moraine/icestorm_bridge/local_topics.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/icestorm_bridge/config.hpp>
#include <moraine/net/session_directory.hpp>

#include <moraine/net/takeover_message.hpp>
#include <moraine/net/unique_fd.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace moraine::net {
class shard_set;
class shard;
}  // namespace moraine::net

namespace moraine::icestorm_bridge {

class topic_connection;

/** Serves `<instance>/TopicManager` and the topic objects on the TopicManager endpoints, and the
    publisher / link objects on the Publish endpoints (docs/icestorm.md), on every shard.
    A publish is posted once to each shard, which writes it to its own subscribers. */
class upstream_link;

/// When a persistent topic service opens its database (docs/takeover.md "The topic database").
enum class store_opening {
    now,            ///< at construction: a database another process holds throws store_held
    when_released,  ///< a takeover's new process: the old one holds it; open_pending_store() opens it later
};

class topic_service {
public:
    /** Binds the TopicManager and Publish endpoints on every shard; call before shards.start().
        Unless `cfg.transient`, opens the topic database in `cfg.store_dir` and restores its
        topics, subscribers and links (@throws store_error when it cannot be opened or read); with
        store_opening::when_released, a database another process holds is left pending instead.
        `sessions` (may be null: no router beside it) is how subscribers that are servants in a
        router's sessions are reached. With `topics.upstream`, the links from the upstream IceStorm
        are made from shard 0 once the shards run (upstream_link). @throws boost::system::system_error if an endpoint cannot be bound. */
    topic_service(net::shard_set& shards, topics_config cfg, net::session_directory* sessions,
                  store_opening opening = store_opening::now);
    ~topic_service();

    const topics_config& cfg() const noexcept { return cfg_; }
    /// The router whose sessions hold subscribers, or null.
    net::session_directory* sessions() const noexcept { return sessions_; }
    net::shard_set& shards() noexcept { return shards_; }
    /// The shard's own state: use only on that shard's thread.
    local_topics& local(unsigned shard) noexcept { return *locals_[shard]; }
    /// The catalog: use only on shard 0's thread.
    icestorm_bridge::catalog& cat() noexcept { return *catalog_; }
    /// The topic database, or null when transient (topics_config::transient), pending or
    /// released. Use only on shard 0's thread once the shards run.
    topic_store* store() noexcept { return store_.get(); }

    protocol::proxy topic_proxy(std::string_view name) const;                 ///< <inst>/topic.<name> @ TopicManager endpoints
    protocol::proxy publisher_proxy(std::string_view name) const;             ///< <inst>/<name>.publish @ Publish endpoints
    protocol::proxy link_proxy(std::string_view name) const;                  ///< <inst>/<name>.link @ Publish endpoints
    protocol::proxy subscriber_publisher_proxy(std::string_view topic, const protocol::identity& sub) const;

    /// True if `p` designates a servant in a session of this router: its endpoints are the
    /// router's server endpoints, so events go straight onto the session's client connection.
    bool is_session_subscriber(const protocol::proxy& p) const;
    /// The shard that delivers to `s`: its session's shard, else one picked by identity.
    unsigned delivery_shard(const subscriber& s) const;

    /// Publishes `ev` from shard `from`: one message per shard, and over the topic's links.
    void publish(unsigned from, event_ptr ev);

    /// Runs `fn` on every shard's local_topics, then `then` on shard 0 once all have.
    void broadcast(std::function<void(local_topics&)> fn, std::function<void()> then);

    /// Serves one request that arrived on a TopicManager (`publish_side` false) or Publish endpoint.
    void dispatch(topic_connection& c, const protocol::request_view& r, bool publish_side);
    /// Serves one request that arrived in a datagram on a udp Publish endpoint, on shard `sh`:
    /// a publish (or a TopicLink::forward) as over tcp, never answered (a datagram is oneway).
    void dispatch_datagram(net::shard& sh, const protocol::request_view& r);

    // ---- takeover (docs/takeover.md "The topic service moves"); topic_handover.cpp ----
    /// Stops (`held`) or restarts reading on every TopicManager and Publish connection, this
    /// process's and those adopted later; a read under way finishes its whole messages. Any thread.
    void hold_intake(bool held);
    bool intake_held() const noexcept { return intake_held_.load(std::memory_order_relaxed); }
    /// Events queued for a subscriber or awaiting its reply, over every shard. Blocks: not on a shard.
    std::size_t deliveries_in_flight();
    /** Old side: holds the intake, then waits up to `settle` for every delivery in flight to end
        (twoway events answered, queues empty); `unsettled` is what was still in flight then (those
        events do not move). @return the catalog image (catalog_image.hpp) of snapshot(`stay`) in
        parts of at most `part_max` bytes. Blocks: not on a shard. */
    std::vector<std::vector<std::byte>> hold_for_takeover(std::chrono::milliseconds settle, std::size_t part_max,
                                                          std::size_t& unsettled,
                                                          const std::optional<protocol::endpoint>& stay = std::nullopt);
    /** Topics, links and subscribers with their QoS, as they stand. With `stay`, a servant of a
        session that is still here (session_directory::session_here) is written as a subscriber
        at `stay` (session_router::open_stay_endpoint), no longer a session's servant: the new
        process delivers to it there, and this process to the session. Blocks: not on a shard. */
    stored_catalog snapshot(const std::optional<protocol::endpoint>& stay = std::nullopt);
    /** New side: adds the old process's catalog (decode_catalog_image) to this one. A subscriber
        whose QoS no longer parses, whose topic is missing or that is subscribed here already is
        skipped. @return the subscribers added. Blocks: not on a shard. */
    std::size_t install(stored_catalog moved);
    /** Old side: takes every connection that may leave now (plain TCP or WebSocket, reading held,
        nothing queued or being written, no request of its peer outstanding) off its shard, with
        its descriptor; it is then closed here without a byte. With `last`, the others close
        gracefully (close-connection message); else `left` counts them. Blocks: not on a shard. */
    std::vector<std::pair<net::takeover_topic_connection, net::unique_fd>> take_connections(bool last, std::size_t& left);
    /// New side: serves a connection the old process handed over, on a shard picked in turn.
    /// @return empty, or why it cannot be served (the descriptor is then closed). Blocks: not on a shard.
    std::string adopt_connection(const net::takeover_topic_connection& m, net::unique_fd fd);
    /** Old side, once the catalog went to the new process: closes the topic database here (its
        queued writes finish first) so that the new process can open it; nothing here is stored
        after. @return whether there was one. Blocks: not on a shard. */
    bool release_store();
    /// New side: the database was held by the old process at construction and is not open yet.
    /// Read on the takeover's thread only.
    bool store_pending() const noexcept { return store_pending_; }
    /** New side: tries once to open the pending database. With `restore`, its topics,
        subscribers and links are installed as at a start (the old process kept its topic service
        until it ended); without, they came with the takeover's catalog. @return false while
        another process holds it. @throws store_error if it cannot be opened or read. Blocks: not
        on a shard. */
    bool open_pending_store(bool restore);

private:
    /// Opens cfg_.store_dir's topic database and restores the catalog from it (or leaves it
    /// pending, see store_opening).
    void open_store(store_opening opening);
    /// topics.upstream: an upstream_link per upstream (per member of a federated one), started
    /// once the shards run, and the moraine_upstream_links gauge over them all.
    void start_upstream_links();
    /// Binds the Publish endpoints (tcp, ssl, ws, wss and udp). @return them as bound.
    std::vector<protocol::endpoint> listen_publish(const std::vector<protocol::endpoint>& endpoints);
    /// A request to a publisher or link object, received on shard `sh`; `c` answers a twoway one
    /// (null for a datagram).
    void dispatch_publish(net::shard& sh, topic_connection* c, const protocol::request_view& r);
    /// `IceStorm/Finder` (IceStorm::Finder::getTopicManager), on the TopicManager endpoints.
    void dispatch_finder(topic_connection& c, const protocol::request_view& r);
    /// A publish to the per-subscriber publisher of `ev->only_subscriber` (received on shard
    /// `here`; `c` answers a twoway one). A oneway is published at once, in order with the
    /// connection's other publishes; a twoway is checked on shard 0: delivered and answered, or
    /// ObjectNotExist once the subscriber is gone.
    void publish_to_subscriber(unsigned here, topic_connection* c, const protocol::request_view& r,
                               std::shared_ptr<event> ev);
    bool forward_linked(net::shard& sh, topic_connection* c, const std::string& topic, const protocol::request_view& r);
    /// Forwards `ev` to each link of its topic (TopicLink::forward), except links in an outage
    /// whose next probe is not due (link_backoff: the event is counted as lost).
    void forward_over_links(net::shard& sh, const event& ev);
    /// A forward's outcome on shard `sh` for `topic`'s link `linked` (link_info::key()): no reply
    /// starts or prolongs an outage; any reply ends it; ObjectNotExist also removes the link, as
    /// IceStorm does.
    void on_forward_result(net::shard& sh, const std::string& topic, const std::string& linked,
                           const protocol::reply_view* r, std::string_view failure);

    net::shard_set& shards_;
    topics_config cfg_;
    net::session_directory* sessions_;
    std::vector<protocol::endpoint> manager_endpoints_;  // as published
    std::vector<protocol::endpoint> publish_endpoints_;  // as published
    std::vector<std::unique_ptr<local_topics>> locals_;
    std::unique_ptr<icestorm_bridge::catalog> catalog_;
    std::unique_ptr<topic_store> store_;  // after catalog_: its queued writes finish first
    bool store_pending_ = false;          // store_opening::when_released, held elsewhere; the takeover's thread
    // topics.upstream: one per upstream (per member of a federated one); they live on shard 0.
    std::vector<std::shared_ptr<upstream_link>> upstream_;
    std::atomic<bool> intake_held_{false};     // hold_intake
    std::atomic<unsigned> next_adopting_{0};   // adopt_connection's shard, in turn
};

}  // namespace moraine::icestorm_bridge
