#pragma once
// One shard's share of the topic service: its subscribers and replicas of topic names and links.
#include <moraine/icestorm/event.hpp>
#include <moraine/icestorm/subscriber.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/backend_connection.hpp>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace moraine::net {
class shard;
}

namespace moraine::icestorm {

class topic_service;

/// A link from a topic to another topic's TopicLink object (docs/icestorm.md §6).
struct link_info {
    protocol::proxy topic;  ///< the linked-to Topic*
    std::string name;       ///< its name
    int cost = 0;
    protocol::proxy link;   ///< its TopicLink object (<instance>/<name>.link at its publish endpoints)
};

/// Per-shard state, touched only on its shard's thread. The catalog (shard 0) tells every shard
/// about topics and links, and each delivery shard about its subscribers.
class local_topics {
public:
    local_topics(topic_service& svc, net::shard& home) : svc_(svc), home_(home) {}

    void topic_created(const std::string& name) { topics_.insert(name); }
    void topic_destroyed(const std::string& name);
    bool exists(const std::string& name) const { return topics_.contains(name); }
    const std::unordered_set<std::string>& topics() const noexcept { return topics_; }

    void set_links(const std::string& topic, std::vector<link_info> links);
    const std::vector<link_info>* links(const std::string& topic) const;

    void add(const std::string& topic, subscriber s);
    void remove(const std::string& topic, const std::string& key);

    /** Writes `ev` to every local subscriber of its topic: session subscribers straight onto
        their client connection, others over this shard's back-end connections. A session
        subscriber whose queue holds subscriber_queue_bytes or more misses the event (counted in
        `dropped`): a slow subscriber never holds up the others or the publisher. */
    void deliver(const event& ev);

    std::size_t subscriber_count() const noexcept;

    /// Events this shard wrote to a subscriber, and those it skipped for a slow subscriber.
    unsigned long events_delivered() const noexcept { return events_delivered_; }
    unsigned long events_dropped() const noexcept { return events_dropped_; }

private:
    void deliver_to_session(const event& ev, subscriber& s);
    void deliver_external(const event& ev, subscriber& s);
    void on_result(const std::string& topic, const std::string& key, const protocol::reply_view* r);
    /// Removes a subscriber that failed for good and tells the catalog; deferred while delivering.
    void drop(const std::string& topic, const std::string& key);
    void reap();

    topic_service& svc_;
    net::shard& home_;
    std::unordered_set<std::string> topics_;
    std::unordered_map<std::string, std::vector<link_info>> links_;
    std::unordered_map<std::string, std::vector<subscriber>> subscribers_;
    std::vector<std::pair<std::string, std::string>> dead_;
    bool delivering_ = false;
    unsigned long events_delivered_ = 0, events_dropped_ = 0;
};

}  // namespace moraine::icestorm
