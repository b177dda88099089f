#include <moraine/net/local_reply.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <algorithm>

namespace moraine::net {

protocol::byte_buffer reply_void(std::int32_t request_id, protocol::encoding_version enc) {
    protocol::output_stream os(enc);
    os.write_empty_encapsulation(enc);
    protocol::byte_buffer out;
    protocol::write_reply_ok(out, request_id, os.view());
    return out;
}

protocol::byte_buffer reply_unknown_local(std::int32_t request_id, std::string_view text) {
    protocol::byte_buffer out;
    protocol::write_reply_unknown(out, request_id, protocol::reply_status::unknown_local_exception, text);
    return out;
}

protocol::byte_buffer reply_user_exception(std::int32_t request_id, protocol::encoding_version enc,
                                           std::string_view type_id, std::optional<std::string_view> reason,
                                           bool sliced) {
    protocol::output_stream members(enc);
    if (reason) members.write_string(*reason);
    protocol::byte_buffer encaps;
    protocol::write_user_exception_encaps(encaps, enc, type_id, members.view(), sliced);
    protocol::byte_buffer out;
    protocol::write_reply_user_exception(out, request_id, encaps);
    return out;
}

std::optional<protocol::byte_buffer> answer_object_op(const protocol::request_view& r,
                                                      std::span<const std::string_view> ids,
                                                      std::string_view most_derived, bool& malformed) {
    malformed = false;
    const auto enc = r.params.encoding;
    if (r.operation == "ice_ping") return reply_void(r.request_id, enc);
    if (r.operation == "ice_isA") {
        protocol::input_stream in(r.params.payload(), enc);
        const auto type_id = in.read_string();
        if (!in.ok()) {
            malformed = true;
            return std::nullopt;
        }
        const bool is_a = std::find(ids.begin(), ids.end(), type_id) != ids.end();
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) { os.write_bool(is_a); });
    }
    if (r.operation == "ice_id")
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) { os.write_string(most_derived); });
    if (r.operation == "ice_ids") {
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) {
            os.write_size(static_cast<std::int32_t>(ids.size()));
            for (auto id : ids) os.write_string(id);
        });
    }
    return std::nullopt;
}

protocol::byte_buffer reply_not_exist(const protocol::request_view& r, protocol::reply_status status) {
    protocol::byte_buffer out;
    protocol::write_reply_not_exist(out, r.request_id, status, r.id, r.facet, r.operation);
    return out;
}

}  // namespace moraine::net
