#pragma once
// createSession: authenticate, then create the session (and an external one via a SessionManager).
#include <moraine/protocol/context.hpp>
#include <moraine/protocol/encapsulation.hpp>

#include <cstdint>
#include <string>

namespace moraine::router {

class client_connection;

/** Glacier2::Router::createSession(userId, password), asynchronously: checks the password
    (crypt file on the blocking pool, or an external PermissionsVerifier), then calls the
    SessionManager if one is configured, installs the session on `c` and replies to `request_id`
    in encoding `enc`. Refusals are PermissionDeniedException / CannotCreateSessionException in
    the sliced format, as glacier2router sends them. The verifier and session manager calls carry
    `client_ctx` (the createSession request's context; see session_call_context). */
void create_session(client_connection& c, std::int32_t request_id, protocol::encoding_version enc,
                    std::string user_id, std::string password, const protocol::context_view& client_ctx);

/** Glacier2::Router::createSessionFromSecureConnection(), asynchronously: refuses without a
    Glacier2.SSLPermissionsVerifier ("no configured ssl permissions verifier") or on a connection
    that is not TLS ("not ssl connection"); accepts with `<InstanceName>/NullSSLPermissionsVerifier`,
    else asks the external SSLPermissionsVerifier::authorize(SSLInfo); then calls
    Glacier2.SSLSessionManager's create(SSLInfo, control) if one is configured. The session's
    user id is the client certificate's subject (RFC 2253). Refusals and contexts as for
    create_session. */
void create_secure_session(client_connection& c, std::int32_t request_id, protocol::encoding_version enc,
                           const protocol::context_view& client_ctx);

}  // namespace moraine::router
