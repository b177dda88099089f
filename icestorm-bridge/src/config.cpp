// Reading the topic service's keys (see config.hpp).
#include <moraine/icestorm/config.hpp>

namespace moraine::icestorm {

topics_config read_topics_config(const net::property_file& p, std::vector<std::string>& warnings) {
    topics_config t;
    if (const std::string* name = p.find("IceStorm.InstanceName")) t.instance_name = *name;
    t.topic_manager_endpoints = p.endpoints("IceStorm.TopicManager.Endpoints");
    t.topic_manager_published_endpoints = p.endpoints("IceStorm.TopicManager.PublishedEndpoints");
    t.publish_endpoints = p.endpoints("IceStorm.Publish.Endpoints");
    t.publish_published_endpoints = p.endpoints("IceStorm.Publish.PublishedEndpoints");
    t.enabled = !t.topic_manager_endpoints.empty() && !t.publish_endpoints.empty();
    if (!t.enabled && (!t.topic_manager_endpoints.empty() || !t.publish_endpoints.empty()))
        warnings.push_back(p.file() +
                           ": topic service off: it needs both IceStorm.TopicManager.Endpoints and "
                           "IceStorm.Publish.Endpoints");
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
    s.finish();
    if (!t.enabled) return t;
    if (t.topic_manager_endpoints.empty())
        throw net::config_error(s.file(), "topics.topic_manager_endpoints", "required when topics.enabled is true");
    if (t.publish_endpoints.empty())
        throw net::config_error(s.file(), "topics.publish_endpoints", "required when topics.enabled is true");
    return t;
}

}  // namespace moraine::icestorm
