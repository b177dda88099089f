#pragma once
// The error of a router connection that ended (private to the library): one definition for the
// connection and the session, which a unity build compiles in one unit.
#include <moraine/client/error.hpp>

#include <string>
#include <utility>

namespace moraine::client {

/// errc::connection_lost, with `detail` saying what ended the connection.
inline error_info lost(std::string detail) { return make_error(errc::connection_lost, std::move(detail)); }

}  // namespace moraine::client
