#pragma once
// One call on the locator's registry: Ice::Locator::getRegistry, then an operation on the
// Ice::LocatorRegistry it returns. What an Ice server does to register itself with IceGrid, be it
// its Process proxy (admin_registration.hpp) or an object adapter's endpoints
// (adapter_registration.hpp).
#include <moraine/net/backend_connection.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace moraine::net {

class shard;

/// `["nonmutating"] idempotent LocatorRegistry* Ice::Locator::getRegistry()`: mode 1 on the wire.
inline constexpr std::string_view get_registry_operation = "getRegistry";
inline constexpr std::uint8_t get_registry_mode = 1;

/// Sends `operation` (`mode`, `params` a whole encapsulation) to `target`; `done` gets the reply or a failure text.
using invoke_fn = std::function<void(const protocol::proxy& target, std::string_view operation, std::uint8_t mode,
                                     protocol::byte_buffer params, reply_handler done)>;

/// The outcome of a registration: ok, or why not (a sentence for the log).
using registration_done = std::function<void(bool ok, std::string why)>;

/// The LocatorRegistry operation to make once the registry is known.
struct registry_request {
    std::string_view operation;
    std::uint8_t mode = 0;
    protocol::byte_buffer params;  ///< a whole encoding-1.1 encapsulation
    /// The log's sentence for a user exception of this operation (its Slice type id, e.g.
    /// "::Ice::ServerNotFoundException"); "" to report it by its type id alone.
    std::function<std::string(std::string_view type_id)> explain;
};

/** Through `call`: Locator::getRegistry on `locator`, then `request` on the registry it returns.
    `done` runs once: ok, or why it failed (locator or registry unreachable, a nil registry, a
    user exception of the operation, another reply status). */
void call_locator_registry(invoke_fn call, const protocol::proxy& locator, registry_request request,
                           registration_done done);

/** An invoke_fn that sends from `home` (net::invoke) and fails a call that has no answer after
    the runtime's connect timeout (backend_connect_timeout_ms), dropping a late answer: a
    registry that takes the call and never answers then leaves a log line, not silence. Use on
    `home`'s thread only. */
invoke_fn bounded_invoker(shard& home);

}  // namespace moraine::net
