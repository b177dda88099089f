#include <moraine/net/runtime_config_reader.hpp>

#include <climits>

namespace moraine::net {

runtime_config read_runtime_config(const property_file& p) {
    runtime_config cfg;
    // Ice.MessageSizeMax is in KiB; Ice treats < 1, or more than fits in 2 GiB, as "no limit".
    long long kib = 1024;
    p.read_int("Ice.MessageSizeMax", LLONG_MIN, LLONG_MAX, kib);
    cfg.message_size_max = (kib < 1 || kib > INT_MAX / 1024) ? 0 : static_cast<std::size_t>(kib) * 1024;
    p.read_int("Ice.Override.ConnectTimeout", INT_MIN, INT_MAX, cfg.backend_connect_timeout_ms);
    if (cfg.backend_connect_timeout_ms <= 0) cfg.backend_connect_timeout_ms = runtime_config{}.backend_connect_timeout_ms;
    return cfg;
}

runtime_config read_runtime_config(yaml_section& root) {
    runtime_config cfg;
    root.read_int("threads", 0, 1024, cfg.threads);
    auto s = root.section("limits");
    s.read_size("message_size_max", cfg.message_size_max);
    s.read_size("connection_queue_high", cfg.connection_queue_high);
    s.read_size("connection_queue_low", cfg.connection_queue_low);
    s.read_size("connection_queue_max", cfg.connection_queue_max);
    s.read_int("backend_connect_timeout_ms", 1, INT_MAX, cfg.backend_connect_timeout_ms);
    s.finish();
    if (cfg.connection_queue_low >= cfg.connection_queue_high)
        throw config_error(s.file(), "limits.connection_queue_low", "must be below limits.connection_queue_high");
    if (cfg.connection_queue_high > cfg.connection_queue_max)
        throw config_error(s.file(), "limits.connection_queue_high", "must not exceed limits.connection_queue_max");
    return cfg;
}

void require_served(const std::vector<protocol::endpoint>& endpoints, const std::string& at, const std::string& key) {
    for (const auto& e : endpoints) {
        if (e.is_tcp()) continue;
        const std::string text = protocol::endpoint_to_string(e);
        const std::string type = text.substr(0, text.find(' '));
        throw config_error(at, key,
                           "'" + text + "': " + type +
                               " endpoints are not served by Moraine; refusing to start rather than serve it as "
                               "something else");
    }
}

}  // namespace moraine::net
