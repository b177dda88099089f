#pragma once
// The Ice admin object (Ice.Admin.*): `<InstanceName>/admin` on its own endpoints, with the
// `Process` and `Properties` facets that icegridnode and Ice's admin tools call (docs/operations.md,
// "The admin object").
#include <moraine/net/property_file.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/request.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace moraine::net {

class shard_set;
class ice_connection;

/// Ice.Admin.* as an Ice 3.7 communicator reads them.
struct admin_config {
    bool enabled = false;                         ///< Ice.Admin.Enabled; unset: on when Endpoints is set
    std::vector<protocol::endpoint> endpoints;    ///< Ice.Admin.Endpoints (Ice.Default.Host applies)
    std::string instance_name;                    ///< Ice.Admin.InstanceName: the identity's category
    std::string server_id;                        ///< Ice.Admin.ServerId (IceGrid's name for this server)
    std::vector<std::string> facets;              ///< Ice.Admin.Facets; empty = every facet
    /// Whether `facet` is served (Ice.Admin.Facets lists it, or lists nothing).
    bool serves(std::string_view facet) const;
};

/** Reads Ice.Admin.* from `p`. An instance name is required when the object is enabled (Ice
    makes up a UUID; a name nobody knows is no use to a tool, so one is made up here as well and
    logged). @throws config_error for Ice.Admin.Enabled=1 without Ice.Admin.Endpoints: nothing
    could reach the object. */
admin_config read_admin_config(const property_file& p);

/// What the composition root does for the facets. Each runs on a shard thread.
struct admin_hooks {
    /// Process::shutdown: drain and exit as on SIGTERM.
    std::function<void()> shutdown;
    /// The properties in force (PropertiesAdmin::getProperty, getPropertiesForPrefix).
    std::function<std::map<std::string, std::string>()> properties;
    /// PropertiesAdmin::setProperties: set these (an empty value removes the key), then apply
    /// what a SIGHUP reload applies.
    std::function<void(std::map<std::string, std::string>)> set_properties;
    /// The services this process hosts as an IceBox would (`IceStorm` when the topic service is
    /// on): when not empty, the `IceBox.ServiceManager` facet is served too, so `iceboxadmin`
    /// and IceGrid stop a Moraine that stands in for an icebox running IceStorm.
    std::vector<std::string> services;
};

/** Serves the admin object on the configured endpoints, on every shard: the `Process` and
    `Properties` facets, and `IceBox.ServiceManager` when admin_hooks::services names any. */
class admin_object {
public:
    admin_object(shard_set& shards, admin_config cfg, admin_hooks hooks);

    /// Binds the endpoints (`-p 0` gets a port). @return the bound endpoints.
    /// @throws config_error as shard_set::listen does.
    std::vector<protocol::endpoint> start();

    /// `<InstanceName>/admin` on the bound endpoints (after start()).
    const protocol::proxy& proxy() const noexcept { return proxy_; }

    /** Answers `r`, a request on connection `c`: ObjectNotExist for another identity,
        FacetNotExist for a facet not served, OperationNotExist for an unknown operation.
        @return the reply for a twoway request, nullopt for a oneway. */
    std::optional<protocol::byte_buffer> dispatch(const protocol::request_view& r);

    /// Process::shutdown was called: the admin object answers nothing more (its connections close).
    bool shut_down() const noexcept { return shut_down_.load(std::memory_order_relaxed); }

private:
    std::optional<protocol::byte_buffer> process_op(const protocol::request_view& r);
    std::optional<protocol::byte_buffer> properties_op(const protocol::request_view& r);
    /// IceBox::ServiceManager: shutdown (as Process::shutdown), getSliceChecksums (empty),
    /// startService (AlreadyStartedException for a hosted service, NoSuchServiceException for
    /// another), stopService (NoSuchServiceException for another; a hosted service runs as long
    /// as the process: UnknownException). addObserver is not served (OperationNotExist).
    std::optional<protocol::byte_buffer> service_manager_op(const protocol::request_view& r);
    /// Process::shutdown and ServiceManager::shutdown: the reply, then the shutdown hook.
    protocol::byte_buffer shut_down(const protocol::request_view& r, std::string_view what);

    shard_set& shards_;
    admin_config cfg_;
    admin_hooks hooks_;
    protocol::proxy proxy_;
    std::atomic<bool> shut_down_{false};  // set on any shard, read on all
};

}  // namespace moraine::net
