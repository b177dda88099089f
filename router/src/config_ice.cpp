// load_ice_config: a Glacier2 3.7 property file read as glacier2router would read it
// (spec/glacier2.md §7, §8).
#include <moraine/router/config.hpp>

#include "config_common.hpp"
#include "config_properties.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <optional>

namespace moraine::router {
namespace {

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
    "Glacier2.Filter.Category.Accept",
    "Glacier2.Filter.Category.AcceptUser",
    "Glacier2.Filter.Identity.Accept",
    "Glacier2.Filter.AdapterId.Accept",
    "Glacier2.Filter.Address.Accept",
    "Glacier2.Filter.Address.Reject",
    "Glacier2.Filter.ProxySizeMax",
};

// Per-direction settings after "Glacier2.Client." / "Glacier2.Server.".
constexpr std::string_view direction_keys[] = {"Buffered", "AlwaysBatch", "ForwardContext", "SleepTime"};

// Object adapter properties (the client and server endpoints are adapters in glacier2router).
constexpr std::string_view adapter_keys[] = {"AdapterId",   "Endpoints", "PublishedEndpoints", "ReplicaGroupId",
                                             "ProxyOptions", "MessageSizeMax", "Locator", "Router"};
constexpr std::string_view adapter_prefixes[] = {"ACM.", "ThreadPool.", "Locator.", "Router."};

// Proxy-valued properties; their sub-properties (.Context.*, .InvocationTimeout, ...) configure
// the proxy and are accepted as they are.
constexpr std::string_view proxy_keys[] = {"Glacier2.PermissionsVerifier.", "Glacier2.SSLPermissionsVerifier.",
                                           "Glacier2.SessionManager.", "Glacier2.SSLSessionManager."};

template <std::size_t N>
bool is_one_of(std::string_view s, const std::string_view (&list)[N]) {
    return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

template <std::size_t N>
bool starts_with_one_of(std::string_view s, const std::string_view (&list)[N]) {
    return std::any_of(std::begin(list), std::end(list), [&](std::string_view p) { return s.starts_with(p); });
}

bool is_known_glacier2_key(std::string_view key) {
    if (is_one_of(key, glacier2_keys) || starts_with_one_of(key, proxy_keys)) return true;
    if (key.starts_with("Glacier2.Trace.") || key.find(".Trace.") != std::string_view::npos) return true;
    for (std::string_view direction : {"Glacier2.Client.", "Glacier2.Server."}) {
        if (!key.starts_with(direction)) continue;
        std::string_view rest = key.substr(direction.size());
        return is_one_of(rest, direction_keys) || is_one_of(rest, adapter_keys) || starts_with_one_of(rest, adapter_prefixes);
    }
    return false;
}

// The parsed file, with typed getters that name file, line and key in their errors.
class property_file {
public:
    property_file(std::string file, detail::property_map props) : file_(std::move(file)), props_(std::move(props)) {}

    const std::string& file() const noexcept { return file_; }
    const detail::property_map& all() const noexcept { return props_; }

    const std::string* find(std::string_view key) const {
        auto it = props_.find(key);
        return it == props_.end() ? nullptr : &it->second.value;
    }

    /// "FILE:LINE" of the key, or "FILE" when it is not set.
    std::string at(std::string_view key) const {
        auto it = props_.find(key);
        return detail::where(file_, it == props_.end() ? 0 : it->second.line);
    }

    /// Ice's getPropertyAsInt, but a value that is not an integer is an error rather than a
    /// warning plus the default: the router must not start on a setting it misread.
    template <class T>
    void read_int(std::string_view key, long long min, long long max, T& out) const {
        const std::string* v = find(key);
        if (!v) return;
        std::string_view digits = *v;
        if (digits.starts_with('+')) digits.remove_prefix(1);
        long long n = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (ec != std::errc{} || end != digits.data() + digits.size())
            throw config_error(at(key), std::string(key), "expected an integer, got '" + *v + "'");
        if (n < min || n > max)
            throw config_error(at(key), std::string(key),
                               std::to_string(n) + " is out of range [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "]");
        out = static_cast<T>(n);
    }

    /// Ice booleans are integers: 0 is false, anything else true.
    void read_bool(std::string_view key, bool& out) const {
        long long n = out ? 1 : 0;
        read_int(key, LLONG_MIN, LLONG_MAX, n);
        out = n != 0;
    }

    std::vector<protocol::endpoint> endpoints(std::string_view key) const {
        const std::string* v = find(key);
        return v ? detail::parse_endpoints(*v, at(key), std::string(key)) : std::vector<protocol::endpoint>{};
    }

    std::vector<std::string> words(std::string_view key) const {
        const std::string* v = find(key);
        return v ? detail::split_words(*v, at(key), std::string(key)) : std::vector<std::string>{};
    }

private:
    std::string file_;
    detail::property_map props_;
};

void read_endpoints(const property_file& p, config& cfg) {
    if (const std::string* name = p.find("Glacier2.InstanceName")) cfg.instance_name = *name;
    cfg.client_endpoints = p.endpoints("Glacier2.Client.Endpoints");
    if (cfg.client_endpoints.empty())
        throw config_error(p.file(), "Glacier2.Client.Endpoints", "required (the endpoints clients connect to)");
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
    p.read_bool("Glacier2.Client.ForwardContext", cfg.client_forward_context);
    p.read_bool("Glacier2.Server.ForwardContext", cfg.server_forward_context);
    p.read_bool("Glacier2.ReturnClientProxy", cfg.return_client_proxy);
    p.read_int("Glacier2.AddConnectionContext", 0, 2, cfg.add_connection_context);
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
    p.read_int("Ice.Override.ConnectTimeout", INT_MIN, INT_MAX, cfg.backend_connect_timeout_ms);
    if (cfg.backend_connect_timeout_ms <= 0) cfg.backend_connect_timeout_ms = config{}.backend_connect_timeout_ms;
}

void read_auth(const property_file& p, config& cfg) {
    const std::string* verifier = p.find("Glacier2.PermissionsVerifier");
    const std::string* crypt = p.find("Glacier2.CryptPasswords");
    if (verifier) {
        detail::set_permissions_verifier(cfg, *verifier, p.at("Glacier2.PermissionsVerifier"),
                                         "Glacier2.PermissionsVerifier");
        if (crypt)
            cfg.warnings.push_back(p.at("Glacier2.CryptPasswords") +
                                   ": Glacier2.CryptPasswords: ignored, Glacier2.PermissionsVerifier is set");
    } else if (crypt) {
        // A relative path is relative to the working directory, as for glacier2router.
        cfg.crypt_passwords =
            detail::check_crypt_passwords(*crypt, p.at("Glacier2.CryptPasswords"), "Glacier2.CryptPasswords");
        cfg.auth = auth_mode::crypt_file;
    }
    for (std::string_view key : {"Glacier2.SessionManager", "Glacier2.SSLPermissionsVerifier"}) {
        const std::string* v = p.find(key);
        if (!v) continue;
        detail::parse_proxy(*v, p.at(key), std::string(key));
        (key == "Glacier2.SessionManager" ? cfg.session_manager : cfg.ssl_permissions_verifier) = *v;
    }
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

// Ice.MessageSizeMax is in KiB; Ice treats < 1, or more than fits in 2 GiB, as "no limit".
void read_limits(const property_file& p, config& cfg) {
    long long kib = 1024;
    p.read_int("Ice.MessageSizeMax", LLONG_MIN, LLONG_MAX, kib);
    cfg.message_size_max = (kib < 1 || kib > INT_MAX / 1024) ? 0 : static_cast<std::size_t>(kib) * 1024;
}

// The embedded topic service runs when the file configures IceStorm's two endpoints (§8).
void read_topics(const property_file& p, config& cfg) {
    auto& t = cfg.topics;
    if (const std::string* name = p.find("IceStorm.InstanceName")) t.instance_name = *name;
    t.topic_manager_endpoints = p.endpoints("IceStorm.TopicManager.Endpoints");
    t.topic_manager_published_endpoints = p.endpoints("IceStorm.TopicManager.PublishedEndpoints");
    t.publish_endpoints = p.endpoints("IceStorm.Publish.Endpoints");
    t.publish_published_endpoints = p.endpoints("IceStorm.Publish.PublishedEndpoints");
    t.enabled = !t.topic_manager_endpoints.empty() && !t.publish_endpoints.empty();
    if (!t.enabled && (!t.topic_manager_endpoints.empty() || !t.publish_endpoints.empty()))
        cfg.warnings.push_back(p.file() +
                               ": topic service off: it needs both IceStorm.TopicManager.Endpoints and "
                               "IceStorm.Publish.Endpoints");
}

void warn(config& cfg, const property_file& p, std::string_view key, const std::string& why) {
    cfg.warnings.push_back(p.at(key) + ": " + std::string(key) + ": " + why);
}

// Unknown Glacier2.* keys are likely typos; known ones Moraine does not act on are named too, so
// nobody relies on them unawares. Ice.*, IceStorm.* and other keys belong to other components.
void warn_about_keys(const property_file& p, config& cfg) {
    for (const auto& [key, value] : p.all()) {
        if (key.starts_with("Glacier2.") && !is_known_glacier2_key(key))
            warn(cfg, p, key, "unknown property, ignored");
    }
    for (std::string_view key : {"Glacier2.Client.SleepTime", "Glacier2.Server.SleepTime"}) {
        const std::string* v = p.find(key);
        if (v && *v != "0") warn(cfg, p, key, "not supported by Moraine, ignored");
    }
    if (p.find("Glacier2.SSLSessionManager"))
        warn(cfg, p, "Glacier2.SSLSessionManager", "not supported by Moraine, ignored");
    for (std::string_view key : {"Glacier2.Client.MessageSizeMax", "Glacier2.Server.MessageSizeMax"}) {
        if (p.find(key)) warn(cfg, p, key, "not supported by Moraine, ignored (Ice.MessageSizeMax applies)");
    }
}

}  // namespace

config load_ice_config(const std::filesystem::path& path) {
    config cfg;
    cfg.source = path.string();
    property_file p(path.string(), detail::read_property_file(path, cfg.warnings));
    read_endpoints(p, cfg);  // first: instance_name is needed to recognise NullPermissionsVerifier
    read_forwarding(p, cfg);
    read_timeouts(p, cfg);
    read_auth(p, cfg);
    read_filters(p, cfg);
    read_limits(p, cfg);
    read_topics(p, cfg);
    warn_about_keys(p, cfg);
    return cfg;
}

}  // namespace moraine::router
