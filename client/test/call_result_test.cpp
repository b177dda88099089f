#include <moraine/client/call_result.hpp>
#include <moraine/client/params.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

using protocol::reply_status;

/// Encodes a reply message with the codec, then decodes its body back into a view over `msg`.
protocol::reply_view decoded(const protocol::byte_buffer& msg) {
    auto r = protocol::decode_reply(protocol::byte_view(msg).subspan(protocol::header_size));
    EXPECT_TRUE(r.has_value());
    return *r;
}

protocol::byte_buffer string_members(std::string_view s) {
    protocol::output_stream out;
    out.write_string(s);
    return out.take();
}

TEST(call_result, ok_keeps_the_encapsulation) {
    protocol::byte_buffer msg;
    const auto encaps = encode_string_params("hello bob");
    protocol::write_reply_ok(msg, 8, encaps);
    const auto r = map_reply(decoded(msg));
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.status, reply_status::ok);
    EXPECT_EQ(r.encaps, encaps);
    EXPECT_EQ(decode_string_result(r.encaps), "hello bob");
}

TEST(call_result, user_exception_has_type_id_and_encapsulation) {
    protocol::byte_buffer encaps, msg;
    const auto why = string_members("kaboom");
    protocol::write_user_exception_encaps(encaps, protocol::encoding_1_1, "::Demo::Boom", why, false);
    protocol::write_reply_user_exception(msg, 3, encaps);
    const auto r = map_reply(decoded(msg));
    EXPECT_EQ(r.error.code, errc::user_exception);
    EXPECT_EQ(r.error.detail, "::Demo::Boom");
    EXPECT_EQ(r.encaps, encaps);
    EXPECT_EQ(map_session_error(r).code, errc::user_exception) << "not a Glacier2 session exception";
}

TEST(call_result, glacier2_permission_denied_reason) {
    // Glacier2's ops are format:sliced (docs/ice-wire.md §8, vector create-session-denied).
    protocol::byte_buffer encaps, msg;
    protocol::write_user_exception_encaps(encaps, protocol::encoding_1_1, "::Glacier2::PermissionDeniedException",
                                          string_members("permission denied"), true);
    protocol::write_reply_user_exception(msg, 2, encaps);
    const auto e = map_session_error(map_reply(decoded(msg)));
    EXPECT_EQ(e.code, errc::permission_denied);
    EXPECT_EQ(e.detail, "permission denied");
    EXPECT_EQ(e.message(), "permission denied: permission denied");
}

TEST(call_result, glacier2_cannot_create_session_reason_in_1_0) {
    protocol::byte_buffer encaps, msg;
    protocol::write_user_exception_encaps(encaps, protocol::encoding_1_0, "::Glacier2::CannotCreateSessionException",
                                          string_members("session exists"), true);
    protocol::write_reply_user_exception(msg, 2, encaps);
    const auto e = map_session_error(map_reply(decoded(msg)));
    EXPECT_EQ(e.code, errc::cannot_create_session);
    EXPECT_EQ(e.detail, "session exists");
}

TEST(call_result, not_exist_statuses) {
    const protocol::identity id{"hello", ""};
    const std::pair<reply_status, errc> cases[] = {{reply_status::object_not_exist, errc::object_not_exist},
                                                   {reply_status::facet_not_exist, errc::facet_not_exist},
                                                   {reply_status::operation_not_exist, errc::operation_not_exist}};
    for (auto [status, code] : cases) {
        protocol::byte_buffer msg;
        protocol::write_reply_not_exist(msg, 5, status, id.view(), "", "sayHello");
        const auto r = map_reply(decoded(msg));
        EXPECT_EQ(r.error.code, code);
        ASSERT_TRUE(r.not_exist);
        EXPECT_EQ(r.not_exist->id, id);
        EXPECT_EQ(r.not_exist->operation, "sayHello");
        EXPECT_NE(r.error.detail.find("sayHello"), std::string::npos);
        EXPECT_FALSE(needs_add_proxy(r, id.view()));
    }
}

TEST(call_result, ice_add_proxy_means_readd_for_that_identity_only) {
    const protocol::identity id{"hello", ""};
    protocol::byte_buffer msg;
    protocol::write_reply_not_exist(msg, 5, reply_status::object_not_exist, id.view(), "", "ice_add_proxy");
    const auto r = map_reply(decoded(msg));
    EXPECT_TRUE(needs_add_proxy(r, id.view()));
    EXPECT_FALSE(needs_add_proxy(r, protocol::identity_view{"other", ""}));
    // FacetNotExist with that operation is not Glacier2's routing-table answer.
    protocol::byte_buffer facet;
    protocol::write_reply_not_exist(facet, 5, reply_status::facet_not_exist, id.view(), "", "ice_add_proxy");
    EXPECT_FALSE(needs_add_proxy(map_reply(decoded(facet)), id.view()));
}

TEST(call_result, unknown_statuses_keep_the_text) {
    const std::pair<reply_status, errc> cases[] = {{reply_status::unknown_local_exception, errc::unknown_local},
                                                   {reply_status::unknown_user_exception, errc::unknown_user},
                                                   {reply_status::unknown_exception, errc::unknown}};
    for (auto [status, code] : cases) {
        protocol::byte_buffer msg;
        protocol::write_reply_unknown(msg, 9, status, "connection refused: Connection refused");
        const auto r = map_reply(decoded(msg));
        EXPECT_EQ(r.error.code, code);
        EXPECT_EQ(r.error.detail, "connection refused: Connection refused");
    }
}

TEST(call_result, malformed_payload_is_a_protocol_error) {
    protocol::reply_view v;
    v.request_id = 1;
    v.status = reply_status::ok;
    const std::byte junk[] = {std::byte{0x20}, std::byte{0}, std::byte{0}};
    v.payload = junk;
    EXPECT_EQ(map_reply(v).error.code, errc::protocol_error);
    v.status = reply_status::object_not_exist;
    EXPECT_EQ(map_reply(v).error.code, errc::protocol_error);
}

TEST(error, converts_to_std_error_code) {
    const std::error_code e = make_error_code(errc::timeout);
    EXPECT_TRUE(e);
    EXPECT_EQ(e.message(), "timed out");
    EXPECT_FALSE(error_info{});
}

}  // namespace
}  // namespace moraine::client
