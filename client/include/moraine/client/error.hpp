#pragma once
// Errors of the client library as error codes, plus the text Ice carries with them (docs/style.md §8).
#include <boost/system/error_code.hpp>
#include <string>
#include <type_traits>

namespace moraine::client {

/// Why a client operation failed. Each maps to the Ice exception a 3.7 client would raise
/// (docs/ice-wire.md §6, docs/glacier2.md §4). The text that goes with it (reason, unknown
/// text, type id) is in error_info::detail.
enum class errc {
    connection_lost = 1,    ///< ConnectionLostException: the router closed, reset, or the session was dropped
    permission_denied,      ///< Glacier2::PermissionDeniedException; detail = the reason
    cannot_create_session,  ///< Glacier2::CannotCreateSessionException; detail = the reason
    object_not_exist,       ///< reply status 2; detail = "identity facet operation"
    facet_not_exist,        ///< reply status 3; detail as object_not_exist
    operation_not_exist,    ///< reply status 4; detail as object_not_exist
    unknown_local,          ///< reply status 5 UnknownLocalException; detail = the text
    unknown_user,           ///< reply status 6 UnknownUserException; detail = the text
    unknown,                ///< reply status 7 UnknownException; detail = the text
    user_exception,         ///< reply status 1; detail = the type id, call_result::encaps = the exception
    timeout,                ///< InvocationTimeoutException: no reply within session_options::call_timeout,
                            ///< or connect/validation/close not done within connect_timeout
    protocol_error,         ///< the router sent bytes that are not Ice 1.0 (connection closed)
    queue_full,             ///< the connection's write queue is over session_options::write_queue_limit
    not_connected,          ///< no open session: async_open not done, or the session is closed
    bad_endpoint,           ///< the router endpoint string is not `tcp|ssl|ws|wss -h HOST -p PORT`, or
                            ///< async_open was given an empty router_endpoints
    tls_not_configured,     ///< the router address is `ssl` or `wss` but session_options::tls is null:
                            ///< refused before connecting (never tried over tcp or ws instead)
    bad_tls_config,         ///< tls_context::create: a CA, certificate or key file cannot be read or
                            ///< used; detail = the file and OpenSSL's reason
    tls_handshake_failed,   ///< the TLS handshake with the router failed (detail: the router's address,
                            ///< OpenSSL's reason and verdict, e.g. "certificate verify failed (SSL
                            ///< routines): hostname mismatch"), or the router refused the connection
                            ///< right after it, before validating it (TLS 1.3; e.g. no client certificate)
    reconnecting,           ///< the connection was lost and the session is reconnecting
                            ///< (session_options::reconnect): nothing was sent; call again after
                            ///< session_event_kind::restored. detail = the attempt under way
};

/// The category of client::errc ("moraine.client"). Convertible to std::error_code like any
/// boost::system::error_code (`std::error_code e = info.code;`).
const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

/// An error and the text that comes with it. Empty code = success.
struct error_info {
    boost::system::error_code code;
    /// permission_denied / cannot_create_session: the reason; unknown*: the text; user_exception:
    /// the type id; *_not_exist: "identity facet operation"; socket errors: the system message.
    std::string detail;

    /// True on failure (as error_code).
    explicit operator bool() const noexcept { return code.failed(); }
    /// "message: detail" (or just the message when there is no detail); "" on success.
    std::string message() const;
};

/// Builds an error_info from one of our codes.
inline error_info make_error(errc e, std::string detail = {}) { return {make_error_code(e), std::move(detail)}; }

}  // namespace moraine::client

template <>
struct boost::system::is_error_code_enum<moraine::client::errc> : std::true_type {};
