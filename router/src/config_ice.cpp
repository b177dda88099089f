// read_config(property_file): the router's keys of a Glacier2 3.7 property file, read as
// glacier2router would read them (docs/glacier2.md §7).
#include <moraine/router/config.hpp>

#include "config_common.hpp"
#include "glacier2_key_status.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <optional>
#include <utility>

namespace moraine::router {
namespace {

using net::property_file;

// Glacier2.* properties with a fixed name that Moraine reads, or knows and ignores.
constexpr std::string_view glacier2_keys[] = {
    "Glacier2.InstanceName",
    "Glacier2.SessionTimeout",
    "Glacier2.CryptPasswords",
    "Glacier2.PermissionsVerifier",
    "Glacier2.SSLPermissionsVerifier",
    "Glacier2.SessionManager",
    "Glacier2.SSLSessionManager",
    "Glacier2.RoutingTable.MaxSize",
    "Glacier2.AddConnectionContext",
    "Glacier2.ReturnClientProxy",
    "Glacier2.Client.AdapterId",
    "Glacier2.Client.ReplicaGroupId",
    "Glacier2.Filter.Category.Accept",
    "Glacier2.Filter.Category.AcceptUser",
    "Glacier2.Filter.Identity.Accept",
    "Glacier2.Filter.AdapterId.Accept",
    "Glacier2.Filter.Address.Accept",
    "Glacier2.Filter.Address.Reject",
    "Glacier2.Filter.ProxySizeMax",
    "Glacier2.Trace.RoutingTable",
    "Glacier2.Trace.Session",
    "Glacier2.Client.Trace.Request",
    "Glacier2.Client.Trace.Override",
    "Glacier2.Client.Trace.Reject",
    "Glacier2.Server.Trace.Request",
    "Glacier2.Server.Trace.Override",
};

// Per-direction settings after "Glacier2.Client." / "Glacier2.Server.".
constexpr std::string_view direction_keys[] = {"Buffered", "AlwaysBatch", "ForwardContext", "SleepTime"};

// Object adapter properties Moraine reads (or, for MessageSizeMax, warns about by itself); the
// others are no-ops named by glacier2_noop_reason.
constexpr std::string_view adapter_keys[] = {"Endpoints", "PublishedEndpoints", "MessageSizeMax",
                                             "ACM.Timeout", "ACM.Heartbeat", "ACM.Close"};

template <std::size_t N>
bool is_one_of(std::string_view s, const std::string_view (&list)[N]) {
    return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

// Documented in Glacier2 3.7 (docs/properties.md), whether Moraine acts on it or not.
bool is_known_glacier2_key(std::string_view key, std::string_view value) {
    if (is_one_of(key, glacier2_keys) || detail::glacier2_noop_reason(key, value)) return true;
    for (std::string_view direction : {"Glacier2.Client.", "Glacier2.Server."}) {
        if (!key.starts_with(direction)) continue;
        std::string_view rest = key.substr(direction.size());
        return is_one_of(rest, direction_keys) || is_one_of(rest, adapter_keys);
    }
    return false;
}


void read_endpoints(const property_file& p, config& cfg) {
    if (const std::string* name = p.find("Glacier2.InstanceName")) cfg.instance_name = *name;
    cfg.client_endpoints = p.endpoints("Glacier2.Client.Endpoints");
    if (cfg.client_endpoints.empty())
        throw config_error(p.file(), "Glacier2.Client.Endpoints", "required (the endpoints clients connect to)");
    p.read_bool("Moraine.Client.ReusePort", cfg.client_reuse_port);
    if (const std::string* id = p.find("Glacier2.Client.AdapterId")) cfg.client_adapter_id = *id;
    if (const std::string* group = p.find("Glacier2.Client.ReplicaGroupId")) cfg.client_replica_group_id = *group;
    cfg.server_endpoints = p.endpoints("Glacier2.Server.Endpoints");
    cfg.server_published_endpoints = p.endpoints("Glacier2.Server.PublishedEndpoints");
}

void read_forwarding(const property_file& p, config& cfg) {
    // glacier2router's defaults: buffered in both directions.
    cfg.client_buffered = true;
    cfg.server_buffered = true;
    p.read_bool("Glacier2.Client.Buffered", cfg.client_buffered);
    p.read_bool("Glacier2.Server.Buffered", cfg.server_buffered);
    p.read_bool("Glacier2.Client.AlwaysBatch", cfg.client_always_batch);
    p.read_bool("Glacier2.Server.AlwaysBatch", cfg.server_always_batch);
    p.read_int("Glacier2.Client.SleepTime", 0, max_sleep_time_ms, cfg.client_sleep_time_ms);
    p.read_int("Glacier2.Server.SleepTime", 0, max_sleep_time_ms, cfg.server_sleep_time_ms);
    p.read_bool("Glacier2.Client.ForwardContext", cfg.client_forward_context);
    p.read_bool("Glacier2.Server.ForwardContext", cfg.server_forward_context);
    p.read_bool("Glacier2.ReturnClientProxy", cfg.return_client_proxy);
    p.read_int("Glacier2.AddConnectionContext", 0, 2, cfg.add_connection_context);
}

// Heartbeats on idle client connections. Ice's ACM.Heartbeat: 0 off, 1 on dispatch, 2 on idle,
// 3 always; the adapter's key first, then the communicator's server then global one, as for the
// timeout. Moraine sends them on idle connections (2, and when nothing is set: Ice 3.8 clients
// drop a connection they read nothing from for 60 s), on every connection each period (3), or
// not at all (0 and 1: a router has no long dispatches of its own to cover). Moraine.Client.HeartbeatInterval (ms) sets the period.
void read_heartbeat(const property_file& p, config& cfg) {
    for (const char* key : {"Glacier2.Client.ACM.Heartbeat", "Ice.ACM.Server.Heartbeat", "Ice.ACM.Heartbeat"}) {
        if (!p.find(key)) continue;
        int mode = 2;
        p.read_int(key, 0, 3, mode);
        if (mode < 2) cfg.heartbeat_interval_ms = 0;
        cfg.heartbeat_always = mode == 3;
        break;
    }
    if (cfg.heartbeat_interval_ms != 0)
        p.read_int("Moraine.Client.HeartbeatInterval", 0, INT_MAX, cfg.heartbeat_interval_ms);
}

// The client adapter's idle timeout, chosen the way glacier2router and Ice 3.7 choose it:
// the adapter's own ACM setting, else a positive SessionTimeout, else the communicator's server
// then global ACM timeout, else Ice's 60 s.
void read_timeouts(const property_file& p, config& cfg) {
    p.read_int("Glacier2.SessionTimeout", 0, INT_MAX, cfg.session_timeout_s);
    cfg.acm_timeout_s = 60;
    if (p.find("Glacier2.Client.ACM.Timeout")) {
        p.read_int("Glacier2.Client.ACM.Timeout", 0, INT_MAX, cfg.acm_timeout_s);
    } else if (cfg.session_timeout_s > 0) {
        cfg.acm_timeout_s = static_cast<int>(cfg.session_timeout_s);
    } else if (p.find("Ice.ACM.Server.Timeout")) {
        p.read_int("Ice.ACM.Server.Timeout", 0, INT_MAX, cfg.acm_timeout_s);
    } else {
        p.read_int("Ice.ACM.Timeout", 0, INT_MAX, cfg.acm_timeout_s);
    }
    p.read_int("Glacier2.RoutingTable.MaxSize", 0, INT_MAX, cfg.routing_table_max);
    read_heartbeat(p, cfg);
}

// Moraine's own limits on session set-up (docs/operations.md); glacier2router has none.
void read_admission(const property_file& p, config& cfg) {
    auto& a = cfg.admission;
    p.read_int("Moraine.Limits.Sessions", 0, LLONG_MAX, a.sessions_max);
    long long rate = 0, initial = a.backoff_initial.count(), max = a.backoff_max.count();
    p.read_int("Moraine.Limits.SessionSetupsPerSecond", 0, 1000000, rate);
    a.setups_per_second = static_cast<double>(rate);
    p.read_int("Moraine.LoginBackoff.FreeFailures", 0, 1000000, a.backoff_free_failures);
    p.read_int("Moraine.LoginBackoff.Initial", 0, INT_MAX, initial);
    p.read_int("Moraine.LoginBackoff.Max", 0, INT_MAX, max);
    a.backoff_initial = std::chrono::milliseconds(initial);
    a.backoff_max = std::chrono::milliseconds(max);
}

/// The proxy `key` names, with Ice.Default.Host written into its endpoints that have no `-h`
/// (as Ice resolves them when it reads the property), so later parses need no default.
std::optional<std::string> proxy_property(const property_file& p, std::string_view key) {
    const std::string* v = p.find(key);
    if (!v) return std::nullopt;
    const auto proxy = detail::parse_proxy(*v, p.at(key), std::string(key), p.default_host());
    if (p.default_host().empty() || proxy.endpoints.empty()) return *v;
    return protocol::proxy_to_string(proxy);
}

void read_auth(const property_file& p, config& cfg, std::vector<std::string>& warnings) {
    const auto verifier = proxy_property(p, "Glacier2.PermissionsVerifier");
    const std::string* crypt = p.find("Glacier2.CryptPasswords");
    if (verifier) {
        detail::set_permissions_verifier(cfg, *verifier, p.at("Glacier2.PermissionsVerifier"),
                                         "Glacier2.PermissionsVerifier");
        if (crypt)
            warnings.push_back(p.at("Glacier2.CryptPasswords") +
                                   ": Glacier2.CryptPasswords: ignored, Glacier2.PermissionsVerifier is set");
    } else if (crypt) {
        // A relative path is relative to the working directory, as for glacier2router.
        cfg.crypt_passwords =
            detail::check_crypt_passwords(*crypt, p.at("Glacier2.CryptPasswords"), "Glacier2.CryptPasswords");
        cfg.auth = auth_mode::crypt_file;
    }
    for (std::string_view key : {"Glacier2.SessionManager", "Glacier2.SSLSessionManager"}) {
        const auto v = proxy_property(p, key);
        if (!v) continue;
        (key == "Glacier2.SessionManager" ? cfg.session_manager : cfg.ssl_session_manager) = *v;
    }
    if (const auto v = proxy_property(p, "Glacier2.SSLPermissionsVerifier"))
        detail::set_ssl_permissions_verifier(cfg, *v, p.at("Glacier2.SSLPermissionsVerifier"),
                                             "Glacier2.SSLPermissionsVerifier");
}

void read_filters(const property_file& p, config& cfg) {
    auto& f = cfg.filters;
    f.category_accept = p.words("Glacier2.Filter.Category.Accept");
    p.read_int("Glacier2.Filter.Category.AcceptUser", 0, 2, f.category_accept_user);
    f.identity_accept = detail::parse_identities(p.words("Glacier2.Filter.Identity.Accept"),
                                                 p.at("Glacier2.Filter.Identity.Accept"), "Glacier2.Filter.Identity.Accept");
    f.adapter_id_accept = p.words("Glacier2.Filter.AdapterId.Accept");
    for (std::string_view key : {"Glacier2.Filter.Address.Accept", "Glacier2.Filter.Address.Reject"}) {
        const std::string* v = p.find(key);
        if (!v) continue;
        detail::check_address_rules(*v, p.at(key), std::string(key));
        (key.ends_with("Accept") ? f.address_accept : f.address_reject) = *v;
    }
    p.read_int("Glacier2.Filter.ProxySizeMax", 0, INT_MAX, f.proxy_size_max);
}

// Trace levels (trace_keys, docs/properties.md); any value above 0 turns a category on.
void read_trace(const property_file& p, config& cfg) {
    for (const auto& k : trace_keys) p.read_int(k.property, 0, INT_MAX, cfg.trace.*k.level);
}

void warn(std::vector<std::string>& warnings, const property_file& p, std::string_view key, const std::string& why) {
    warnings.push_back(p.at(key) + ": " + std::string(key) + ": " + why);
}

// Keys that would be a silent hole in security: refused (docs/properties.md).
void refuse_keys(const property_file& p) {
    for (const auto& [key, value] : p.all())
        if (auto why = detail::glacier2_refusal(key)) throw config_error(p.at(key), key, *why);
}

// Unknown Glacier2.* keys are likely typos; known ones Moraine does not act on are named too, so
// nobody relies on them unawares. Ice.*, IceStorm.* and other keys belong to other components.
void warn_about_keys(const property_file& p, const config& cfg, std::vector<std::string>& warnings) {
    for (const auto& [key, value] : p.all()) {
        if (!key.starts_with("Glacier2.")) continue;
        if (!is_known_glacier2_key(key, value.value))
            warn(warnings, p, key, "unknown property, ignored");
        else if (auto why = detail::glacier2_noop_reason(key, value.value))
            warn(warnings, p, key, "accepted, has no effect in Moraine (" + *why + ")");
    }
    // Batching and the hold act only on a buffered direction.
    for (const auto& [direction, buffered] : {std::pair{"Glacier2.Client.", cfg.client_buffered},
                                              std::pair{"Glacier2.Server.", cfg.server_buffered}}) {
        if (buffered) continue;
        for (std::string_view key : {"AlwaysBatch", "SleepTime"}) {
            const std::string full = std::string(direction) + std::string(key);
            const std::string* v = p.find(full);
            if (v && *v != "0") warn(warnings, p, full, "has no effect with " + std::string(direction) + "Buffered=0");
        }
    }
    for (std::string_view key : {"Glacier2.Client.MessageSizeMax", "Glacier2.Server.MessageSizeMax"}) {
        if (p.find(key))
            warn(warnings, p, key,
                 "accepted, has no effect in Moraine (one limit for every connection: Ice.MessageSizeMax)");
    }
}

// The verifier and session manager proxies are resolved, when indirect, through the runtime's
// one locator (Ice.Default.Locator, docs/glacier2.md §9): a locator of their own cannot be
// honoured and stops start-up. Their own cache timeout is not applied either: warned about with
// the other per-proxy keys (glacier2_key_status.cpp). On a direct proxy both keys mean nothing
// (Ice ignores them too).
void check_proxy_locators(const property_file& p) {
    const std::string* common = p.find("Ice.Default.Locator");
    for (std::string_view base : {"Glacier2.PermissionsVerifier", "Glacier2.SSLPermissionsVerifier",
                                  "Glacier2.SessionManager", "Glacier2.SSLSessionManager"}) {
        const std::string* value = p.find(base);
        const auto proxy = value ? protocol::proxy_from_string(*value) : std::nullopt;
        if (!proxy || !proxy->endpoints.empty()) continue;
        const std::string locator = std::string(base) + ".Locator";
        if (const std::string* v = p.find(locator); v && (!common || *v != *common))
            throw config_error(p.at(locator), locator,
                               "a locator of its own is not supported: Moraine resolves indirect proxies through "
                               "Ice.Default.Locator (set that to '" + *v + "')");
    }
}

}  // namespace

config read_config(const property_file& p, std::vector<std::string>& warnings) {
    config cfg;
    refuse_keys(p);
    read_endpoints(p, cfg);  // first: instance_name is needed to recognise NullPermissionsVerifier
    read_forwarding(p, cfg);
    read_timeouts(p, cfg);
    read_admission(p, cfg);
    read_auth(p, cfg, warnings);
    read_filters(p, cfg);
    read_trace(p, cfg);
    warn_about_keys(p, cfg, warnings);
    check_proxy_locators(p);
    return cfg;
}

}  // namespace moraine::router
