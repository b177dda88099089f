#include <moraine/app/app_config.hpp>

#include <moraine/icestorm_bridge/published_aliases.hpp>
#include <moraine/net/config_error.hpp>
#include <moraine/net/runtime_config_reader.hpp>
#include <moraine/protocol/proxy.hpp>

#include <utility>

namespace moraine::app {

namespace {

/// A udp client endpoint could route nothing: a datagram belongs to no session (createSession
/// is a twoway, which no datagram carries), and glacier2router, which accepts the key, loses
/// every datagram there and closes the endpoint's socket at the first one (docs/glacier2.md
/// "udp"). Refused with that reason rather than the generic one.
void refuse_udp_client_endpoints(const app_config& c, const net::property_file* props) {
    const char* key = props ? "Glacier2.Client.Endpoints" : "client.endpoints";
    for (const auto& e : c.router.client_endpoints) {
        if (!e.is_udp()) continue;
        throw net::config_error(props ? props->at(key) : c.source, key,
                                "'" + protocol::endpoint_to_string(e) +
                                    "': udp endpoints are not served on the client side: a datagram carries no "
                                    "session (createSession is a twoway call), so nothing could be routed through "
                                    "it; glacier2router loses such datagrams too (docs/glacier2.md, \"udp\")");
    }
}

/// Every endpoint Moraine will listen on must be one it serves; the error names the key.
/// `props` (a property file, null for YAML) says where each key was set: file, line or command line.
void require_served_endpoints(const app_config& c, const net::property_file* props) {
    auto check = [&](const std::vector<protocol::endpoint>& eps, const char* yaml_key, const char* ice_key,
                     bool datagrams = false) {
        net::require_served(eps, props ? props->at(ice_key) : c.source, props ? ice_key : yaml_key, c.runtime.tls,
                            datagrams);
    };
    refuse_udp_client_endpoints(c, props);
    check(c.router.client_endpoints, "client.endpoints", "Glacier2.Client.Endpoints");
    // A udp server endpoint takes back ends' datagram callbacks, as glacier2router's does.
    check(c.router.server_endpoints, "server.endpoints", "Glacier2.Server.Endpoints", true);
    check(c.admin.endpoints, "-", "Ice.Admin.Endpoints");
    if (!c.topics.enabled) return;
    check(c.topics.topic_manager_endpoints, "topics.topic_manager_endpoints", "IceStorm.TopicManager.Endpoints");
    // A udp Publish endpoint takes publishes as datagrams, as IceStorm's does.
    check(c.topics.publish_endpoints, "topics.publish_endpoints", "IceStorm.Publish.Endpoints", true);
}

/// Registering the client adapter needs a locator to register with, and a replica group is
/// joined by an adapter: without them the keys could not be honoured (Ice would not register
/// at all), so start-up stops naming the key rather than run unreachable through it.
void require_locator_for_adapter(const app_config& c, const net::property_file* props) {
    const auto& r = c.router;
    const char* adapter_key = props ? "Glacier2.Client.AdapterId" : "client.adapter_id";
    if (!r.client_replica_group_id.empty() && r.client_adapter_id.empty()) {
        const char* key = props ? "Glacier2.Client.ReplicaGroupId" : "client.replica_group_id";
        throw net::config_error(props ? props->at(key) : c.source, key,
                                std::string("a replica group is joined by an adapter: set ") + adapter_key +
                                    " too (each router its own id)");
    }
    if (r.client_adapter_id.empty() || c.runtime.locator) return;
    throw net::config_error(props ? props->at(adapter_key) : c.source, adapter_key,
                            std::string("'") + r.client_adapter_id +
                                "': the client endpoints are registered with a locator, and none is configured "
                                "(Ice.Default.Locator, YAML locator.proxy)");
}

/// An indirect upstream TopicManager (topics.upstream: a replicated IceStorm's well-known
/// `IceStorm/TopicManager` under IceGrid) is found through the locator: without one the link could
/// never be made, so start-up stops naming the key.
void require_locator_for_upstream(const app_config& c, const net::property_file* props) {
    const auto& m = c.topics.upstream.topic_manager;
    if (!m || !m->endpoints.empty() || c.runtime.locator) return;
    const char* key = props ? "Moraine.Topics.Upstream.TopicManager" : "topics.upstream.topic_manager";
    throw net::config_error(props ? props->at(key) : c.source, key,
                            "an indirect proxy (no endpoints: " + protocol::proxy_to_string(*m) +
                                ") is found through a locator, and none is configured (Ice.Default.Locator, YAML "
                                "locator.proxy)");
}

/// An indirect verifier or session manager with no locator configured cannot be reached (as in
/// glacier2router, whose calls then fail with NoEndpointException): said at start.
void warn_indirect_without_locator(app_config& c) {
    if (c.runtime.locator) return;
    const std::pair<const std::string*, const char*> proxies[] = {
        {&c.router.permissions_verifier, "the PermissionsVerifier"},
        {c.router.ssl_allow_all ? nullptr : &c.router.ssl_permissions_verifier, "the SSLPermissionsVerifier"},
        {&c.router.session_manager, "the SessionManager"},
        {&c.router.ssl_session_manager, "the SSLSessionManager"}};
    for (const auto& [value, what] : proxies) {
        if (!value || value->empty()) continue;
        auto p = protocol::proxy_from_string(*value);
        if (p && p->endpoints.empty())
            c.warnings.push_back(std::string(what) + " '" + *value +
                                 "' is an indirect proxy but no locator is configured (Ice.Default.Locator, YAML "
                                 "locator.proxy): calls to it fail with NoEndpointException");
    }
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
                                "server", "auth", "filters", "trace"})
            (void)root.take(key);  // the router's sections: not ours to read here
    }
    c.runtime = net::read_runtime_config(root, path.parent_path());
    c.topics = icestorm_bridge::read_topics_config(root, path.parent_path());
    c.runtime.memory_budget_bytes = c.topics.memory_budget_bytes;  // the runtime enforces it
    c.runtime.endpoint_aliases = icestorm_bridge::published_aliases(c.topics);  // the runtime connects
    root.finish();
    require_served_endpoints(c, nullptr);
    require_locator_for_adapter(c, nullptr);
    require_locator_for_upstream(c, nullptr);
    warn_indirect_without_locator(c);
    return c;
}

