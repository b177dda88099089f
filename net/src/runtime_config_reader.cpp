#include <moraine/net/runtime_config_reader.hpp>

#include <moraine/net/tls_context.hpp>

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace moraine::net {

namespace {

// IceSSL keys that change nothing Moraine does (tracing, OpenSSL start-up, seeding): warned about.
constexpr std::string_view ignored_iceSSL_keys[] = {"IceSSL.InitOpenSSL", "IceSSL.Random", "IceSSL.EntropyDaemon"};

/// IceSSL.Protocols: a list separated by commas or blanks.
std::vector<std::string> split_list(std::string_view s) {
    std::vector<std::string> out;
    std::string word;
    for (char c : s) {
        if (c == ',' || c == ' ' || c == '\t') {
            if (!word.empty()) out.push_back(std::exchange(word, {}));
        } else {
            word += c;
        }
    }
    if (!word.empty()) out.push_back(word);
    return out;
}

bool is_tls_property(std::string_view key) {
    return std::any_of(std::begin(tls_keys), std::end(tls_keys), [&](const tls_key& k) { return k.property == key; });
}

/// Every IceSSL.* key is either read, harmless (warned), or refused: a security setting Moraine
/// silently ignored (TrustOnly, CertVerifier...) would weaken what the operator asked for.
void check_iceSSL_keys(const property_file& p, std::vector<std::string>& warnings) {
    for (const auto& [key, value] : p.all()) {
        if (!key.starts_with("IceSSL.") || is_tls_property(key)) continue;
        const bool harmless = key.starts_with("IceSSL.Trace.") ||
                              std::find(std::begin(ignored_iceSSL_keys), std::end(ignored_iceSSL_keys), key) !=
                                  std::end(ignored_iceSSL_keys);
        if (!harmless) throw config_error(p.at(key), key, "not supported by Moraine; remove it or the router cannot honour it");
        warnings.push_back(p.at(key) + ": " + key + ": not used by Moraine, ignored");
    }
}

tls_config read_tls(const property_file& p, std::vector<std::string>& warnings) {
    check_iceSSL_keys(p, warnings);
    tls_config t;
    t.source = p.file();
    for (const auto& [key, value] : p.all())
        if (key.starts_with("IceSSL.") || key == "Ice.Plugin.IceSSL" || key.starts_with("Moraine.TLS.")) t.configured = true;
    auto text = [&](std::string_view key, std::string& out) {
        if (const std::string* v = p.find(key)) out = *v;
    };
    text("IceSSL.DefaultDir", t.default_dir);
    text("IceSSL.CAs", t.cas);
    p.read_bool("IceSSL.UsePlatformCAs", t.use_platform_cas);
    text("IceSSL.CertFile", t.cert_file);
    text("IceSSL.KeyFile", t.key_file);
    text("IceSSL.Password", t.password);
    p.read_int("IceSSL.VerifyPeer", 0, 2, t.verify_peer);
    p.read_int("IceSSL.VerifyDepthMax", 0, INT_MAX, t.verify_depth_max);
    p.read_bool("IceSSL.CheckCertName", t.check_cert_name);
    if (const std::string* v = p.find("IceSSL.Protocols")) t.protocols = split_list(*v);
    text("IceSSL.Ciphers", t.ciphers);
    p.read_int("Moraine.TLS.HandshakeTimeout", 1, INT_MAX, t.handshake_timeout_ms);
    p.read_int("Moraine.TLS.HandshakeThreads", 0, 64, t.handshake_threads);
    return t;
}

tls_config read_tls(yaml_section& root, const std::filesystem::path& dir) {
    tls_config t;
    t.source = root.file();
    t.yaml = true;
    t.configured = root.has("tls");
    auto s = root.section("tls");
    s.read("default_dir", t.default_dir);
    s.read("cas", t.cas);
    s.read("use_platform_cas", t.use_platform_cas);
    s.read("cert_file", t.cert_file);
    s.read("key_file", t.key_file);
    s.read("password", t.password);
    s.read_int("verify_peer", 0, 2, t.verify_peer);
    s.read_int("verify_depth_max", 0, INT_MAX, t.verify_depth_max);
    s.read("check_cert_name", t.check_cert_name);
    if (auto v = s.take("protocols")) {  // [tls1_2, tls1_3] or "tls1_2, tls1_3"
        if (!v->IsScalar() && !v->IsSequence()) s.fail(*v, "protocols", "expected a list such as [tls1_2, tls1_3]");
        for (const auto& item : v->IsScalar() ? std::vector<YAML::Node>{*v} : std::vector<YAML::Node>(v->begin(), v->end())) {
            if (!item.IsScalar()) s.fail(item, "protocols", "expected a list such as [tls1_2, tls1_3]");
            for (auto& name : split_list(item.Scalar())) t.protocols.push_back(std::move(name));
        }
    }
    s.read("ciphers", t.ciphers);
    s.read_int("handshake_timeout_ms", 1, INT_MAX, t.handshake_timeout_ms);
    s.read_int("handshake_threads", 0, 64, t.handshake_threads);
    s.finish();
    // Relative paths are relative to the YAML file, like every other path in it.
    std::filesystem::path base(t.default_dir);
    if (base.is_relative()) t.default_dir = (dir / base).lexically_normal().string();
    return t;
}

/// "HOST:PORT", "[V6]:PORT" or "PORT" (loopback). The host must be an IP address: the
/// endpoint exposes the router's internals, so where it listens is spelled out, never resolved.
metrics_config parse_metrics_listen(const std::string& text, const std::string& at, const std::string& key) {
    metrics_config m;
    m.enabled = true;
    std::string host, port = text;
    if (const auto colon = text.rfind(':'); colon != std::string::npos) {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    }
    if (!host.empty()) {
        boost::system::error_code ec;
        boost::asio::ip::make_address(host, ec);
        if (ec) throw config_error(at, key, "'" + text + "': the host must be an IP address such as 127.0.0.1");
        m.host = host;
    }
    char* end = nullptr;
    const long n = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || n < 0 || n > 65535)
        throw config_error(at, key, "'" + text + "': expected HOST:PORT with a port from 0 to 65535");
    m.port = static_cast<unsigned short>(n);
    return m;
}

/// One of spdlog's level names, so a typo stops start-up (or a reload) instead of logging at "off".
std::string check_log_level(const std::string& level, const std::string& at, const std::string& key) {
    for (const char* ok : {"trace", "debug", "info", "warn", "error", "critical", "off"})
        if (level == ok) return level;
    throw config_error(at, key, "'" + level + "': expected trace, debug, info, warn, error, critical or off");
}

/** The locator's proxy (Ice.Default.Locator / locator.proxy): it must be a direct proxy with an
    endpoint the runtime can reach (tcp or ws; ssl or wss with TLS configured), since it is what
    resolves the indirect ones. */
protocol::proxy parse_locator(const std::string& value, const std::string& at, const std::string& key,
                              const tls_config& tls) {
    auto p = protocol::proxy_from_string(value);
    if (!p || p->is_nil()) throw config_error(at, key, "'" + value + "' is not a valid proxy");
    if (p->endpoints.empty())
        throw config_error(at, key, "'" + value + "': the locator must be a direct proxy (with endpoints)");
    const bool reachable = std::any_of(p->endpoints.begin(), p->endpoints.end(), [&](const protocol::endpoint& e) {
        return e.is_tcp() || e.is_ws() || (e.secure() && tls.configured);
    });
    if (!reachable)
        throw config_error(at, key, "'" + value + "': no tcp or ws endpoint (ssl and wss need TLS configured)");
    return *p;
}

}  // namespace

