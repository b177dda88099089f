#pragma once
// The topic service's configuration, from YAML (`topics:`) or IceStorm.* properties.
#include <moraine/net/property_file.hpp>
#include <moraine/net/yaml_section.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace moraine::icestorm {

/// The IceStorm-compatible topic service's settings.
struct topics_config {
    bool enabled = false;
    std::string instance_name = "IceStorm";
    std::vector<protocol::endpoint> topic_manager_endpoints;
    std::vector<protocol::endpoint> topic_manager_published_endpoints;  ///< empty = the above
    std::vector<protocol::endpoint> publish_endpoints;
    std::vector<protocol::endpoint> publish_published_endpoints;        ///< empty = the above
    std::size_t subscriber_queue_bytes = 1 << 20;  ///< per-subscriber queue bound (bytes) before its QoS applies
};

/** IceStorm.InstanceName, IceStorm.TopicManager.(Published)Endpoints and
    IceStorm.Publish.(Published)Endpoints. The service is enabled when both endpoint lists are
    set; one alone is reported in `warnings`. @throws config_error (bad endpoint). */
topics_config read_topics_config(const net::property_file& p, std::vector<std::string>& warnings);

/** The `topics` section of Moraine's YAML (conf/moraine.yaml documents it).
    @throws config_error: unknown key, bad value, or enabled without both endpoint lists. */
topics_config read_topics_config(net::yaml_section& root);

}  // namespace moraine::icestorm
