#pragma once
// Registering the admin object's Process proxy with an IceGrid locator registry
// (Ice.Admin.ServerId + Ice.Default.Locator), as an Ice 3.7 communicator does once its admin
// object is up: icegridnode waits for it before a server is "active", and stops the server and
// reads its properties through it (docs/properties.md, "The admin object").
#include <moraine/net/locator_registry_call.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace moraine::net {

class shard_set;

/// `idempotent void Ice::LocatorRegistry::setServerProcessProxy(string id, Process* proxy)
/// throws ServerNotFoundException`: mode 2.
inline constexpr std::string_view set_process_proxy_operation = "setServerProcessProxy";
inline constexpr std::uint8_t set_process_proxy_mode = 2;

/// The parameters of setServerProcessProxy: a whole encoding-1.1 encapsulation.
protocol::byte_buffer set_process_proxy_params(std::string_view server_id, const protocol::proxy& process);

/** Through `call`: Locator::getRegistry on `locator`, then LocatorRegistry::setServerProcessProxy(`server_id`,
    `process`) on the registry it returns. `done` runs once: ok, or the reason it failed
    (locator or registry unreachable, no registry, ServerNotFoundException, another answer). */
void register_process_proxy(invoke_fn call, const protocol::proxy& locator, std::string server_id,
                            protocol::proxy process, registration_done done);

/** Registers `admin` (the admin object's proxy; its `Process` facet is what is registered) as
    server `server_id`'s Process proxy through `locator`, from shard 0 of `shards` (each call
    bounded by the runtime's connect timeout), and logs the outcome: info when registered, error
    otherwise. The router keeps running either way. Call after the admin object started. */
void register_admin_with_locator(shard_set& shards, const protocol::proxy& locator, std::string server_id,
                                 const protocol::proxy& admin);

}  // namespace moraine::net
