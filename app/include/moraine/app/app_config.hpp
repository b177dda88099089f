#pragma once
// The whole configuration of an executable: the runtime's, the router's and the topic service's
// parts of one file, each read by its owner.
#include <moraine/icestorm_bridge/config.hpp>
#include <moraine/net/admin_object.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/router/config.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace moraine::app {

/// One configuration file, split between the services that read it.
struct app_config {
    std::string source;             ///< the file it came from, for messages
    net::runtime_config runtime;    ///< threads, limits (net::read_runtime_config)
    router::config router;          ///< Glacier2.* / client, server, session, auth, filters
    icestorm_bridge::topics_config topics; ///< IceStorm.* / topics
    net::admin_config admin;        ///< Ice.Admin.* (property files only): the Ice admin object
    std::map<std::string, std::string> properties;  ///< a property file's keys in force (PropertiesAdmin)
    std::vector<std::string> warnings;  ///< unknown Glacier2.* keys etc., printed at start
};

/** Loads Moraine's YAML: every top-level key must belong to one of the readers.
    With `router_required` false (moraine-topics), the router's sections may be absent.
    @throws net::config_error naming the file, line and key. */
app_config load_yaml_config(const std::filesystem::path& path, bool router_required = true);

/** Loads a Glacier2 3.7 property file (`Glacier2.*`, `Ice.*`, `IceStorm.*`) as glacier2router
    (+ IceStorm on the same file) would. @throws net::config_error. */
app_config load_ice_config(const std::filesystem::path& path);

/** The same from glacier2router's command line: the `--Ice.Config` files in order (none is
    fine), then `overrides` (`--Glacier2.X=Y`, an empty value unsets), which win.
    @throws net::config_error naming the file and line, or "command line (--KEY)". */
app_config load_ice_config(const std::vector<std::filesystem::path>& files, const net::property_map& overrides);

}  // namespace moraine::app
