#pragma once
// The runtime's own keys, read from either configuration format.
#include <moraine/net/property_file.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/net/yaml_section.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace moraine::net {

/** The runtime's keys of an Ice property file: Ice.MessageSizeMax (KiB; < 1 = unlimited, as Ice),
    Ice.Override.ConnectTimeout (ms; <= 0 keeps the default), Ice.Default.Locator (a direct
    proxy) and Ice.Default.LocatorCacheTimeout (s, -1..), IceSSL.* (tls_config's keys;
    Ice.Plugin.IceSSL is accepted). IceSSL.* keys Moraine cannot honour stop start-up; a few
    harmless ones (IceSSL.Trace.*, IceSSL.InitOpenSSL, IceSSL.Random) go to `warnings`.
    @throws config_error. */
runtime_config read_runtime_config(const property_file& p, std::vector<std::string>& warnings);

/** The runtime's keys of Moraine's YAML: `threads`, the `limits` section (message_size_max,
    connection_queue_high/low/max, backend_connect_timeout_ms), the `locator` section (proxy,
    cache_timeout_s) and the `tls` section (tls_config's
    keys; relative paths are relative to `dir`, the YAML file's directory). @throws config_error. */
runtime_config read_runtime_config(yaml_section& root, const std::filesystem::path& dir);

/** Refuses an endpoint the runtime cannot serve as configured: opaque types, udp unless
    `datagrams` (only the topic service's Publish endpoints take datagrams), and ssl or wss
    without a certificate (require_server_certificate). A configured endpoint must never be
    served as something else. @throws config_error(at, key, "...") naming the endpoint. */
void require_served(const std::vector<protocol::endpoint>& endpoints, const std::string& at, const std::string& key,
                    const tls_config& tls, bool datagrams = false);

}  // namespace moraine::net
