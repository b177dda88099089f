#pragma once
// What the topic service does with each documented IceStorm 3.7 key of a property file
// (docs/properties.md). Private to moraine::icestorm_bridge (config.cpp).
#include <moraine/net/property_file.hpp>

#include <string>
#include <vector>

namespace moraine::icestorm_bridge::detail {

/** Checks every `IceStorm.*` key of `p`: replication keys (NodeId, Nodes.*, Node.*,
    Replicated*Endpoints) stop start-up, as Moraine has no replicated topic service; documented
    keys Moraine does not act on get `<file>:<line>: <key>: accepted, has no effect in Moraine
    (why)` in `warnings`; other keys get "unknown property".
    @throws net::config_error for a refused key. */
void check_icestorm_keys(const net::property_file& p, std::vector<std::string>& warnings);

}  // namespace moraine::icestorm_bridge::detail
