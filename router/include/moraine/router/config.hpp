#pragma once
// The Glacier2 router's configuration, from YAML (--config) or a Glacier2 property file (--ice-config).
#include <moraine/net/config_error.hpp>
#include <moraine/net/property_file.hpp>
#include <moraine/net/yaml_section.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/router/trace.hpp>
#include <moraine/session/admission.hpp>
#include <moraine/session/filter_set.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace moraine::router {

using net::config_error;

/// How createSession authenticates.
enum class auth_mode {
    none,       ///< nothing configured: every createSession is refused (PermissionDeniedException)
    crypt_file, ///< Glacier2.CryptPasswords
    verifier,   ///< Glacier2.PermissionsVerifier proxy (an external Glacier2::PermissionsVerifier)
    allow_all,  ///< explicit (YAML `auth: {mode: allow_all}` or Glacier2/NullPermissionsVerifier)
};

/// Upper bound of Glacier2.Client/Server.SleepTime (ms): a longer hold is a configuration mistake.
inline constexpr int max_sleep_time_ms = 60'000;

/// The Glacier2 router's settings. Immutable once loaded; shared as shared_ptr<const config>.
struct config {
    std::string instance_name = "Glacier2";

    std::vector<protocol::endpoint> client_endpoints;            ///< required
    std::vector<protocol::endpoint> server_endpoints;            ///< empty = no callbacks
    std::vector<protocol::endpoint> server_published_endpoints;  ///< empty = server_endpoints
    /// Moraine.Client.ReusePort / client.reuse_port: other moraine-router processes (same user,
    /// same key) may listen on the client endpoints' ports too, and the kernel spreads new
    /// connections over all of them. Off: another listener there stops start-up.
    bool client_reuse_port = false;
    /// Glacier2.Client.AdapterId / client.adapter_id: the adapter id under which the client
    /// endpoints are registered with the locator registry at start (and withdrawn at an orderly
    /// shutdown); empty = not registered. Needs a locator (net::runtime_config::locator).
    std::string client_adapter_id;
    /// Glacier2.Client.ReplicaGroupId / client.replica_group_id: the replica group the adapter
    /// joins (setReplicatedAdapterDirectProxy), so `Glacier2/router@<group>` reaches every router
    /// registered in it; empty = none. Needs client_adapter_id.
    std::string client_replica_group_id;

    bool client_forward_context = false;  ///< Glacier2.Client.ForwardContext
    bool server_forward_context = false;  ///< Glacier2.Server.ForwardContext
    bool client_buffered = true;          ///< Glacier2.Client.Buffered (YAML default: false)
    bool server_buffered = true;          ///< Glacier2.Server.Buffered (YAML default: false)
    bool client_always_batch = false;     ///< Glacier2.Client.AlwaysBatch
    bool server_always_batch = false;     ///< Glacier2.Server.AlwaysBatch
    int client_sleep_time_ms = 0;         ///< Glacier2.Client.SleepTime: a buffered queue holds this long after each flush
    int server_sleep_time_ms = 0;         ///< Glacier2.Server.SleepTime
    bool return_client_proxy = false;     ///< Glacier2.ReturnClientProxy
    int add_connection_context = 0;       ///< Glacier2.AddConnectionContext

    std::int64_t session_timeout_s = 0;   ///< Glacier2.SessionTimeout; 0 = none
    int acm_timeout_s = 60;               ///< client connections idle this long are closed (SessionTimeout if > 0, else Ice.ACM.Server.Timeout or 60); 0 = never
    /// A validate-connection message (Ice's heartbeat) goes to a client connection the router
    /// wrote nothing to for this long, so Ice 3.8 clients (which drop a connection they read
    /// nothing from for 60 s) and Ice 3.7 clients with ACM keep their sessions; 0 = never.
    /// Default: half the ACM timeout, at most 30 s. (Glacier2.Client.ACM.Heartbeat 0/1 = off.)
    int heartbeat_interval_ms = -1;       ///< -1 = the default above, resolved by heartbeat_interval()
    /// Glacier2.Client.ACM.Heartbeat=3 (HeartbeatAlways) / client.heartbeat_always: a heartbeat
    /// every heartbeat_interval() on every client connection, busy or not.
    bool heartbeat_always = false;
    std::size_t routing_table_max = 1000; ///< Glacier2.RoutingTable.MaxSize

    auth_mode auth = auth_mode::none;
    std::string crypt_passwords;          ///< path, for auth_mode::crypt_file
    std::string permissions_verifier;     ///< proxy string, for auth_mode::verifier
    std::string session_manager;          ///< proxy string; empty = createSession returns a nil Session*
    std::string ssl_permissions_verifier; ///< Glacier2.SSLPermissionsVerifier proxy string; empty = createSessionFromSecureConnection refused
    bool ssl_allow_all = false;           ///< it is `<InstanceName>/NullSSLPermissionsVerifier`: every TLS client accepted
    std::string ssl_session_manager;      ///< Glacier2.SSLSessionManager proxy string; empty = a nil Session*

    session::filter_config filters;
    session::admission_limits admission;
    trace_levels trace;                   ///< Glacier2.*Trace.* / YAML `trace:`: log categories, all off by default  ///< session limit, set-up rate and login back-off (YAML session.*, Moraine.Limits.*)

    /// heartbeat_interval_ms with its default resolved (ms; 0 = no heartbeats).
    int heartbeat_interval() const noexcept {
        if (heartbeat_interval_ms >= 0) return heartbeat_interval_ms;
        const long long half_acm_ms = acm_timeout_s > 0 ? acm_timeout_s * 500LL : 30000LL;
        return static_cast<int>(std::min(30000LL, std::max(1000LL, half_acm_ms)));
    }
};

/** Reads the router's keys from a Glacier2 3.7 property file (`Glacier2.*`, `Ice.ACM.*`) with
    glacier2router's defaults (Buffered=1...). Unknown Glacier2.* keys, and known ones Moraine
    does not act on, go to `warnings`. @throws config_error (missing Glacier2.Client.Endpoints,
    bad endpoint, bad number...). */
config read_config(const net::property_file& p, std::vector<std::string>& warnings);

/** Reads the router's keys from the top level of Moraine's YAML (instance_name,
    return_client_proxy, add_connection_context, session, client, server, auth, filters, trace);
    conf/moraine.yaml documents them. Relative paths are relative to `dir`. Other sections are
    left to their readers. @throws config_error naming the file, line and key path. */
config read_config(net::yaml_section& root, const std::filesystem::path& dir);

}  // namespace moraine::router
