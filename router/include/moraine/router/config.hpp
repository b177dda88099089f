#pragma once
// The router's configuration, from YAML (--config) or a Glacier2 property file (--ice-config).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/session/filter_set.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace moraine::router {

/// A configuration error: the file, the key and the reason ("FILE: KEY: REASON").
class config_error : public std::runtime_error {
public:
    config_error(const std::string& file, const std::string& key, const std::string& reason)
        : std::runtime_error(file + ": " + key + ": " + reason) {}
};

/// How createSession authenticates.
enum class auth_mode {
    none,       ///< nothing configured: every createSession is refused (PermissionDeniedException)
    crypt_file, ///< Glacier2.CryptPasswords
    verifier,   ///< Glacier2.PermissionsVerifier proxy (an external Glacier2::PermissionsVerifier)
    allow_all,  ///< explicit (YAML `auth: {mode: allow_all}` or Glacier2/NullPermissionsVerifier)
};

/// The embedded IceStorm-compatible topic service (icestorm-bridge).
struct topics_config {
    bool enabled = false;
    std::string instance_name = "IceStorm";
    std::vector<protocol::endpoint> topic_manager_endpoints;
    std::vector<protocol::endpoint> topic_manager_published_endpoints;  ///< empty = the above
    std::vector<protocol::endpoint> publish_endpoints;
    std::vector<protocol::endpoint> publish_published_endpoints;        ///< empty = the above
    std::size_t subscriber_queue_bytes = 1 << 20;  ///< per-subscriber queue bound before its QoS applies
};

/// Everything moraine-router needs to start. Immutable once loaded; shared as shared_ptr<const config>.
struct config {
    std::string source;                   ///< file it came from, for messages
    std::string instance_name = "Glacier2";
    unsigned threads = 0;                 ///< I/O threads (shards); 0 = one per core

    std::vector<protocol::endpoint> client_endpoints;            ///< required
    std::vector<protocol::endpoint> server_endpoints;            ///< empty = no callbacks
    std::vector<protocol::endpoint> server_published_endpoints;  ///< empty = server_endpoints

    bool client_forward_context = false;  ///< Glacier2.Client.ForwardContext
    bool server_forward_context = false;  ///< Glacier2.Server.ForwardContext
    bool client_buffered = true;          ///< Glacier2.Client.Buffered (YAML default: false)
    bool server_buffered = true;          ///< Glacier2.Server.Buffered (YAML default: false)
    bool client_always_batch = false;     ///< Glacier2.Client.AlwaysBatch
    bool server_always_batch = false;     ///< Glacier2.Server.AlwaysBatch
    bool return_client_proxy = false;     ///< Glacier2.ReturnClientProxy
    int add_connection_context = 0;       ///< Glacier2.AddConnectionContext

    std::int64_t session_timeout_s = 0;   ///< Glacier2.SessionTimeout; 0 = none
    int acm_timeout_s = 60;               ///< client connections idle this long are closed (SessionTimeout if > 0, else Ice.ACM.Server.Timeout or 60); 0 = never
    std::size_t routing_table_max = 1000; ///< Glacier2.RoutingTable.MaxSize

    auth_mode auth = auth_mode::none;
    std::string crypt_passwords;          ///< path, for auth_mode::crypt_file
    std::string permissions_verifier;     ///< proxy string, for auth_mode::verifier
    std::string session_manager;          ///< proxy string; empty = createSession returns a nil Session*
    std::string ssl_permissions_verifier; ///< proxy string (TLS lands later)

    session::filter_config filters;

    std::size_t message_size_max = 1024 * 1024;      ///< bytes (Ice.MessageSizeMax KiB × 1024); 0 = unlimited
    std::size_t connection_queue_high = 256 * 1024;  ///< outbound queue bytes at which the feeder is paused
    std::size_t connection_queue_low = 64 * 1024;    ///< ...and resumed
    std::size_t connection_queue_max = 16 << 20;     ///< a connection whose queue exceeds this is closed
    int backend_connect_timeout_ms = 10000;

    topics_config topics;

    std::vector<std::string> warnings;    ///< unknown Glacier2.* keys etc., printed at start
};

/// Loads a YAML config (conf/moraine.yaml documents every key). @throws config_error.
config load_yaml_config(const std::filesystem::path& path);

/// Loads a Glacier2 3.7 property file (`key=value`, `#` comments; `Glacier2.*`, `Ice.MessageSizeMax`,
/// `Ice.ACM.*`, `IceStorm.*`) with glacier2router's defaults (Buffered=1...). Unknown Glacier2.* keys
/// go to `warnings`. @throws config_error (missing Glacier2.Client.Endpoints, bad endpoint, bad number...).
config load_ice_config(const std::filesystem::path& path);

}  // namespace moraine::router
