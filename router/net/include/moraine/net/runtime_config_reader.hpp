#pragma once
// The runtime's own keys, read from either configuration format.
#include <moraine/net/property_file.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/net/yaml_section.hpp>

#include <string>
#include <vector>

namespace moraine::net {

/** The runtime's keys of an Ice property file: Ice.MessageSizeMax (KiB; < 1 = unlimited, as Ice),
    Ice.Override.ConnectTimeout (ms; <= 0 keeps the default). @throws config_error. */
runtime_config read_runtime_config(const property_file& p);

/** The runtime's keys of Moraine's YAML: `threads` and the `limits` section (message_size_max,
    connection_queue_high/low/max, backend_connect_timeout_ms). @throws config_error. */
runtime_config read_runtime_config(yaml_section& root);

/** Refuses an endpoint the runtime does not serve: anything but tcp for now (udp, ws, wss, ssl
    and opaque types). A configured endpoint must never be served as something else.
    @throws config_error(at, key, "...") naming the endpoint. */
void require_served(const std::vector<protocol::endpoint>& endpoints, const std::string& at, const std::string& key);

}  // namespace moraine::net
