#include <moraine/app/listener_manifest.hpp>

#include <moraine/net/metrics_server.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <map>

namespace moraine::app {

namespace {

/// Adds `endpoints` of `adapter`, counting repeats as shard_set::listen does (listener_id::ordinal).
void add(std::vector<net::listener_id>& out, const char* adapter, const std::vector<protocol::endpoint>& endpoints) {
    std::map<std::string, std::uint32_t> seen;
    for (const auto& e : endpoints) {
        auto text = protocol::endpoint_to_string(e);
        const auto ordinal = seen[text]++;
        out.push_back({adapter, std::move(text), ordinal});
    }
}

}  // namespace

std::vector<net::listener_id> listener_manifest(const app_config& cfg) {
    std::vector<net::listener_id> out;
    // The adapter names are the ones moraine-router's services pass to shard_set::listen.
    add(out, "Glacier2.Client", cfg.router.client_endpoints);
    add(out, "Glacier2.Server", cfg.router.server_endpoints);
    if (cfg.topics.enabled) {
        add(out, "IceStorm.TopicManager", cfg.topics.topic_manager_endpoints);
        add(out, "IceStorm.Publish", cfg.topics.publish_endpoints);
    }
    if (cfg.admin.enabled) add(out, "Ice.Admin", cfg.admin.endpoints);
    if (cfg.runtime.metrics.enabled) out.push_back(net::metrics_listener_id(cfg.runtime.metrics));
    return out;
}

}  // namespace moraine::app
