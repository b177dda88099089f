// Reading the topic service's keys (see config.hpp).
#include <moraine/icestorm_bridge/config.hpp>

#include "config_keys.hpp"

namespace moraine::icestorm_bridge {

namespace {

/// The upstream TopicManager proxy, parsed; `where` and `key` name it in the error. Direct (one
/// endpoint per replica, tried in turn) or indirect (`IceStorm/TopicManager`, a well-known object
/// such as a replicated IceStorm's under IceGrid, or `...@adapter`: resolved through the locator,
/// which the application requires then).
protocol::proxy upstream_manager(const std::string& text, const std::string& where, const std::string& key) {
    auto p = protocol::proxy_from_string(text);
    if (!p || p->is_nil())
        throw net::config_error(where, key,
                                "expected a proxy such as \"IceStorm/TopicManager:tcp -h HOST -p 10000\" or, through "
                                "the locator, \"IceStorm/TopicManager\", got '" + text + "'");
    return *p;
}

/// What every upstream needs, whichever file it came from.
void check_upstream(const upstream_config& u, const std::string& where, const std::string& topics_key,
                    const std::string& federated_key) {
    if (u.topic_manager && u.topics.empty())
        throw net::config_error(where, topics_key, "an upstream needs at least one topic to link");
    // A federation's members are linked one by one, each at its own endpoint: a proxy that a
    // locator resolves (a replica group) names no members.
    if (u.federated && (!u.topic_manager || u.topic_manager->endpoints.empty()))
        throw net::config_error(where, federated_key,
                                "a federated upstream needs a TopicManager proxy with one endpoint per member");
}

/// QueueSizeMaxPolicy's two values, spelled as IceStorm spells them; anything else stops start-up
/// (IceStorm only warns and falls back to RemoveSubscriber).
queue_policy parse_policy(const std::string& v, const std::string& where, const std::string& key) {
    if (v == "RemoveSubscriber") return queue_policy::remove_subscriber;
    if (v == "DropEvents") return queue_policy::drop_events;
    throw net::config_error(where, key, "expected RemoveSubscriber or DropEvents, got '" + v + "'");
}

/// Send.Timeout and Send.QueueSizeMax take -1 (none) or a positive number; 0 means nothing useful.
void check_not_zero(long long v, const std::string& where, const std::string& key) {
    if (v == 0) throw net::config_error(where, key, "expected -1 (no limit) or a positive number, got 0");
}

}  // namespace

delivery_limits delivery_limits_of(const topics_config& t) noexcept {
    delivery_limits d;
    d.queue_size_max = t.send_queue_size_max;
    d.policy = t.send_queue_policy;
    d.send_timeout_ms = t.send_timeout_ms;
    d.discard_interval_s = t.discard_interval_s;
    d.queue_bytes = t.subscriber_queue_bytes;
    return d;
}

topics_config read_topics_config(const net::property_file& p, std::vector<std::string>& warnings) {
    topics_config t;
    if (const std::string* name = p.find("IceStorm.InstanceName")) t.instance_name = *name;
    t.topic_manager_endpoints = p.endpoints("IceStorm.TopicManager.Endpoints");
    t.topic_manager_published_endpoints = p.endpoints("IceStorm.TopicManager.PublishedEndpoints");
    t.publish_endpoints = p.endpoints("IceStorm.Publish.Endpoints");
    t.publish_published_endpoints = p.endpoints("IceStorm.Publish.PublishedEndpoints");
    t.enabled = !t.topic_manager_endpoints.empty() && !t.publish_endpoints.empty();
    p.read_int("Moraine.Topics.MemoryBudget", 0, LLONG_MAX, t.memory_budget_bytes);
    p.read_int("Moraine.Topics.SubscriberQueueBytes", 1, LLONG_MAX, t.subscriber_queue_bytes);
    p.read_int("IceStorm.Send.Timeout", -1, INT32_MAX, t.send_timeout_ms);
    check_not_zero(t.send_timeout_ms, p.at("IceStorm.Send.Timeout"), "IceStorm.Send.Timeout");
    p.read_int("IceStorm.Discard.Interval", 0, INT32_MAX, t.discard_interval_s);
    p.read_int("IceStorm.Send.QueueSizeMax", -1, INT32_MAX, t.send_queue_size_max);
    check_not_zero(t.send_queue_size_max, p.at("IceStorm.Send.QueueSizeMax"), "IceStorm.Send.QueueSizeMax");
    if (const std::string* v = p.find("IceStorm.Send.QueueSizeMaxPolicy"))
        t.send_queue_policy = parse_policy(*v, p.at("IceStorm.Send.QueueSizeMaxPolicy"), "IceStorm.Send.QueueSizeMaxPolicy");
    p.read_int("IceStorm.Trace.TopicManager", 0, INT32_MAX, t.trace.topic_manager);
    p.read_int("IceStorm.Trace.Topic", 0, INT32_MAX, t.trace.topic);
    p.read_int("IceStorm.Trace.Subscriber", 0, INT32_MAX, t.trace.subscriber);
    int transient = 0;  // IceStorm reads any integer; 0 and 1 are the documented values
    p.read_int("IceStorm.Transient", 0, 1, transient);
    t.transient = transient == 1;
    t.store_dir = "IceStorm";  // IceStorm 3.7's default LMDB.Path: the service's name, relative
    if (const std::string* path = p.find("IceStorm.LMDB.Path"); path && !path->empty()) t.store_dir = *path;
    if (t.transient) t.store_dir.clear();
    auto& u = t.upstream;
    if (const std::string* m = p.find("Moraine.Topics.Upstream.TopicManager"))
        u.topic_manager = upstream_manager(*m, p.at("Moraine.Topics.Upstream.TopicManager"),
                                           "Moraine.Topics.Upstream.TopicManager");
    u.topics = p.words("Moraine.Topics.Upstream.Topics");
    if (const std::string* c = p.find("Moraine.Topics.Upstream.LinkCategory")) u.link_category = *c;
    u.endpoints = p.endpoints("Moraine.Topics.Upstream.Endpoints");
    p.read_int("Moraine.Topics.Upstream.Cost", 0, INT32_MAX, u.cost);
    p.read_int("Moraine.Topics.Upstream.CheckInterval", 100, 3600000, u.check_interval_ms);
    int federated = 0;
    p.read_int("Moraine.Topics.Upstream.Federated", 0, 1, federated);
    u.federated = federated == 1;
    check_upstream(u, p.at("Moraine.Topics.Upstream.Topics"), "Moraine.Topics.Upstream.Topics",
                   "Moraine.Topics.Upstream.Federated");
    if (u.topic_manager && !t.enabled)
        throw net::config_error(p.at("Moraine.Topics.Upstream.TopicManager"), "Moraine.Topics.Upstream.TopicManager",
                                "needs the topic service (IceStorm.TopicManager.Endpoints and IceStorm.Publish.Endpoints)");
    if (!t.enabled && (!t.topic_manager_endpoints.empty() || !t.publish_endpoints.empty()))
        warnings.push_back(p.file() +
                           ": topic service off: it needs both IceStorm.TopicManager.Endpoints and "
                           "IceStorm.Publish.Endpoints");
    detail::check_icestorm_keys(p, warnings);  // docs/properties.md
    return t;
}

topics_config read_topics_config(net::yaml_section& root, const std::filesystem::path& base_dir) {
    topics_config t;
    auto s = root.section("topics");
    s.read("enabled", t.enabled);
    s.read("instance_name", t.instance_name);
    t.topic_manager_endpoints = s.read_endpoints("topic_manager_endpoints");
    t.topic_manager_published_endpoints = s.read_endpoints("topic_manager_published_endpoints");
    t.publish_endpoints = s.read_endpoints("publish_endpoints");
    t.publish_published_endpoints = s.read_endpoints("publish_published_endpoints");
    s.read_size("subscriber_queue_bytes", t.subscriber_queue_bytes);
    s.read_size("memory_budget_bytes", t.memory_budget_bytes);
    s.read_int("send_timeout_ms", -1, INT32_MAX, t.send_timeout_ms);
    check_not_zero(t.send_timeout_ms, s.file(), "topics.send_timeout_ms");
    s.read_int("discard_interval_s", 0, INT32_MAX, t.discard_interval_s);
    s.read_int("send_queue_size_max", -1, INT32_MAX, t.send_queue_size_max);
    check_not_zero(t.send_queue_size_max, s.file(), "topics.send_queue_size_max");
    std::string policy;
    s.read("send_queue_size_max_policy", policy);
    if (!policy.empty()) t.send_queue_policy = parse_policy(policy, s.file(), "topics.send_queue_size_max_policy");
    t.transient = false;  // IceStorm's default: kept in a database
    s.read("transient", t.transient);
    s.read("store", t.store_dir);
    if (!t.store_dir.empty()) t.store_dir = (base_dir / t.store_dir).lexically_normal().string();  // absolute stays
    auto tr = s.section("trace");
    tr.read_int("topic_manager", 0, INT32_MAX, t.trace.topic_manager);
    tr.read_int("topic", 0, INT32_MAX, t.trace.topic);
    tr.read_int("subscriber", 0, INT32_MAX, t.trace.subscriber);
    tr.finish();
    auto up = s.section("upstream");
    auto& u = t.upstream;
    std::string manager;
    up.read("topic_manager", manager);
    if (!manager.empty()) u.topic_manager = upstream_manager(manager, up.file(), "topics.upstream.topic_manager");
    u.topics = up.read_list("topics");
    up.read("link_category", u.link_category);
    u.endpoints = up.read_endpoints("endpoints");
    up.read_int("cost", 0, INT32_MAX, u.cost);
    up.read_int("check_interval_ms", 100, 3600000, u.check_interval_ms);
    up.read("federated", u.federated);
    up.finish();
    check_upstream(u, up.file(), "topics.upstream.topics", "topics.upstream.federated");
    s.finish();
    if (!t.enabled && u.topic_manager)
        throw net::config_error(up.file(), "topics.upstream", "needs topics.enabled: true");
    if (!t.enabled) {
        // Not this file's service (moraine-topics may still serve it: in memory unless --store).
        if (t.store_dir.empty()) t.transient = true;
        return t;
    }
    if (t.topic_manager_endpoints.empty())
        throw net::config_error(s.file(), "topics.topic_manager_endpoints", "required when topics.enabled is true");
    if (t.publish_endpoints.empty())
        throw net::config_error(s.file(), "topics.publish_endpoints", "required when topics.enabled is true");
    if (!t.transient && t.store_dir.empty())
        throw net::config_error(s.file(), "topics.store",
                                "required unless topics.transient is true: the directory where topics, subscribers "
                                "and links are kept across restarts");
    if (t.transient) t.store_dir.clear();
    return t;
}

std::vector<upstream_config> upstream_members(const upstream_config& u) {
    if (!u.topic_manager) return {};
    if (!u.federated || u.topic_manager->endpoints.size() < 2) return {u};
    std::vector<upstream_config> members;
    for (const auto& ep : u.topic_manager->endpoints) {
        auto& m = members.emplace_back(u);
        m.topic_manager->endpoints = {ep};
    }
    return members;
}

}  // namespace moraine::icestorm_bridge