runtime_config read_runtime_config(const property_file& p, std::vector<std::string>& warnings) {
    runtime_config cfg;
    // Ice.MessageSizeMax is in KiB; Ice treats < 1, or more than fits in 2 GiB, as "no limit".
    long long kib = 1024;
    p.read_int("Ice.MessageSizeMax", LLONG_MIN, LLONG_MAX, kib);
    cfg.message_size_max = (kib < 1 || kib > INT_MAX / 1024) ? 0 : static_cast<std::size_t>(kib) * 1024;
    p.read_int("Ice.Override.ConnectTimeout", INT_MIN, INT_MAX, cfg.backend_connect_timeout_ms);
    if (cfg.backend_connect_timeout_ms <= 0) cfg.backend_connect_timeout_ms = runtime_config{}.backend_connect_timeout_ms;
    if (const std::string* v = p.find("Ice.Default.EndpointSelection")) {
        if (*v != "Random" && *v != "Ordered")
            throw config_error(p.at("Ice.Default.EndpointSelection"), "Ice.Default.EndpointSelection",
                               "expected Random or Ordered, got '" + *v + "'");
        cfg.endpoints_ordered = *v == "Ordered";
    }
    cfg.tls = read_tls(p, warnings);
    if (const std::string* v = p.find("Ice.Default.Locator"))
        cfg.locator = parse_locator(*v, p.at("Ice.Default.Locator"), "Ice.Default.Locator", cfg.tls);
    p.read_int("Ice.Default.LocatorCacheTimeout", -1, INT_MAX, cfg.locator_cache_timeout_s);
    p.read_int("Moraine.Drain.Timeout", 0, INT_MAX, cfg.drain_timeout_ms);
    if (const std::string* v = p.find("Moraine.Takeover.Socket")) cfg.takeover.socket = *v;
    p.read_int("Moraine.Takeover.DrainTimeout", 0, INT_MAX, cfg.takeover.drain_timeout_ms);
    p.read_int("Moraine.Limits.ConnectionsPerAddress", 0, LLONG_MAX, cfg.connections_per_address);
    p.read_int("Ice.TCP.SndSize", 1, INT_MAX, cfg.tcp_send_buffer);
    p.read_int("Ice.TCP.RcvSize", 1, INT_MAX, cfg.tcp_receive_buffer);
    p.read_int("Ice.TCP.Backlog", 1, INT_MAX, cfg.tcp_backlog);
    if (const std::string* v = p.find("Moraine.Log.Level")) cfg.log_level = check_log_level(*v, p.at("Moraine.Log.Level"), "Moraine.Log.Level");
    if (const std::string* v = p.find("Moraine.Metrics.Listen"))
        cfg.metrics = parse_metrics_listen(*v, p.at("Moraine.Metrics.Listen"), "Moraine.Metrics.Listen");
    return cfg;
}

