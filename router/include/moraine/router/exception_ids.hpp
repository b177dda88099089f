#pragma once
// The Glacier2 user exceptions the router raises (Slice: Glacier2/Router.ice, PermissionsVerifier.ice).
#include <string_view>

namespace moraine::router {

/// The Glacier2 exception type ids.
inline constexpr std::string_view permission_denied_id = "::Glacier2::PermissionDeniedException";
inline constexpr std::string_view cannot_create_session_id = "::Glacier2::CannotCreateSessionException";
inline constexpr std::string_view session_not_exist_id = "::Glacier2::SessionNotExistException";

}  // namespace moraine::router
