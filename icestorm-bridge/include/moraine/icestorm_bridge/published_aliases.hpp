#pragma once
// Where the topic service's published endpoints really are, for this process's own back-end
// connections (net::endpoint_alias).
#include <moraine/icestorm_bridge/config.hpp>
#include <moraine/net/runtime_config.hpp>

#include <vector>

namespace moraine::icestorm_bridge {

/** The aliases that make a proxy naming the topic service's published TopicManager or Publish
    endpoints reach this process's own topic service: for each published endpoint that is not
    also bound, the bound endpoint of the same transport with a fixed port, a loopback one first
    (an unspecified host, `*`, 0.0.0.0 or ::, becomes 127.0.0.1 or ::1). A published endpoint
    whose transport has no bound endpoint with a fixed port gets none (nothing to redirect to).
    Empty when the service is disabled or publishes exactly what it binds.

    Why: several routers on one host (SO_REUSEPORT client port, docs/deployment.md) each bind
    their TopicManager on a port of their own but publish one address, `127.0.0.1:10000`; a
    client that landed on any of them subscribes through that router's own topic service. */
std::vector<net::endpoint_alias> published_aliases(const topics_config& cfg);

}  // namespace moraine::icestorm_bridge
