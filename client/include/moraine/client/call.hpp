#pragma once
// One invocation on a back-end object through the router.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/context.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/request.hpp>

#include <string>
#include <utility>

namespace moraine::client {

/// What to invoke: target proxy, operation, encoded in-parameters, mode. The target's endpoints
/// go to the router once per identity (addProxies); the request carries identity, facet,
/// operation, mode, `context` and `params` (docs/ice-wire.md §4, §10).
struct call {
    call() = default;
    /// The common case: `{target, "sayHello", encode_string_params("bob")}`; context and
    /// compression are set afterwards when wanted.
    call(protocol::proxy t, std::string op, protocol::byte_buffer p,
         protocol::operation_mode m = protocol::operation_mode::normal)
        : target(std::move(t)), operation(std::move(op)), params(std::move(p)), mode(m) {}

    /// The back-end object, e.g. `*protocol::proxy_from_string("hello:tcp -h 10.0.0.5 -p 4061")`.
    protocol::proxy target;
    /// The Slice operation name, e.g. "sayHello".
    std::string operation;
    /// A whole encapsulation with the in-parameters (params.hpp: encode_params, empty_params).
    protocol::byte_buffer params;
    /// normal, or idempotent for `idempotent` Slice operations (sent as is; the router forwards it).
    protocol::operation_mode mode = protocol::operation_mode::normal;
    /// The request context (Slice `Ice::Context`), sent as given. The router reads `_fwd` and
    /// `_ovrd` from it (buffered mode) and forwards it whole only with
    /// `Glacier2.Client.ForwardContext=1`.
    protocol::context context;
    /// Send compressed, as a `-z` proxy does: a request of at least 100 bytes goes bzip2-compressed
    /// (compression status 2), a smaller one with status 1 (the reply may be compressed).
    bool compress = false;
};

}  // namespace moraine::client
