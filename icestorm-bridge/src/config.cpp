// Reading the topic service's keys (see config.hpp).
#include <moraine/icestorm/config.hpp>

#include "config_keys.hpp"

namespace moraine::icestorm {

namespace {

/// The upstream TopicManager proxy, parsed; `where` and `key` name it in the error.
protocol::proxy upstream_manager(const std::string& text, const std::string& where, const std::string& key) {
    auto p = protocol::proxy_from_string(text);
    if (!p || p->endpoints.empty())
        throw net::config_error(where, key, "expected a direct proxy such as \"IceStorm/TopicManager:tcp -h HOST -p 10000\", got '" + text + "'");
    return *p;
}

/// What every upstream needs, whichever file it came from.
void check_upstream(const upstream_config& u, const std::string& where, const std::string& topics_key) {
    if (u.topic_manager && u.topics.empty())
        throw net::config_error(where, topics_key, "an upstream needs at least one topic to link");
}

}  // namespace

topics_config read_topics_config(const net::property_file& p, std::vector<std::string>& warnings) {
    topics_config t;
    if (const std::string* name = p.find("IceStorm.InstanceName")) t.instance_name = *name;
    t.topic_manager_endpoints = p.endpoints("IceStorm.TopicManager.Endpoints");
    t.topic_manager_published_endpoints = p.endpoints("IceStorm.TopicManager.PublishedEndpoints");
    t.publish_endpoints = p.endpoints("IceStorm.Publish.Endpoints");
    t.publish_published_endpoints = p.endpoints("IceStorm.Publish.PublishedEndpoints");
    t.enabled = !t.topic_manager_endpoints.empty() && !t.publish_endpoints.empty();
    auto& u = t.upstream;
    if (const std::string* m = p.find("Moraine.Topics.Upstream.TopicManager"))
        u.topic_manager = upstream_manager(*m, p.at("Moraine.Topics.Upstream.TopicManager"),
                                           "Moraine.Topics.Upstream.TopicManager");
    u.topics = p.words("Moraine.Topics.Upstream.Topics");
    if (const std::string* c = p.find("Moraine.Topics.Upstream.LinkCategory")) u.link_category = *c;
    u.endpoints = p.endpoints("Moraine.Topics.Upstream.Endpoints");
    p.read_int("Moraine.Topics.Upstream.Cost", 0, INT32_MAX, u.cost);
    p.read_int("Moraine.Topics.Upstream.CheckInterval", 100, 3600000, u.check_interval_ms);
    check_upstream(u, p.at("Moraine.Topics.Upstream.Topics"), "Moraine.Topics.Upstream.Topics");
    if (u.topic_manager && !t.enabled)
        throw net::config_error(p.at("Moraine.Topics.Upstream.TopicManager"), "Moraine.Topics.Upstream.TopicManager",
                                "needs the topic service (IceStorm.TopicManager.Endpoints and IceStorm.Publish.Endpoints)");
    if (!t.enabled && (!t.topic_manager_endpoints.empty() || !t.publish_endpoints.empty()))
        warnings.push_back(p.file() +
                           ": topic service off: it needs both IceStorm.TopicManager.Endpoints and "
                           "IceStorm.Publish.Endpoints");
    detail::check_icestorm_keys(p, t.enabled, warnings);  // docs/properties.md
    return t;
}

topics_config read_topics_config(net::yaml_section& root) {
    topics_config t;
    auto s = root.section("topics");
    s.read("enabled", t.enabled);
    s.read("instance_name", t.instance_name);
    t.topic_manager_endpoints = s.read_endpoints("topic_manager_endpoints");
    t.topic_manager_published_endpoints = s.read_endpoints("topic_manager_published_endpoints");
    t.publish_endpoints = s.read_endpoints("publish_endpoints");
    t.publish_published_endpoints = s.read_endpoints("publish_published_endpoints");
    s.read_size("subscriber_queue_bytes", t.subscriber_queue_bytes);
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
    up.finish();
    check_upstream(u, up.file(), "topics.upstream.topics");
    s.finish();
    if (!t.enabled && u.topic_manager)
        throw net::config_error(up.file(), "topics.upstream", "needs topics.enabled: true");
    if (!t.enabled) return t;
    if (t.topic_manager_endpoints.empty())
        throw net::config_error(s.file(), "topics.topic_manager_endpoints", "required when topics.enabled is true");
    if (t.publish_endpoints.empty())
        throw net::config_error(s.file(), "topics.publish_endpoints", "required when topics.enabled is true");
    return t;
}

}  // namespace moraine::icestorm
