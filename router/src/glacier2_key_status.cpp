// Which documented Glacier2 3.7 keys are no-ops in Moraine, and why (glacier2_key_status.hpp).
// The list of keys is Ice 3.7's property table for Glacier2 (docs/properties.md).
#include "glacier2_key_status.hpp"

#include <algorithm>
#include <array>

namespace moraine::router::detail {
namespace {

// The standard proxy properties Ice accepts under a proxy-valued key.
constexpr std::array<std::string_view, 8> proxy_sub_keys = {"EndpointSelection", "ConnectionCached", "PreferSecure",
                                                            "LocatorCacheTimeout", "InvocationTimeout", "Locator",
                                                            "Router", "CollocationOptimized"};

// An object adapter's thread-pool properties (after `ThreadPool.`).
constexpr std::array<std::string_view, 7> thread_pool_keys = {"Serialize", "Size", "SizeMax", "SizeWarn", "StackSize",
                                                              "ThreadIdleTime", "ThreadPriority"};

bool is_proxy_sub_key(std::string_view rest) {
    if (rest.starts_with("Context.")) return true;
    return std::find(proxy_sub_keys.begin(), proxy_sub_keys.end(), rest) != proxy_sub_keys.end();
}

// Keys of an object adapter named Glacier2.Client / Glacier2.Server (`rest` follows the dot).
std::optional<std::string> adapter_noop_reason(bool client, std::string_view rest, std::string_view value) {
    if (rest.starts_with("ThreadPool.") &&
        std::find(thread_pool_keys.begin(), thread_pool_keys.end(), rest.substr(11)) != thread_pool_keys.end())
        return std::string("Moraine runs every connection on its I/O threads, set with --threads or the YAML "
                           "`threads`");
    // The client adapter's AdapterId and ReplicaGroupId are read (config_ice.cpp), and registered
    // with Ice.Default.Locator: the per-adapter locator is not read.
    if (!client && (rest == "AdapterId" || rest == "ReplicaGroupId"))
        return std::string("Moraine registers only the client endpoints with a locator (Glacier2.Client.AdapterId)");
    if (rest == "Locator" || (rest.starts_with("Locator.") && is_proxy_sub_key(rest.substr(8))))
        return std::string(client ? "Glacier2.Client.AdapterId is registered with Ice.Default.Locator"
                                  : "Moraine registers no server adapter with a locator");
    if (rest == "Router" || (rest.starts_with("Router.") && is_proxy_sub_key(rest.substr(7))))
        return std::string("the router's own endpoints are not reached through another router");
    if (rest == "ProxyOptions") return std::string("Moraine builds the proxies it hands out itself");
    if (client && rest == "PublishedEndpoints")
        return std::string("getClientProxy (Glacier2.ReturnClientProxy=1) names the bound client endpoints");
    if (client && rest == "ACM.Close" && value != "4")
        return std::string("an idle client connection is always closed forcefully after the ACM timeout, as with 4, "
                           "glacier2router's default");
    if (rest == "ACM") return std::string("Ice 3.5's form; Glacier2.Client.ACM.Timeout sets the idle timeout");
    if (!client && (rest == "ACM.Timeout" || rest == "ACM.Heartbeat" || rest == "ACM.Close"))
        return std::string("connections from back ends to the server endpoints are not closed when idle");
    return std::nullopt;
}

}  // namespace

std::optional<std::string> glacier2_noop_reason(std::string_view key, std::string_view value) {
    for (std::string_view prefix : {"Glacier2.PermissionsVerifier.", "Glacier2.SSLPermissionsVerifier.",
                                    "Glacier2.SessionManager.", "Glacier2.SSLSessionManager."}) {
        if (key.starts_with(prefix) && is_proxy_sub_key(key.substr(prefix.size())))
            return std::string("per-proxy properties are not read: the call uses Moraine's own settings "
                               "(Ice.Default.EndpointSelection, Ice.Default.Locator and LocatorCacheTimeout for an "
                               "indirect proxy, no per-proxy context or timeout)");
    }
    for (std::string_view direction : {"Glacier2.Client.", "Glacier2.Server."}) {
        if (key.starts_with(direction))
            return adapter_noop_reason(direction == "Glacier2.Client.", key.substr(direction.size()), value);
    }
    return std::nullopt;
}

std::optional<std::string> glacier2_refusal(std::string_view key) {
    if (key == "Glacier2.AllowCategories" || key == "Glacier2.AddUserToAllowCategories")
        return std::string("removed from Glacier2 before 3.7 and not applied by Moraine: a category filter that "
                           "would silently be open; use Glacier2.Filter.Category.Accept / AcceptUser");
    return std::nullopt;
}

}  // namespace moraine::router::detail
