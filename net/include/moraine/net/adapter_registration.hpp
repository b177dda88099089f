#pragma once
// Registering endpoints with an IceGrid locator registry under an adapter id, optionally in a
// replica group, as an Ice object adapter with an AdapterId does when it is activated: the
// registry then answers findAdapterById(<adapter or replica group>) with them. moraine-router
// registers its client endpoints so (Glacier2.Client.AdapterId, ReplicaGroupId), so that the
// registry can give clients every router of a group.
#include <moraine/net/locator_registry_call.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::net {

class shard_set;

/// `idempotent void Ice::LocatorRegistry::setAdapterDirectProxy(string id, Object* proxy)
/// throws AdapterNotFoundException, AdapterAlreadyActiveException`: mode 2.
inline constexpr std::string_view set_adapter_proxy_operation = "setAdapterDirectProxy";
/// `idempotent void Ice::LocatorRegistry::setReplicatedAdapterDirectProxy(string adapterId,
/// string replicaGroupId, Object* p) throws AdapterNotFoundException,
/// AdapterAlreadyActiveException, InvalidReplicaGroupIdException`: mode 2.
inline constexpr std::string_view set_replicated_adapter_proxy_operation = "setReplicatedAdapterDirectProxy";
inline constexpr std::uint8_t set_adapter_proxy_mode = 2;

/// The names an adapter registers under.
struct adapter_names {
    std::string adapter_id;        ///< required
    std::string replica_group_id;  ///< empty: not in a replica group (setAdapterDirectProxy)
};

/// The proxy registered for `endpoints`: identity `dummy` (the registry keeps only the
/// endpoints), twoway, encoding 1.1.
protocol::proxy adapter_proxy(const std::vector<protocol::endpoint>& endpoints);

/** The LocatorRegistry request that sets `names`' endpoints to those of `proxy` (a nil proxy
    withdraws them): setReplicatedAdapterDirectProxy with a replica group, else
    setAdapterDirectProxy. Its user exceptions are explained naming the adapter. */
registry_request adapter_proxy_request(const adapter_names& names, const protocol::proxy& proxy);

/** Through `call`: Locator::getRegistry on `locator`, then adapter_proxy_request(`names`,
    `proxy`) on the registry. `done` runs once: ok, or why it failed. */
void set_adapter_proxy(invoke_fn call, const protocol::proxy& locator, const adapter_names& names,
                       const protocol::proxy& proxy, registration_done done);

/** An adapter in the locator registry: registered once at start, withdrawn at an orderly
    shutdown. Calls go from shard 0, each bounded by the runtime's connect timeout;
    outcomes are logged (info, or error with the reason) and never stop the router. */
class locator_adapter {
public:
    locator_adapter(shard_set& shards, protocol::proxy locator, adapter_names names);

    /// Registers `endpoints` (as published: ports bound, wildcard hosts expanded). Call once the shards run.
    void register_endpoints(std::vector<protocol::endpoint> endpoints);

    /** Withdraws the registration (the same operation with a nil proxy), if it succeeded, and
        waits for the answer for at most `bound`; blocks the calling thread, which must not be a
        shard's. Past `bound` (or on failure) the registry keeps the endpoints until it drops
        them itself; clients skip an endpoint that refuses connections. */
    void withdraw(std::chrono::milliseconds bound);

private:
    shard_set& shards_;
    protocol::proxy locator_;
    adapter_names names_;
    std::shared_ptr<std::atomic<bool>> registered_;
};

}  // namespace moraine::net
