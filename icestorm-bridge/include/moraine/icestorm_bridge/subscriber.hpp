#pragma once
// A subscriber as its delivery shard knows it.
#include <moraine/icestorm_bridge/delivery.hpp>
#include <moraine/icestorm_bridge/qos.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/session_directory.hpp>

#include <memory>
#include <string>

namespace moraine::net {
class backend_connection;
}

namespace moraine::icestorm_bridge {

/// One subscription, owned by the shard that delivers to it: the shard of the subscriber's
/// session when it is a session of this router, otherwise a shard picked by identity.
struct subscriber {
    // Read on every event, so kept together at the front: a fan-out to thousands of subscribers
    // is bound by cache misses, one or two lines per subscriber (perf/RESULTS.md).
    delivery_state delivery;     ///< queue, window and retries; set from qos and twoway when added
    /// Session-local subscribers: their session's connection as last found (no lookup per event).
    net::session_directory::session_cache session;
    /// External oneway subscriber: the connection that took its last event, checked at the next
    /// event; one that never connected lost it, the oneway's only visible failure.
    std::shared_ptr<net::backend_connection> oneway_via;
    protocol::byte_buffer target;  ///< encoded identity + facet, copied into each event frame
    bool session_local = false;  ///< a servant in a session of this router: written to its client connection
    bool twoway = false;
    bool pumping = false;        ///< inside local_topics::pump for this subscriber (no re-entry)
    unsigned long delivered = 0;
    unsigned long dropped = 0;   ///< events missed: queue full, too slow, or discarded while offline

    protocol::identity id;
    std::string key;             ///< identity_to_string(id): the catalog's key
    /// External subscribers only: where to connect. Null for a session-local one, which is
    /// written to its client connection (a proxy is ~250 bytes per subscribed session).
    std::shared_ptr<const protocol::proxy> proxy;
    icestorm_bridge::qos qos;

    /// Asks the CPU for the lines the next delivery reads, ahead of it (the fan-out loop calls it
    /// for a subscriber a few places ahead). A hint only: no effect on behaviour.
    void prefetch() const noexcept {
        const char* end = reinterpret_cast<const char*>(&id);  // the first cold member
        for (const char* p = reinterpret_cast<const char*>(this); p < end; p += 64) __builtin_prefetch(p);
        __builtin_prefetch(end - 1);
    }
};

}  // namespace moraine::icestorm_bridge
