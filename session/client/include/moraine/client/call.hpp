#pragma once
// One invocation on a back-end object through the router.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/request.hpp>

#include <string>

namespace moraine::client {

/// What to invoke: target proxy, operation, encoded in-parameters, mode. The target's endpoints
/// go to the router once per identity (addProxies); the request carries only identity, facet,
/// operation, mode, an empty context and `params` (docs/ice-wire.md §10).
struct call {
    /// The back-end object, e.g. `*protocol::proxy_from_string("hello:tcp -h 10.0.0.5 -p 4061")`.
    protocol::proxy target;
    /// The Slice operation name, e.g. "sayHello".
    std::string operation;
    /// A whole encapsulation with the in-parameters (params.hpp: encode_params, empty_params).
    protocol::byte_buffer params;
    /// normal, or idempotent for `idempotent` Slice operations (sent as is; the router forwards it).
    protocol::operation_mode mode = protocol::operation_mode::normal;
};

}  // namespace moraine::client
