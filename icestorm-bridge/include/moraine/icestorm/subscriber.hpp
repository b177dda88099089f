#pragma once
// A subscriber as its delivery shard knows it.
#include <moraine/icestorm/qos.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>

#include <string>

namespace moraine::icestorm {

/// One subscription, owned by the shard that delivers to it: the shard of the subscriber's
/// session when it is a session of this router, otherwise a shard picked by identity.
struct subscriber {
    protocol::identity id;
    std::string key;             ///< identity_to_string(id): the catalog's key
    protocol::byte_buffer target;  ///< encoded identity + facet, copied into each event frame
    protocol::proxy proxy;       ///< for external subscribers: where to connect
    bool session_local = false;  ///< a servant in a session of this router: written to its client connection
    bool twoway = false;
    icestorm::qos qos;
    int failures = 0;            ///< consecutive failed twoway deliveries
    unsigned long delivered = 0;
    unsigned long dropped = 0;   ///< events not queued because the subscriber was too slow
};

}  // namespace moraine::icestorm
