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
};

/** Parses an IceStorm::QoS dictionary for a subscriber whose proxy is twoway or not.
    @return the QoS, or the BadQoS reason in IceStorm 3.7.8's words: an unknown reliability,
    "ordered reliability requires a twoway proxy", a non-numeric locatorCacheTimeout or
    connectionCached. retryCount is never refused (non-numeric = 0), as IceStorm does. */
std::variant<qos, std::string> parse_qos(const std::vector<std::pair<std::string, std::string>>& entries, bool twoway);

}  // namespace moraine::icestorm_bridge
