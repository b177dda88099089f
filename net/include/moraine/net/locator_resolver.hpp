#pragma once
// Indirect proxies (`object@adapter`, well-known `object`) resolved through the configured
// Ice::Locator (Ice.Default.Locator; docs/transports.md §2, docs/glacier2.md §9).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/backend_connection.hpp>
#include <moraine/net/locator_cache.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace moraine::net {

class shard;

/** One shard's resolver: asks the locator `findAdapterById` / `findObjectById` asynchronously
    (a router-originated call through the shard's back-end connections), keeps the answers in
    the locator_cache every shard shares, and has concurrent resolutions of one adapter id or
    object on this shard share one call, their handlers run in the order they asked. A
    well-known object whose answer is indirect is resolved again by its adapter id, through the
    same cache. Its calls and handlers run on its shard; only the cache is shared. */
class locator_resolver {
public:
    /// `endpoints` on success (valid during the call), else null and `failure` is the text of the
    /// UnknownLocalException a client gets.
    using resolved_handler = std::function<void(const std::vector<protocol::endpoint>* endpoints, std::string_view failure)>;
    /// Sends one locator operation (`operation`, mode 1, `params` a whole encapsulation) and reports its reply.
    using query_fn = std::function<void(std::string_view operation, protocol::byte_buffer params, reply_handler done)>;

    /// `ask` reaches the locator (tests give a fake); `cache` holds the answers (shared by the shards).
    locator_resolver(query_fn ask, std::shared_ptr<locator_cache> cache);

    /// The endpoints indirect proxy `p` resolves to without a locator call, if fresh in the cache.
    std::optional<std::vector<protocol::endpoint>> cached(const protocol::proxy& p) const;

    /** Resolves indirect proxy `p` (no endpoints): from the cache at once (`done` runs before this
        returns), else when the locator answers. `done` always runs exactly once, on this shard. */
    void resolve(const protocol::proxy& p, resolved_handler done);

    /// After a connection to what `p` resolved to failed: the next resolution asks the locator.
    void forget(const protocol::proxy& p) { cache_->forget(p); }

private:
    void resolve_adapter(const std::string& id, resolved_handler done);
    void resolve_object(const protocol::identity& id, resolved_handler done);
    /// Continues a well-known object's resolution from the proxy the locator returned for it.
    void follow(const protocol::proxy& answer, const protocol::identity& id, resolved_handler done);

    query_fn ask_;
    std::shared_ptr<locator_cache> cache_;
    std::unordered_map<std::string, std::vector<resolved_handler>> adapter_waiters_;
    std::unordered_map<protocol::identity, std::vector<resolved_handler>, protocol::identity_hash,
                       protocol::identity_equal>
        object_waiters_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // answers arriving after destruction are dropped
};

/// What a client gets when the locator took a find and did not answer within the connect timeout.
inline constexpr std::string_view locator_timeout_text =
    "::Ice::InvocationTimeoutException:\ninvocation has timed out (the locator did not answer)";

/** The query_fn of a running router: `net::invoke` on `locator` (a direct proxy) from shard
    `home`, failed with locator_timeout_text if no answer comes within the runtime's connect
    timeout (backend_connect_timeout_ms). */
locator_resolver::query_fn invoke_locator(shard& home, protocol::proxy locator);

/// A copy of indirect proxy `p` with `endpoints` in place of its adapter id: what a request to it is sent to.
protocol::proxy with_endpoints(const protocol::proxy& p, const std::vector<protocol::endpoint>& endpoints);

}  // namespace moraine::net
