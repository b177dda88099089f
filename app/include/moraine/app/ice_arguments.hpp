#pragma once
// glacier2router's command line: `--Ice.Config=FILE` and `--Prefix.Key=Value` property options.
#include <moraine/net/property_file.hpp>

#include <string>
#include <vector>

namespace moraine::app {

/// Ice-style property options taken out of a command line, and what is left for Moraine's own.
struct ice_arguments {
    std::vector<std::string> config_files;  ///< --Ice.Config=A[,B]: read in order, later files win
    net::property_map overrides;            ///< --Glacier2.X=Y etc.: win over every file; an empty value unsets
    std::vector<std::string> rest;          ///< the other arguments, argv[0] first
    bool any() const noexcept { return !config_files.empty() || !overrides.empty(); }
};

/** Splits `args` (argv) as an Ice communicator reads its command line: an argument
    `--P.Key=Value` whose prefix P is one of Ice, IceSSL, IceStorm, Glacier2, IceBox, IceGrid or
    Moraine sets property P.Key (`--P.Key` alone sets it to "1"); `--Ice.Config=FILES` names
    property files. Everything else, in order, is left in `rest`. */
ice_arguments split_ice_arguments(const std::vector<std::string>& args);

}  // namespace moraine::app
