#pragma once
// The client side of a Glacier2 routing table: which identities were added with addProxies
// (docs/ice-wire.md §10). Pure state: no I/O.
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstddef>
#include <span>
#include <unordered_map>

namespace moraine::client {

/// Per-session cache of routed identities, keyed by identity only (as Ice 3.7 does: a second
/// proxy with the same identity and other endpoints is not re-added). Not thread-safe: the
/// session's executor only.
class routing_cache {
public:
    /// Where an identity stands.
    enum class state {
        absent,  ///< never added, or forgotten: the caller sends addProxies
        adding,  ///< an addProxies for it is in flight: wait for it
        added,   ///< the router has it: send requests for it directly
    };

    /// The state of `id` (compared on name and category exactly). O(1).
    state find(protocol::identity_view id) const noexcept;

    /// Marks `id` as being added. @return true if it was absent (the caller must now send
    /// addProxies and then call add_done); false if it is adding or added already.
    bool begin_add(const protocol::identity& id);

    /// Ends an add started with begin_add: `ok` → added, else absent again.
    void add_done(protocol::identity_view id, bool ok);

    /// Forgets `id` (the router answered ObjectNotExist "ice_add_proxy": it no longer routes it).
    void forget(protocol::identity_view id) noexcept;

    /// Forgets every identity of `evicted`, the proxies addProxies returned.
    void evict(std::span<const protocol::proxy> evicted) noexcept;

    /// Identities known (adding or added).
    std::size_t size() const noexcept { return entries_.size(); }

private:
    std::unordered_map<protocol::identity, state, protocol::identity_hash, protocol::identity_equal> entries_;
};

}  // namespace moraine::client
