#pragma once
// IceStorm QoS (docs/icestorm.md §3).
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace moraine::icestorm_bridge {

/// A subscriber's quality of service.
struct qos {
    bool ordered = false;  ///< reliability=ordered: twoway, one at a time
    int retry_count = 0;   ///< transient failures tolerated before removal; -1 = forever
    /// connectionCached (default 1): 0 sends each event over a connection to an endpoint picked
    /// at random among the subscriber's, as Ice's ice_connectionCached(false) does: the
    /// per-request load balancing of a subscriber with several endpoints.
    bool connection_cached = true;
};

/** Parses an IceStorm::QoS dictionary for a subscriber whose proxy is twoway or not.
    @return the QoS, or the BadQoS reason in IceStorm 3.7.8's words: an unknown reliability,
    "ordered reliability requires a twoway proxy", a non-numeric locatorCacheTimeout or
    connectionCached (a number; above 0 = cached). retryCount is never refused (non-numeric = 0), as IceStorm does. */
std::variant<qos, std::string> parse_qos(const std::vector<std::pair<std::string, std::string>>& entries, bool twoway);

/// The IceStorm::QoS entries that parse_qos reads back as `q` (only those that differ from the
/// defaults): how a takeover carries a subscriber's QoS.
std::vector<std::pair<std::string, std::string>> qos_entries(const qos& q);

}  // namespace moraine::icestorm_bridge
