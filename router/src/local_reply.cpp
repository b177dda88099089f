#include <moraine/router/local_reply.hpp>

#include <moraine/protocol/user_exception.hpp>

namespace moraine::router {

protocol::byte_buffer reply_void(std::int32_t request_id, protocol::encoding_version enc) {
    protocol::output_stream os(enc);
    os.write_empty_encapsulation(enc);
    protocol::byte_buffer out;
    protocol::write_reply_ok(out, request_id, os.view());
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

}  // namespace moraine::router
