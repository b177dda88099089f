#pragma once
// What the locator answered, kept for Ice.Default.LocatorCacheTimeout (docs/transports.md §2).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace moraine::net {

/** Resolved adapter ids (their endpoints) and well-known objects (the proxy the locator returned:
    direct, or indirect naming an adapter id) of one shard. Only answers are kept, never "not
    registered". Entries are fresh for `timeout_s` seconds after they were stored, as
    Ice.Default.LocatorCacheTimeout says: -1 forever, 0 nothing is stored, N > 0 seconds. Time is
    passed in, so the rule is testable; shard-local, no locking. */
class locator_cache {
public:
    using clock = std::chrono::steady_clock;

    explicit locator_cache(int timeout_s) : timeout_s_(timeout_s) {}

    /// The endpoints of adapter `id` when a fresh entry holds them, else null. Valid until the next put/forget.
    const std::vector<protocol::endpoint>* adapter(std::string_view id, clock::time_point now) const;
    /// The proxy the locator returned for well-known object `id` when fresh, else null.
    const protocol::proxy* object(const protocol::identity& id, clock::time_point now) const;

    /** The endpoints indirect proxy `p` resolves to from fresh entries alone: its adapter id's;
        for a well-known object, the returned proxy's own endpoints or its adapter's. Null when a
        locator call is needed (or `p` has endpoints already). */
    const std::vector<protocol::endpoint>* find(const protocol::proxy& p, clock::time_point now) const;

    void put_adapter(const std::string& id, std::vector<protocol::endpoint> endpoints, clock::time_point now);
    void put_object(const protocol::identity& id, protocol::proxy p, clock::time_point now);

    /// Drops what `p` resolved through: its adapter id's entry; for a well-known object, the
    /// object's entry and the adapter entry it led to (a connection to them failed).
    void forget(const protocol::proxy& p);

    std::size_t size() const noexcept { return adapters_.size() + objects_.size(); }

private:
    template <class T>
    struct entry {
        T value;
        clock::time_point stored;
    };
    bool fresh(clock::time_point stored, clock::time_point now) const noexcept;

    int timeout_s_;
    std::unordered_map<std::string, entry<std::vector<protocol::endpoint>>> adapters_;
    std::unordered_map<protocol::identity, entry<protocol::proxy>, protocol::identity_hash, protocol::identity_equal>
        objects_;
};

}  // namespace moraine::net