runtime_config read_runtime_config(yaml_section& root, const std::filesystem::path& dir) {
    runtime_config cfg;
    root.read_int("threads", 0, 1024, cfg.threads);
    root.read_int("drain_timeout_ms", 0, INT_MAX, cfg.drain_timeout_ms);
    root.read("log_level", cfg.log_level);
    if (!cfg.log_level.empty()) cfg.log_level = check_log_level(cfg.log_level, root.file(), "log_level");
    auto s = root.section("limits");
    s.read_size("message_size_max", cfg.message_size_max);
    s.read_size("connection_queue_high", cfg.connection_queue_high);
    s.read_size("connection_queue_low", cfg.connection_queue_low);
    s.read_size("connection_queue_max", cfg.connection_queue_max);
    s.read_int("backend_connect_timeout_ms", 1, INT_MAX, cfg.backend_connect_timeout_ms);
    s.read_size("connections_per_address", cfg.connections_per_address);
    s.read_size("tcp_send_buffer", cfg.tcp_send_buffer, INT_MAX);  // setsockopt takes an int
    s.read_size("tcp_receive_buffer", cfg.tcp_receive_buffer, INT_MAX);
    s.read_int("tcp_backlog", 0, INT_MAX, cfg.tcp_backlog);
    std::string selection;
    s.read("endpoint_selection", selection);
    if (!selection.empty() && selection != "random" && selection != "ordered")
        throw config_error(s.file(), "limits.endpoint_selection", "expected random or ordered, got '" + selection + "'");
    cfg.endpoints_ordered = selection == "ordered";
    s.finish();
    if (cfg.connection_queue_low >= cfg.connection_queue_high)
        throw config_error(s.file(), "limits.connection_queue_low", "must be below limits.connection_queue_high");
    if (cfg.connection_queue_high > cfg.connection_queue_max)
        throw config_error(s.file(), "limits.connection_queue_high", "must not exceed limits.connection_queue_max");
    cfg.tls = read_tls(root, dir);
    auto l = root.section("locator");
    std::string locator;
    l.read("proxy", locator);
    l.read_int("cache_timeout_s", -1, INT_MAX, cfg.locator_cache_timeout_s);
    l.finish();
    if (!locator.empty()) cfg.locator = parse_locator(locator, l.file(), "locator.proxy", cfg.tls);
    auto t = root.section("takeover");
    t.read("socket", cfg.takeover.socket);
    t.read_int("drain_timeout_ms", 0, INT_MAX, cfg.takeover.drain_timeout_ms);
    t.finish();
    auto m = root.section("metrics");
    std::string listen;
    m.read("listen", listen);
    m.finish();
    if (!listen.empty()) cfg.metrics = parse_metrics_listen(listen, m.file(), "metrics.listen");
    return cfg;
}

void require_served(const std::vector<protocol::endpoint>& endpoints, const std::string& at, const std::string& key,
                    const tls_config& tls, bool datagrams) {
    for (const auto& e : endpoints) {
        if (e.is_tcp() || e.is_ws() || (datagrams && e.is_udp())) continue;
        if (e.secure()) {
            require_server_certificate(tls, key);
            continue;
        }
        const std::string text = protocol::endpoint_to_string(e);
        const std::string type = text.substr(0, text.find(' '));
        throw config_error(at, key,
                           "'" + text + "': " + type +
                               " endpoints are not served by Moraine; refusing to start rather than serve it as "
                               "something else");
    }
}

}  // namespace moraine::net
