#pragma once
// The outcome of a twoway invocation and its mapping from a reply (docs/ice-wire.md §6).
#include <moraine/client/error.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/reply.hpp>

#include <optional>
#include <string>

namespace moraine::client {

/// Identity, facet and operation of a status 2/3/4 reply (ObjectNotExist & co.), owned.
struct not_exist_info {
    protocol::identity id;
    std::string facet;
    std::string operation;
};

/// What a twoway call completed with. Owned: it outlives the connection's buffers.
struct call_result {
    /// Empty when a reply with status OK arrived; else why not (errc, or a socket error).
    error_info error;
    /// The reply status; meaningful only when a reply arrived (not for timeout, connection_lost...).
    protocol::reply_status status = protocol::reply_status::ok;
    /// OK: the results encapsulation (size, version, payload); user exception: the exception's
    /// encapsulation; otherwise empty.
    protocol::byte_buffer encaps;
    /// Set for statuses 2, 3 and 4.
    std::optional<not_exist_info> not_exist;

    bool ok() const noexcept { return !error; }
    /// A result that never reached the wire or got no reply.
    static call_result failure(error_info e) { return call_result{std::move(e), {}, {}, {}}; }
};

/// Maps a decoded reply onto a call_result: status 0 → ok with the encapsulation; 1 →
/// errc::user_exception, detail = type id (errc::protocol_error if the exception cannot be
/// decoded); 2/3/4 → *_not_exist with not_exist set; 5/6/7 → unknown_local/unknown_user/unknown
/// with the text. A malformed payload gives errc::protocol_error. Pure; copies the payload.
call_result map_reply(const protocol::reply_view& r);

/// Glacier2 session errors: a user exception `::Glacier2::PermissionDeniedException` or
/// `::Glacier2::CannotCreateSessionException` becomes errc::permission_denied /
/// errc::cannot_create_session with the exception's `reason` as detail (docs/glacier2.md §4).
/// Any other result's error is returned as is.
error_info map_session_error(const call_result& r);

/// True if `r` is Glacier2's "not in my routing table" answer for `target`: ObjectNotExist
/// with operation "ice_add_proxy" (docs/ice-wire.md §10). The client then re-adds the proxy
/// and retries the call once.
bool needs_add_proxy(const call_result& r, protocol::identity_view target) noexcept;

}  // namespace moraine::client
