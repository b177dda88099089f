#pragma once
// One shard's share of the topic service: its subscribers and replicas of topic names and links.
#include <moraine/icestorm_bridge/event.hpp>
#include <moraine/icestorm_bridge/link_backoff.hpp>
#include <moraine/icestorm_bridge/subscriber.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/backend_connection.hpp>

#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace moraine::net {
class shard;
}

namespace moraine::icestorm_bridge {

class topic_service;
class topic_connection;
struct stored_subscriber;

/// A link from a topic to another topic's TopicLink object (docs/icestorm.md §6).
/// The topic name a Topic* designates (`<instance>/topic.<name>`: `<name>`; any other identity
/// name as it is).
std::string topic_name_of(const protocol::proxy& topic);

struct link_info {
    protocol::proxy topic;  ///< the linked-to Topic*
    std::string name;       ///< its name (IceStorm::LinkInfo::name)
    int cost = 0;
    protocol::proxy link;   ///< its TopicLink object (<instance>/<name>.link at its publish endpoints)

    /// What the link is known by: the linked Topic's identity ("category/topic.name"), as IceStorm
    /// keys links. Two topics of one name in different services (several routers linking their
    /// own `time` under their own category) are two links.
    std::string key() const { return protocol::identity_to_string(topic.id.view()); }
};

/// Per-shard state, touched only on its shard's thread. The catalog (shard 0) tells every shard
/// about topics and links, and each delivery shard about its subscribers.
class local_topics {
public:
    /// `limits`: the service's delivery settings (delivery_limits_of its configuration).
    local_topics(topic_service& svc, net::shard& home, delivery_limits limits)
        : svc_(svc), home_(home), limits_(limits) {}

    void topic_created(const std::string& name) { topics_.insert(name); }
    void topic_destroyed(const std::string& name);
    bool exists(const std::string& name) const { return topics_.contains(name); }
    const std::unordered_set<std::string>& topics() const noexcept { return topics_; }

    void set_links(const std::string& topic, std::vector<link_info> links);
    const std::vector<link_info>* links(const std::string& topic) const;
    /// This shard's view of the reachability of `topic`'s link to `linked` (made on first use,
    /// forgotten when the link goes).
    link_backoff& link_health(const std::string& topic, const std::string& linked);
    /// Events this shard did not forward over a link, or forwarded without a reply, during
    /// outages of the linked topic (link_backoff).
    unsigned long link_events_lost() const noexcept { return link_events_lost_; }
    void count_link_loss(std::uint64_t n) noexcept { link_events_lost_ += n; }

    /// Adds subscriber `s` of `topic`; its delivery_state is made here from its QoS and mode.
    void add(const std::string& topic, subscriber s);
    void remove(const std::string& topic, const std::string& key);

    /** Offers `ev` to every local subscriber of its topic (each subscriber's delivery_state:
        queue, window of unanswered events, retries) and sends what each may send now: session
        subscribers straight onto their client connection, others over this shard's back-end
        connections. A subscriber whose connection queue holds subscriber_queue_bytes or more
        misses the event (counted in `dropped`): a slow subscriber never holds up the others or
        the publisher. A subscriber that failed for good is removed here (IceStorm removes it on
        the next publish after the failure, docs/icestorm.md §3). */
    void deliver(const event_ptr& ev);

    std::size_t subscriber_count() const noexcept;

    // ---- takeover (docs/takeover.md "The topic service moves") ----
    /// The TopicManager and Publish connections open on this shard (registered by topic_connection).
    void attach(topic_connection* c) { connections_.insert(c); }
    void detach(topic_connection* c) noexcept { connections_.erase(c); }
    const std::unordered_set<topic_connection*>& connections() const noexcept { return connections_; }
    /// Events of this shard's subscribers not yet settled: queued, or written and awaiting the
    /// subscriber's reply (a twoway delivery's window).
    std::size_t deliveries_in_flight() const noexcept;
    /// Appends this shard's subscribers as a takeover carries them: a session-local one as its
    /// identity and facet with no endpoints (twoway or oneway as it subscribed), an external one
    /// with its proxy; each with its QoS entries.
    void export_subscribers(std::vector<stored_subscriber>& out) const;

    /// Events this shard wrote to a subscriber, and those it skipped for a slow subscriber.
    unsigned long events_delivered() const noexcept { return events_delivered_; }
    unsigned long events_dropped() const noexcept { return events_dropped_; }

private:
    using sub_ptr = std::shared_ptr<subscriber>;
    /// Sends what `s`'s delivery_state releases now, in order.
    void pump(const std::string& topic, const sub_ptr& s, delivery_state::clock::time_point now);
    /// Sends `ev` to `s` now; `token` names it in `s`'s window (0: a oneway, untracked).
    void send(const std::string& topic, const sub_ptr& s, const event& ev, std::uint64_t token,
              delivery_state::clock::time_point now);
    void send_to_session(const std::string& topic, const sub_ptr& s, const event& ev, std::uint64_t token,
                         delivery_state::clock::time_point now);
    void send_external(const std::string& topic, const sub_ptr& s, const event& ev, std::uint64_t token,
                       delivery_state::clock::time_point now);
    /// A datagram or batch datagram subscriber: the event as one datagram (no reply, no window).
    void send_datagram(subscriber& s, const event& ev, delivery_state::clock::time_point now);
    /// `p` with one of its stream endpoints, picked at random (QoS connectionCached=0).
    protocol::proxy one_endpoint_of(const protocol::proxy& p);
    /// The reply (nullptr: no reply, the connection failed) to the twoway event `token` of `s`.
    void on_result(const std::string& topic, const std::weak_ptr<subscriber>& s, std::uint64_t token,
                   const protocol::reply_view* r);
    void missed(subscriber& s) noexcept;
    /// Counts a failure for an external oneway subscriber whose last event went to a connection
    /// that never connected (IceStorm sees that send fail); forgets a closed connection.
    void check_oneway_link(subscriber& s, delivery_state::clock::time_point now);
    /// Removes a subscriber that failed for good and tells the catalog; deferred while delivering.
    void drop(const std::string& topic, const std::string& key);
    void reap();

    topic_service& svc_;
    net::shard& home_;
    std::unordered_set<std::string> topics_;
    std::unordered_map<std::string, std::vector<link_info>> links_;
    std::unordered_map<std::string, link_backoff> link_health_;  // key: topic, '\n', link_info::key()
    unsigned long link_events_lost_ = 0;
    delivery_limits limits_;
    std::unordered_map<std::string, std::vector<sub_ptr>> subscribers_;
    std::unordered_set<topic_connection*> connections_;  // attach/detach
    std::vector<std::pair<std::string, std::string>> dead_;
    bool delivering_ = false;
    protocol::byte_buffer datagram_;  // one datagram's bytes, reused: a datagram is one contiguous message
    std::minstd_rand random_{std::random_device{}()};
    unsigned long events_delivered_ = 0, events_dropped_ = 0;
};

}  // namespace moraine::icestorm_bridge
