#include <moraine/client/call_result.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

namespace moraine::client {

namespace {
using protocol::reply_status;

call_result protocol_failure(const char* what) { return call_result::failure(make_error(errc::protocol_error, what)); }

errc not_exist_errc(reply_status s) noexcept {
    return s == reply_status::object_not_exist ? errc::object_not_exist
         : s == reply_status::facet_not_exist  ? errc::facet_not_exist
                                               : errc::operation_not_exist;
}

errc unknown_errc(reply_status s) noexcept {
    return s == reply_status::unknown_local_exception ? errc::unknown_local
         : s == reply_status::unknown_user_exception  ? errc::unknown_user
                                                      : errc::unknown;
}

/// The payload must be exactly one encapsulation (docs/ice-wire.md §6, statuses 0 and 1).
bool whole_encapsulation(protocol::byte_view payload) {
    protocol::input_stream in(payload);
    in.skip_encapsulation();
    return in.ok() && in.remaining() == 0;
}

call_result map_user_exception(const protocol::reply_view& r) {
    if (!whole_encapsulation(r.payload)) return protocol_failure("malformed user exception reply");
    auto ex = protocol::decode_user_exception(r.payload);
    if (!ex) return protocol_failure("undecodable user exception");
    call_result out{make_error(errc::user_exception, std::string(ex->type_id)), r.status, {}, {}};
    out.encaps.assign(r.payload.begin(), r.payload.end());
    return out;
}

call_result map_not_exist(const protocol::reply_view& r) {
    auto info = protocol::decode_not_exist(r.payload);
    if (!info) return protocol_failure("malformed not-exist reply");
    not_exist_info n{protocol::identity::from(info->id), std::string(info->facet), std::string(info->operation)};
    std::string detail = protocol::identity_to_string(info->id) + " facet '" + n.facet + "' operation '" + n.operation + "'";
    return call_result{make_error(not_exist_errc(r.status), std::move(detail)), r.status, {}, std::move(n)};
}

call_result map_unknown(const protocol::reply_view& r) {
    auto text = protocol::decode_unknown_text(r.payload);
    if (!text) return protocol_failure("malformed unknown-exception reply");
    return call_result{make_error(unknown_errc(r.status), std::string(*text)), r.status, {}, {}};
}

/// The `reason` string member of a Glacier2 session exception (first slice).
std::string reason_of(protocol::byte_view encaps) {
    auto ex = protocol::decode_user_exception(encaps);
    if (!ex) return {};
    protocol::input_stream in(ex->members);
    const auto reason = in.read_string();
    return in.ok() ? std::string(reason) : std::string();
}
}  // namespace

call_result map_reply(const protocol::reply_view& r) {
    switch (r.status) {
    case reply_status::ok:
        if (!whole_encapsulation(r.payload)) return protocol_failure("malformed OK reply");
        return call_result{{}, r.status, protocol::byte_buffer(r.payload.begin(), r.payload.end()), {}};
    case reply_status::user_exception: return map_user_exception(r);
    case reply_status::object_not_exist:
    case reply_status::facet_not_exist:
    case reply_status::operation_not_exist: return map_not_exist(r);
    case reply_status::unknown_local_exception:
    case reply_status::unknown_user_exception:
    case reply_status::unknown_exception: return map_unknown(r);
    }
    return protocol_failure("bad reply status");
}

error_info map_session_error(const call_result& r) {
    if (r.error.code != make_error_code(errc::user_exception)) return r.error;
    if (r.error.detail == "::Glacier2::PermissionDeniedException")
        return make_error(errc::permission_denied, reason_of(r.encaps));
    if (r.error.detail == "::Glacier2::CannotCreateSessionException")
        return make_error(errc::cannot_create_session, reason_of(r.encaps));
    return r.error;
}

bool needs_add_proxy(const call_result& r, protocol::identity_view target) noexcept {
    return r.status == reply_status::object_not_exist && r.not_exist && r.not_exist->operation == "ice_add_proxy" &&
           r.not_exist->id.view() == target;
}

}  // namespace moraine::client