app_config load_ice_config(const std::filesystem::path& path) { return load_ice_config({path}, {}); }

app_config load_ice_config(const std::vector<std::filesystem::path>& files, const net::property_map& overrides) {
    app_config c;
    net::property_map merged;
    for (const auto& f : files) {
        c.source += (c.source.empty() ? "" : ",") + f.string();
        for (auto& [key, value] : net::read_property_file(f, c.warnings)) {
            if (files.size() > 1) value.origin = net::where(f.string(), value.line);  // which file, in messages
            merged[key] = std::move(value);
        }
    }
    if (c.source.empty()) c.source = "command line";
    for (const auto& [key, value] : overrides) {
        if (value.value.empty())
            merged.erase(key);
        else
            merged[key] = value;
    }
    net::property_file p(c.source, std::move(merged));
    c.router = router::read_config(p, c.warnings);
    c.runtime = net::read_runtime_config(p, c.warnings);
    c.topics = icestorm_bridge::read_topics_config(p, c.warnings);
    c.runtime.memory_budget_bytes = c.topics.memory_budget_bytes;  // the runtime enforces it
    c.runtime.endpoint_aliases = icestorm_bridge::published_aliases(c.topics);  // the runtime connects
    c.admin = net::read_admin_config(p);
    for (const auto& [key, value] : p.all()) c.properties.emplace(key, value.value);
    require_served_endpoints(c, &p);
    require_locator_for_adapter(c, &p);
    require_locator_for_upstream(c, &p);
    warn_indirect_without_locator(c);
    return c;
}

}  // namespace moraine::app
