#pragma once
// The topic service's configuration, from YAML (`topics:`) or IceStorm.* properties.
#include <moraine/icestorm_bridge/delivery.hpp>
#include <moraine/net/property_file.hpp>
#include <moraine/net/yaml_section.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace moraine::icestorm_bridge {

/** `topics.upstream`: topics this service keeps linked *from* another IceStorm (the event
    backbone of several routers, docs/deployment.md), so the backbone forwards each event once
    to this service, which fans it out to its own subscribers. */
struct upstream_config {
    std::optional<protocol::proxy> topic_manager;  ///< the upstream IceStorm::TopicManager; nullopt = none
    std::vector<std::string> topics;                ///< kept linked; created here and upstream if missing
    /// Identity category of the Topic proxies handed to the upstream's Topic::link: IceStorm keys
    /// a link by that identity, so every router linked to one backbone needs its own. Requests
    /// to `<link_category>/topic.<name>` are served as `<instance_name>/topic.<name>`.
    std::string link_category;                      ///< empty = instance_name
    std::vector<protocol::endpoint> endpoints;      ///< where the upstream reaches our TopicManager; empty = published
    std::int32_t cost = 0;                          ///< the link's cost (IceStorm: 0 takes every event)
    std::uint32_t check_interval_ms = 2000;         ///< how often each link is checked (and made again), ms
    /// The topic_manager's endpoints are separate topic services (a federation, e.g. several
    /// moraine-topics), not replicas of one: each topic is linked from every one of them, so
    /// whichever receives a publish forwards it here. false: the endpoints are replicas of one
    /// IceStorm, and the link is made through the first that answers.
    bool federated = false;
};

/** The upstreams `u` links from: for a federated one (with endpoints), one per endpoint, each
    with a TopicManager proxy of that endpoint alone; otherwise `u` itself. None without an
    upstream. Each is kept linked on its own (upstream_link). */
std::vector<upstream_config> upstream_members(const upstream_config& u);

/// IceStorm.Trace.* / YAML `topics.trace`: log categories, all off by default (docs/icestorm.md §7).
struct topics_trace {
    int topic_manager = 0;  ///< IceStorm.Trace.TopicManager: topics created
    int topic = 0;          ///< IceStorm.Trace.Topic: subscribe, unsubscribe, link, unlink, destroy
    int subscriber = 0;     ///< IceStorm.Trace.Subscriber: subscribers that failed for good and were removed
};

/// The IceStorm-compatible topic service's settings.
struct topics_config {
    bool enabled = false;
    std::string instance_name = "IceStorm";
    std::vector<protocol::endpoint> topic_manager_endpoints;
    std::vector<protocol::endpoint> topic_manager_published_endpoints;  ///< empty = the above
    std::vector<protocol::endpoint> publish_endpoints;
    std::vector<protocol::endpoint> publish_published_endpoints;        ///< empty = the above
    std::size_t subscriber_queue_bytes = 1 << 20;  ///< per-subscriber queue bound (bytes) before its QoS applies
    /// Bytes every shard together may hold for events on their way out (outbound queues and
    /// posts between shards) before publishers' connections stop reading until 3/4 of it is
    /// free; 0 = no budget. The runtime enforces it (net::memory_budget; app copies it into
    /// runtime_config). Moraine.Topics.MemoryBudget / topics.memory_budget_bytes.
    std::size_t memory_budget_bytes = 256u << 20;
    /// IceStorm.Send.Timeout / send_timeout_ms: a twoway event unanswered this long fails (ms); -1 = never.
    std::int64_t send_timeout_ms = 60000;
    /// IceStorm.Discard.Interval / discard_interval_s: how long a failed subscriber's events are discarded (s).
    std::int64_t discard_interval_s = 60;
    /// IceStorm.Send.QueueSizeMax / send_queue_size_max: events queued per subscriber; -1 = no limit.
    int send_queue_size_max = -1;
    /// IceStorm.Send.QueueSizeMaxPolicy / send_queue_size_max_policy: RemoveSubscriber or DropEvents.
    queue_policy send_queue_policy = queue_policy::remove_subscriber;
    upstream_config upstream;
    /// IceStorm.Transient=1 / transient: topics, subscribers and links live in memory only. The
    /// readers default it to false, as IceStorm does; a configuration built in code is transient.
    bool transient = true;
    /** IceStorm.LMDB.Path / store: the existing directory of the topic database (topic_store),
        used unless `transient`. Property files default to `IceStorm` (relative to the working
        directory), as IceStorm 3.7 does; YAML requires it. */
    std::string store_dir;
    topics_trace trace;
};

/// The delivery settings every subscriber's delivery_state applies, from `t`.
delivery_limits delivery_limits_of(const topics_config& t) noexcept;

/** IceStorm.InstanceName, IceStorm.TopicManager.(Published)Endpoints and
    IceStorm.Publish.(Published)Endpoints, IceStorm.Send.Timeout, IceStorm.Discard.Interval,
    IceStorm.Send.QueueSizeMax and IceStorm.Send.QueueSizeMaxPolicy, IceStorm.Transient and IceStorm.LMDB.Path,
    Moraine.Topics.MemoryBudget and Moraine.Topics.SubscriberQueueBytes, and Moraine.Topics.Upstream.{TopicManager, Topics,
    LinkCategory, Endpoints, Cost, CheckInterval} (upstream_config). The service is enabled when both endpoint lists are
    set; one alone is reported in `warnings`, as are the other IceStorm.* keys Moraine accepts
    without acting on them (docs/properties.md). @throws config_error (bad endpoint, bad
    upstream, a delivery key out of range or an unknown policy, an IceStorm replication key). */
topics_config read_topics_config(const net::property_file& p, std::vector<std::string>& warnings);

/** The `topics` section of Moraine's YAML (conf/moraine.yaml documents it); a relative `store`
    is taken from `base_dir` (the file's directory).
    @throws config_error: unknown key, bad value, enabled without both endpoint lists, or
    neither `store` nor `transient: true`. */
topics_config read_topics_config(net::yaml_section& root, const std::filesystem::path& base_dir = {});

}  // namespace moraine::icestorm_bridge
