#include <moraine/client/servant.hpp>

#include <moraine/client/params.hpp>
#include <moraine/protocol/user_exception.hpp>

namespace moraine::client {

dispatch_result dispatch_result::ok(protocol::byte_buffer encaps) {
    return dispatch_result{protocol::reply_status::ok, std::move(encaps), {}};
}

dispatch_result dispatch_result::user_exception(std::string_view type_id, protocol::byte_view members) {
    dispatch_result r{protocol::reply_status::user_exception, {}, {}};
    protocol::write_user_exception_encaps(r.encaps, protocol::encoding_1_1, type_id, members, false);
    return r;
}

dispatch_result dispatch_result::not_exist(protocol::reply_status status) {
    return dispatch_result{status, {}, {}};
}

dispatch_result dispatch_result::unknown(protocol::reply_status status, std::string text) {
    return dispatch_result{status, {}, std::move(text)};
}

void write_dispatch_reply(protocol::byte_buffer& out, std::int32_t request_id, const incoming_request& req,
                          const dispatch_result& r) {
    using protocol::reply_status;
    switch (r.status) {
    case reply_status::ok:
        protocol::write_reply_ok(out, request_id, r.encaps.empty() ? empty_params(req.params.encoding) : r.encaps);
        return;
    case reply_status::user_exception:
        protocol::write_reply_user_exception(out, request_id, r.encaps);
        return;
    case reply_status::object_not_exist:
    case reply_status::facet_not_exist:
    case reply_status::operation_not_exist:
        protocol::write_reply_not_exist(out, request_id, r.status, req.id, req.facet, req.operation);
        return;
    case reply_status::unknown_local_exception:
    case reply_status::unknown_user_exception:
    case reply_status::unknown_exception:
        protocol::write_reply_unknown(out, request_id, r.status, r.text);
        return;
    }
}

}  // namespace moraine::client
