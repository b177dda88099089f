#pragma once
// What the locator answered, kept for Ice.Default.LocatorCacheTimeout (docs/glacier2.md §9).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace moraine::net {

/** Resolved adapter ids (their endpoints) and well-known objects (the proxy the locator returned:
    direct, or indirect naming an adapter id). Only answers are kept, never "not registered".
    Entries are fresh for `timeout_s` seconds after they were stored, as
    Ice.Default.LocatorCacheTimeout says: -1 forever, 0 nothing is stored, N > 0 seconds. Time is
    passed in, so the rule is testable.

    One cache serves every shard, as one communicator's cache serves glacier2router: a mutex
    guards it, taken when a connection to an indirect proxy is about to be made (client
    connections keep theirs, client_indirect.cpp) and by router-originated calls, never per
    forwarded message (docs/architecture.md, "state shared at set-up"). Results are copies. */
class locator_cache {
public:
    using clock = std::chrono::steady_clock;

    explicit locator_cache(int timeout_s) : timeout_s_(timeout_s) {}

    /// The endpoints of adapter `id` when a fresh entry holds them.
    std::optional<std::vector<protocol::endpoint>> adapter(std::string_view id, clock::time_point now) const;
    /// The proxy the locator returned for well-known object `id` when fresh.
    std::optional<protocol::proxy> object(const protocol::identity& id, clock::time_point now) const;

    /** The endpoints indirect proxy `p` resolves to from fresh entries alone: its adapter id's;
        for a well-known object, the returned proxy's own endpoints or its adapter's. nullopt when
        a locator call is needed (or `p` has endpoints already). */
    std::optional<std::vector<protocol::endpoint>> find(const protocol::proxy& p, clock::time_point now) const;

    void put_adapter(const std::string& id, std::vector<protocol::endpoint> endpoints, clock::time_point now);
    void put_object(const protocol::identity& id, protocol::proxy p, clock::time_point now);

    /// Drops what `p` resolved through: its adapter id's entry; for a well-known object, the
    /// object's entry and the adapter entry it led to (a connection to them failed).
    void forget(const protocol::proxy& p);

    std::size_t size() const;

private:
    template <class T>
    struct entry {
        T value;
        clock::time_point stored;
    };
    bool fresh(clock::time_point stored, clock::time_point now) const noexcept;
    const std::vector<protocol::endpoint>* adapter_locked(std::string_view id, clock::time_point now) const;

    const int timeout_s_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, entry<std::vector<protocol::endpoint>>> adapters_;
    std::unordered_map<protocol::identity, entry<protocol::proxy>, protocol::identity_hash, protocol::identity_equal>
        objects_;
};

}  // namespace moraine::net
