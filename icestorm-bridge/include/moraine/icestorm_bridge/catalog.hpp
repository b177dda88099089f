#pragma once
// The topic catalog: TopicManager and Topic objects (docs/icestorm.md §1-3, §6). Lives on shard 0.
#include <moraine/icestorm_bridge/local_topics.hpp>
#include <moraine/icestorm_bridge/topic_store.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/net/callback_route.hpp>

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace moraine::icestorm_bridge {

class topic_service;

/// Topics, their subscribers (which shard delivers to each) and their links. Touched only on
/// shard 0's thread; every change that matters to delivery is sent to the shards as a message.
/// With a topic database (topic_service::store), a change is answered once it is stored.
class catalog {
public:
    explicit catalog(topic_service& svc) : svc_(svc) {}

    /** Serves one request to `<instance>/TopicManager` or `<instance>/topic.<name>`: `message` is
        the whole request (owned), the reply goes back along `route` (twoway only).
        TopicManager: create, retrieve, retrieveAll, getSliceChecksums.
        Topic: getName, getPublisher, getNonReplicatedPublisher, subscribeAndGetPublisher,
        unsubscribe, link, unlink, getLinkInfoSeq, getSubscribers, destroy, getLinkProxy. */
    void dispatch(protocol::byte_buffer message, net::callback_route route);

    /// Whether `topic` has the subscriber whose stringified identity is `key`: its per-subscriber
    /// publisher object exists (subscribeAndGetPublisher's result; ObjectNotExist once it is gone).
    bool has_subscriber(const std::string& topic, const std::string& key) const;
    /// A delivery shard removed a failed subscriber: forget it.
    void forget(const std::string& topic, const std::string& key);

    /// Removes the link from `name` to `linked` (link_info::key()) after its TopicLink answered ObjectNotExist
    /// (IceStorm's rule for a link whose topic is gone). Shard 0.
    void drop_link(const std::string& name, const std::string& linked);

    /// Creates `name` if absent (configured topics, upstream links); `done` runs once every shard knows it.
    void ensure_topic(const std::string& name, std::function<void()> done);

    /** Rebuilds topics, subscribers and links read from the topic database. Call once, before
        the shards run: every shard's local_topics is filled directly. A subscriber whose stored
        QoS no longer parses is skipped with a warning. */
    void restore(stored_catalog stored);

    /// The subscriber `proxy` (not nil) with QoS `entries` stands for, or the BadQoS reason.
    /// Reads only configuration: any thread.
    std::variant<subscriber, std::string> make_subscriber(protocol::proxy proxy,
                                                          const std::vector<std::pair<std::string, std::string>>& entries) const;

    // ---- takeover (docs/takeover.md "The topic service moves"); shard 0 ----
    /// Appends the topic names and links (not the subscribers: their delivery shards hold them).
    void export_to(stored_catalog& out) const;
    /// A subscriber a takeover brought, placed on its delivery shard.
    struct placement {
        std::string topic;
        std::string key;
        protocol::identity id;
        unsigned shard = 0;
    };
    /** Takes over the old process's topics, links and subscribers: a topic unknown here is
        created; a subscriber whose topic is missing or that is subscribed here already is left
        out (`added[i]` false), every other one is recorded (`added[i]` true) for its delivery
        shard to add. Nothing is stored: a takeover runs only with a transient topic service.
        @return every topic's links after the merge, for the shards. */
    std::map<std::string, std::vector<link_info>> adopt(const std::vector<std::string>& topics,
                                                        const std::vector<stored_link>& links,
                                                        const std::vector<placement>& placed, std::vector<char>& added);

private:
    struct subscription {
        protocol::identity id;
        unsigned shard = 0;
    };
    struct topic {
        std::map<std::string, subscription> subscribers;  // key: stringified identity
        std::vector<link_info> links;
    };
    struct call;
    using write_fn = std::function<void(topic_store&, topic_store::done_fn)>;

    /// Runs `write` on the topic database, then `then` on shard 0 with its outcome (empty: stored).
    /// Transient (no database): `then` runs at once with an empty outcome.
    void persist(write_fn write, topic_store::done_fn then);
    void manager_op(call& k);
    void topic_op(call& k, const std::string& name);
    void create(call& k, const std::string& name);
    /// With a topic database: answers UnknownLocalException and returns true when IceStorm's
    /// key for `topic` and `subscriber` would pass icestorm_key_bytes_max.
    bool refuse_long_key(call& k, const std::string& topic, const protocol::identity& subscriber);
    void subscribe(call& k, const std::string& name);
    void unsubscribe(call& k, const std::string& name);
    void link(call& k, const std::string& name);
    void unlink(call& k, const std::string& name);
    void destroy(call& k, const std::string& name);
    void broadcast_links(const std::string& name);

    topic_service& svc_;
    std::map<std::string, topic> topics_;
};

}  // namespace moraine::icestorm_bridge
