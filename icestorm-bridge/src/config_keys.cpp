// The topic service's verdict on each IceStorm.* key (config_keys.hpp). Moraine reads the
// service's keys under the prefix `IceStorm.` only (an IceBox service of another name has its
// own prefix, which Moraine does not read).
#include "config_keys.hpp"

#include <moraine/net/config_error.hpp>

#include <algorithm>
#include <optional>
#include <string_view>

namespace moraine::icestorm_bridge::detail {
namespace {

constexpr std::string_view prefix = "IceStorm.";

// Keys after the prefix that the topic service reads.
constexpr std::string_view honoured[] = {"InstanceName",      "TopicManager.Endpoints", "TopicManager.PublishedEndpoints",
                                         "Publish.Endpoints", "Publish.PublishedEndpoints", "Transient", "LMDB.Path",
                                         "Send.Timeout",      "Send.QueueSizeMax",      "Send.QueueSizeMaxPolicy",
                                         "Discard.Interval", "Trace.TopicManager", "Trace.Topic", "Trace.Subscriber"};

// Object adapter keys other than the endpoints (after `TopicManager.` or `Publish.`).
constexpr std::string_view adapter_keys[] = {"AdapterId", "ReplicaGroupId", "ProxyOptions", "MessageSizeMax",
                                             "Locator", "Router", "ACM", "ACM.Timeout", "ACM.Heartbeat", "ACM.Close"};
constexpr std::string_view adapter_prefixes[] = {"ThreadPool.", "Locator.", "Router."};

template <std::size_t N>
bool is_one_of(std::string_view s, const std::string_view (&list)[N]) {
    return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

template <std::size_t N>
bool starts_with_one_of(std::string_view s, const std::string_view (&list)[N]) {
    return std::any_of(std::begin(list), std::end(list), [&](std::string_view p) { return s.starts_with(p); });
}

/// Replication: IceStorm's nodes elect a master and share their topics; a Moraine topic
/// service is one node, so a replica group would silently lose events and subscribers.
bool is_replication_key(std::string_view rest) {
    return rest == "NodeId" || rest.starts_with("Nodes.") || rest.starts_with("Node.") ||
           rest == "ReplicatedTopicManagerEndpoints" || rest == "ReplicatedPublishEndpoints";
}

/// Why a documented key has no effect (nullopt: honoured or unknown).
std::optional<std::string> noop_reason(std::string_view rest) {
    if (rest == "Flush.Timeout") return std::string("no flush timer for batch subscribers");
    if (rest == "LMDB.MapSize") return std::string("the topic database is SQLite, which grows as needed");
    if (rest == "Trace.Election" || rest == "Trace.Replication" || rest.starts_with("Election."))
        return std::string("no replication");
    for (std::string_view adapter : {"TopicManager.", "Publish."}) {
        if (!rest.starts_with(adapter)) continue;
        const std::string_view key = rest.substr(adapter.size());
        if (is_one_of(key, adapter_keys) || starts_with_one_of(key, adapter_prefixes))
            return std::string("only the Endpoints and PublishedEndpoints of the topic service's adapters are read");
    }
    return std::nullopt;
}

}  // namespace

void check_icestorm_keys(const net::property_file& p, std::vector<std::string>& warnings) {
    for (const auto& [key, value] : p.all()) {
        if (!key.starts_with(prefix)) continue;
        const std::string_view rest = std::string_view(key).substr(prefix.size());
        if (is_replication_key(rest))
            throw net::config_error(p.at(key), key,
                                    "IceStorm replication is not supported by Moraine (its topic service is a "
                                    "single node); remove the replication keys");
        if (is_one_of(rest, honoured)) continue;
        if (auto why = noop_reason(rest))
            warnings.push_back(p.at(key) + ": " + key + ": accepted, has no effect in Moraine (" + *why + ")");
        else
            warnings.push_back(p.at(key) + ": " + key + ": unknown property, ignored");
    }
}

}  // namespace moraine::icestorm_bridge::detail
