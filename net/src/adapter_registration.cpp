// Registering the router's client endpoints under an adapter id (see adapter_registration.hpp).
#include <moraine/net/adapter_registration.hpp>

#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <spdlog/spdlog.h>

#include <atomic>
#include <future>
#include <utility>

namespace moraine::net {

namespace {

/// The parameters: adapter id, then the replica group id when there is one, then the proxy.
protocol::byte_buffer adapter_proxy_params(const adapter_names& names, const protocol::proxy& proxy) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_string(names.adapter_id);
    if (!names.replica_group_id.empty()) os.write_string(names.replica_group_id);
    protocol::write_proxy(os, proxy);
    os.end_encapsulation(start);
    return os.take();
}

/// "adapter `R1'" or "adapter `R1' of replica group `G'", for the log.
std::string describe(const adapter_names& names) {
    std::string s = "adapter `" + names.adapter_id + "'";
    if (!names.replica_group_id.empty()) s += " of replica group `" + names.replica_group_id + "'";
    return s;
}

}  // namespace

protocol::proxy adapter_proxy(const std::vector<protocol::endpoint>& endpoints) {
    protocol::proxy p;
    p.id = {"dummy", ""};
    p.endpoints = endpoints;
    return p;
}

registry_request adapter_proxy_request(const adapter_names& names, const protocol::proxy& proxy) {
    const bool replicated = !names.replica_group_id.empty();
    return {replicated ? set_replicated_adapter_proxy_operation : set_adapter_proxy_operation,
            set_adapter_proxy_mode, adapter_proxy_params(names, proxy),
            [names](std::string_view type) -> std::string {
                if (type == "::Ice::AdapterNotFoundException")
                    return "the locator registry does not know " + describe(names) +
                           " (AdapterNotFoundException: deploy it, or enable IceGrid.Registry.DynamicRegistration)";
                if (type == "::Ice::AdapterAlreadyActiveException")
                    return "another process has registered " + describe(names) + " (AdapterAlreadyActiveException)";
                if (type == "::Ice::InvalidReplicaGroupIdException")
                    return "the locator registry refuses " + describe(names) +
                           " (InvalidReplicaGroupIdException: the adapter is deployed in another replica group, "
                           "or the group is not deployed)";
                return {};
            }};
}

void set_adapter_proxy(invoke_fn call, const protocol::proxy& locator, const adapter_names& names,
                       const protocol::proxy& proxy, registration_done done) {
    call_locator_registry(std::move(call), locator, adapter_proxy_request(names, proxy), std::move(done));
}

locator_adapter::locator_adapter(shard_set& shards, protocol::proxy locator, adapter_names names)
    : shards_(shards), locator_(std::move(locator)), names_(std::move(names)),
      registered_(std::make_shared<std::atomic<bool>>(false)) {}

void locator_adapter::register_endpoints(std::vector<protocol::endpoint> endpoints) {
    shards_.invoke_on(0, [locator = locator_, names = names_, registered = registered_,
                          proxy = adapter_proxy(endpoints)](shard& home) {
        set_adapter_proxy(bounded_invoker(home), locator, names, proxy,
                          [names, registered, proxy](bool ok, std::string why) {
                              registered->store(ok);
                              if (ok)
                                  spdlog::info("registered {} with the locator registry: {}", describe(names),
                                               protocol::proxy_to_string(proxy));
                              else
                                  spdlog::error("could not register {} with the locator registry ({}); clients "
                                                "cannot reach this router through it",
                                                describe(names), why);
                          });
    });
}

void locator_adapter::withdraw(std::chrono::milliseconds bound) {
    if (!registered_->load()) return;
    // Shared with the shard's call, which may answer after this thread stopped waiting.
    auto answered = std::make_shared<std::promise<void>>();
    auto done = answered->get_future();
    shards_.invoke_on(0, [locator = locator_, names = names_, answered](shard& home) {
        set_adapter_proxy(bounded_invoker(home), locator, names, protocol::proxy{},
                          [names, answered](bool ok, std::string why) {
                              if (ok)
                                  spdlog::info("withdrew {} from the locator registry", describe(names));
                              else
                                  spdlog::warn("could not withdraw {} from the locator registry ({}); it keeps "
                                               "this router's endpoints",
                                               describe(names), why);
                              answered->set_value();
                          });
    });
    if (done.wait_for(bound) != std::future_status::ready)
        spdlog::warn("no answer from the locator registry within {} ms: {} may keep this router's endpoints",
                     bound.count(), describe(names_));
}

}  // namespace moraine::net
