#include <moraine/app/app_config.hpp>

#include <moraine/net/runtime_config_reader.hpp>

namespace moraine::app {

namespace {

/// Every endpoint Moraine will listen on must be one it serves; the error names the key.
void require_served_endpoints(const app_config& c, bool yaml) {
    auto check = [&](const std::vector<protocol::endpoint>& eps, const char* yaml_key, const char* ice_key) {
        net::require_served(eps, c.source, yaml ? yaml_key : ice_key, c.runtime.tls);
    };
    check(c.router.client_endpoints, "client.endpoints", "Glacier2.Client.Endpoints");
    check(c.router.server_endpoints, "server.endpoints", "Glacier2.Server.Endpoints");
    if (!c.topics.enabled) return;
    check(c.topics.topic_manager_endpoints, "topics.topic_manager_endpoints", "IceStorm.TopicManager.Endpoints");
    check(c.topics.publish_endpoints, "topics.publish_endpoints", "IceStorm.Publish.Endpoints");
}

}  // namespace

app_config load_yaml_config(const std::filesystem::path& path, bool router_required) {
    app_config c;
    c.source = path.string();
    YAML::Node doc = net::load_yaml_file(path);
    net::yaml_section root(doc, "", c.source);
    if (router_required || root.has("client")) {
        c.router = router::read_config(root, path.parent_path());
    } else {
        for (const char* key : {"instance_name", "return_client_proxy", "add_connection_context", "session", "client",
                                "server", "auth", "filters"})
            (void)root.take(key);  // the router's sections: not ours to read here
    }
    c.runtime = net::read_runtime_config(root, path.parent_path());
    c.topics = icestorm::read_topics_config(root);
    root.finish();
    require_served_endpoints(c, true);
    return c;
}

app_config load_ice_config(const std::filesystem::path& path) {
    app_config c;
    c.source = path.string();
    net::property_file p(c.source, net::read_property_file(path, c.warnings));
    c.router = router::read_config(p, c.warnings);
    c.runtime = net::read_runtime_config(p, c.warnings);
    c.topics = icestorm::read_topics_config(p, c.warnings);
    require_served_endpoints(c, false);
    return c;
}

}  // namespace moraine::app
