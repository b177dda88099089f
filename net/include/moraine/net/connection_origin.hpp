#pragma once
// Where an accepted connection comes from, for the per-address connection limit.

namespace moraine::net {

/// Where a connection counted by shard_set::admit_connection comes from.
enum class connection_origin {
    accepted,  ///< accepted here: refused over runtime_config::connections_per_address
    moved,     ///< moved from the old process by a takeover, which admitted it: counted even over the limit
};

}  // namespace moraine::net
