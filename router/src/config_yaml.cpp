// read_config(yaml_section): the router's keys of Moraine's YAML configuration.
// conf/moraine.yaml documents every key; keep the two in step.
#include <moraine/router/config.hpp>

#include "config_common.hpp"

#include <climits>

namespace moraine::router {
namespace {

using net::yaml_section;


void read_client(yaml_section s, config& cfg) {
    cfg.client_endpoints = s.read_endpoints("endpoints");
    if (cfg.client_endpoints.empty())
        throw config_error(s.file(), "client.endpoints", "required (the endpoints clients connect to)");
    s.read("forward_context", cfg.client_forward_context);
    s.read("buffered", cfg.client_buffered);
    s.read("always_batch", cfg.client_always_batch);
    s.read_int("sleep_time_ms", 0, max_sleep_time_ms, cfg.client_sleep_time_ms);
    // Default as in glacier2router: the session timeout when there is one, else 60 s.
    cfg.acm_timeout_s = cfg.session_timeout_s > 0 ? static_cast<int>(cfg.session_timeout_s) : 60;
    s.read_int("acm_timeout", 0, INT_MAX, cfg.acm_timeout_s);
    s.read_int("heartbeat_interval_ms", 0, INT_MAX, cfg.heartbeat_interval_ms);
    s.read("heartbeat_always", cfg.heartbeat_always);
    s.read("reuse_port", cfg.client_reuse_port);
    s.read("adapter_id", cfg.client_adapter_id);
    s.read("replica_group_id", cfg.client_replica_group_id);
    s.finish();
}

void read_server(yaml_section s, config& cfg) {
    cfg.server_endpoints = s.read_endpoints("endpoints");
    cfg.server_published_endpoints = s.read_endpoints("published_endpoints");
    s.read("forward_context", cfg.server_forward_context);
    s.read("buffered", cfg.server_buffered);
    s.read("always_batch", cfg.server_always_batch);
    s.read_int("sleep_time_ms", 0, max_sleep_time_ms, cfg.server_sleep_time_ms);
    s.finish();
}

void read_session(yaml_section s, config& cfg) {
    s.read_int("timeout", 0, INT_MAX, cfg.session_timeout_s);
    s.read_int("routing_table_max", 0, INT_MAX, cfg.routing_table_max);
    if (auto v = s.scalar("manager", "expected a proxy string")) {
        detail::parse_proxy(v->text, v->at, "session.manager");
        cfg.session_manager = v->text;
    }
    if (auto v = s.scalar("ssl_manager", "expected a proxy string")) {
        detail::parse_proxy(v->text, v->at, "session.ssl_manager");
        cfg.ssl_session_manager = v->text;
    }
    auto& a = cfg.admission;
    s.read_size("max_sessions", a.sessions_max);
    long long rate = 0;
    s.read_int("setups_per_second_per_address", 0, 1000000, rate);
    a.setups_per_second = static_cast<double>(rate);
    auto b = s.section("login_backoff");
    b.read_int("free_failures", 0, 1000000, a.backoff_free_failures);
    long long initial = a.backoff_initial.count(), max = a.backoff_max.count();
    b.read_int("initial_ms", 0, INT_MAX, initial);
    b.read_int("max_ms", 0, INT_MAX, max);
    a.backoff_initial = std::chrono::milliseconds(initial);
    a.backoff_max = std::chrono::milliseconds(max);
    b.finish();
    s.finish();
}

auth_mode parse_auth_mode(yaml_section& s) {
    auto mode = s.scalar("mode", "expected one of none, crypt_file, verifier, allow_all");
    if (!mode) throw config_error(s.file(), "auth.mode", "required (none, crypt_file, verifier or allow_all)");
    if (mode->text == "none") return auth_mode::none;
    if (mode->text == "crypt_file") return auth_mode::crypt_file;
    if (mode->text == "verifier") return auth_mode::verifier;
    if (mode->text == "allow_all") return auth_mode::allow_all;
    throw config_error(mode->at, "auth.mode",
                       "expected one of none, crypt_file, verifier, allow_all, got '" + mode->text + "'");
}

void read_auth(yaml_section s, config& cfg, const std::filesystem::path& config_dir) {
    if (!s.present()) return;  // no auth section: auth_mode::none, every createSession refused
    cfg.auth = parse_auth_mode(s);
    auto crypt = s.scalar("crypt_passwords", "expected a file path");
    auto verifier = s.scalar("permissions_verifier", "expected a proxy string");
    if (auto ssl = s.scalar("ssl_permissions_verifier", "expected a proxy string")) {
        detail::set_ssl_permissions_verifier(cfg, ssl->text, ssl->at, "auth.ssl_permissions_verifier");
    }
    s.finish();

    // Each mode takes exactly its own key, so a half-edited section cannot mean two things.
    if (crypt && cfg.auth != auth_mode::crypt_file)
        throw config_error(crypt->at, "auth.crypt_passwords", "only used with mode crypt_file");
    if (verifier && cfg.auth != auth_mode::verifier)
        throw config_error(verifier->at, "auth.permissions_verifier", "only used with mode verifier");
    if (cfg.auth == auth_mode::crypt_file) {
        if (!crypt) throw config_error(s.file(), "auth.crypt_passwords", "required with mode crypt_file");
        std::filesystem::path file(crypt->text);
        if (file.is_relative()) file = config_dir / file;  // relative to the YAML file, not the cwd
        cfg.crypt_passwords = detail::check_crypt_passwords(file, crypt->at, "auth.crypt_passwords");
    }
    if (cfg.auth == auth_mode::verifier) {
        if (!verifier) throw config_error(s.file(), "auth.permissions_verifier", "required with mode verifier");
        detail::set_permissions_verifier(cfg, verifier->text, verifier->at, "auth.permissions_verifier");
    }
}

void read_filters(yaml_section s, config& cfg) {
    auto& f = cfg.filters;
    f.category_accept = s.read_list("category_accept");
    s.read_int("category_accept_user", 0, 2, f.category_accept_user);
    std::string ids_at;
    auto ids = s.read_list("identity_accept", &ids_at);
    f.identity_accept = detail::parse_identities(ids, ids_at, "filters.identity_accept");
    f.adapter_id_accept = s.read_list("adapter_id_accept");
    for (std::string_view key : {"address_accept", "address_reject"}) {
        std::string rules;
        std::string rules_at;
        for (const auto& rule : s.read_list(key, &rules_at)) {
            // One rule per item: a space would silently make it two.
            if (rule.empty() || rule.find_first_of(" \t") != std::string::npos)
                throw config_error(rules_at, s.path(key), "one rule per list item, without spaces: '" + rule + "'");
            rules += (rules.empty() ? "" : " ") + rule;
        }
        detail::check_address_rules(rules, rules_at, s.path(key));
        (key == "address_accept" ? f.address_accept : f.address_reject) = rules;
    }
    s.read_int("proxy_size_max", 0, INT_MAX, f.proxy_size_max);
    s.finish();
}

// `trace:` levels, named after the Glacier2 properties (conf/moraine.yaml).
void read_trace(yaml_section s, config& cfg) {
    for (const auto& k : trace_keys) s.read_int(k.yaml, 0, INT_MAX, cfg.trace.*k.level);
    s.finish();
}

}  // namespace

config read_config(yaml_section& root, const std::filesystem::path& dir) {
    config cfg;
    // Moraine forwards unbuffered unless asked (glacier2router's default is buffered).
    cfg.client_buffered = false;
    cfg.server_buffered = false;
    root.read("instance_name", cfg.instance_name);
    if (cfg.instance_name.empty()) throw config_error(root.file(), "instance_name", "must not be empty");
    root.read("return_client_proxy", cfg.return_client_proxy);
    root.read_int("add_connection_context", 0, 2, cfg.add_connection_context);
    read_session(root.section("session"), cfg);  // before client: acm_timeout defaults to it
    read_client(root.section("client"), cfg);
    read_server(root.section("server"), cfg);
    read_auth(root.section("auth"), cfg, dir);
    read_filters(root.section("filters"), cfg);
    read_trace(root.section("trace"), cfg);
    return cfg;
}

}  // namespace moraine::router
