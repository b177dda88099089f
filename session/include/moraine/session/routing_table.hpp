#pragma once
// A session's routing table: identity -> proxy, LRU-bounded (Glacier2.RoutingTable.MaxSize).
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstddef>
#include <list>
#include <unordered_map>
#include <vector>

namespace moraine::session {

/// Maps identities to the proxies a client added with Ice::Router::addProxies.
/// Shard-local: touched only by the session's shard.
class routing_table {
public:
    /// @param max_size entries kept (Glacier2.RoutingTable.MaxSize, default 1000); 0 = unbounded.
    explicit routing_table(std::size_t max_size = 1000);

    /** Adds proxies, keyed by identity (Ice::Router::addProxies).
        Nil proxies are skipped. An identity already present keeps its first proxy and becomes
        most recently used. Facet, mode and secure are stripped when stored (docs/glacier2.md §5).
        @return the proxies evicted (least recently used first) to stay within max_size. */
    std::vector<protocol::proxy> add(const std::vector<protocol::proxy>& proxies);

    /** The proxy that forwards requests for `id`, or nullptr if never added or evicted; the caller
        answers ObjectNotExistException with operation "ice_add_proxy". O(1); refreshes LRU order. */
    const protocol::proxy* find(protocol::identity_view id);

    std::size_t size() const noexcept { return map_.size(); }
    /// Every proxy held, least recently used first: add() of this list rebuilds the same order
    /// (a takeover carries the table so).
    std::vector<protocol::proxy> entries() const { return {lru_.rbegin(), lru_.rend()}; }
    std::size_t max_size() const noexcept { return max_size_; }

private:
    using lru_list = std::list<protocol::proxy>;  // front = most recently used
    std::size_t max_size_;
    lru_list lru_;
    std::unordered_map<protocol::identity, lru_list::iterator, protocol::identity_hash, protocol::identity_equal> map_;
};

}  // namespace moraine::session
