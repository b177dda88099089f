// local_reply: the replies the router makes itself. Each is decoded back with the protocol/
// codec: void and results replies, UnknownLocalException text, user exceptions (plain and
// sliced), the Ice::Object operations and the not-exist replies.
#include "loop_harness.hpp"

#include <moraine/net/local_reply.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

#include <array>

using namespace moraine;

namespace {

constexpr std::array<std::string_view, 2> ids{"::Glacier2::Router", "::Ice::Object"};

protocol::input_stream results(const protocol::reply_view& r) {
    protocol::input_stream in(r.payload);
    auto e = in.read_encapsulation();
    EXPECT_TRUE(in.ok());
    EXPECT_EQ(in.remaining(), 0u);
    return protocol::input_stream(e.payload(), e.encoding);
}

std::optional<protocol::byte_buffer> ask(const protocol::byte_buffer& msg, bool& malformed) {
    return net::answer_object_op(test::request_of(msg), ids, "::Glacier2::Router", malformed);
}

}  // namespace

TEST(local_reply, reply_void_is_ok_with_an_empty_encapsulation_in_the_requests_encoding) {
    for (auto enc : {protocol::encoding_1_0, protocol::encoding_1_1}) {
        const auto m = net::reply_void(12, enc);
        const auto r = test::reply_of(m);
        EXPECT_EQ(r.request_id, 12);
        EXPECT_EQ(r.status, protocol::reply_status::ok);
        protocol::input_stream in(r.payload);
        auto e = in.read_encapsulation();
        ASSERT_TRUE(in.ok());
        EXPECT_EQ(e.encoding, enc);
        EXPECT_TRUE(e.payload().empty());
    }
}

TEST(local_reply, reply_ok_carries_what_the_writer_wrote) {
    const auto m = net::reply_ok(3, protocol::encoding_1_1, [](protocol::output_stream& os) {
        os.write_int(99);
        os.write_string("x");
    });
    auto in = results(test::reply_of(m));
    EXPECT_EQ(in.read_int(), 99);
    EXPECT_EQ(in.read_string(), "x");
    EXPECT_TRUE(in.ok());
}

TEST(local_reply, reply_unknown_local_carries_the_text) {
    const auto m = net::reply_unknown_local(4, "::Ice::ConnectionRefusedException");  // r borrows it
    const auto r = test::reply_of(m);
    EXPECT_EQ(r.status, protocol::reply_status::unknown_local_exception);
    EXPECT_EQ(protocol::decode_unknown_text(r.payload).value(), "::Ice::ConnectionRefusedException");
}

TEST(local_reply, reply_user_exception_names_the_type_and_reason) {
    for (bool sliced : {false, true}) {
        const auto m = net::reply_user_exception(6, protocol::encoding_1_1, "::Glacier2::PermissionDeniedException",
                                                 "bad password", sliced);
        const auto r = test::reply_of(m);
        EXPECT_EQ(r.status, protocol::reply_status::user_exception);
        auto ex = protocol::decode_user_exception(r.payload);
        ASSERT_TRUE(ex) << "sliced=" << sliced;
        EXPECT_EQ(ex->type_id, "::Glacier2::PermissionDeniedException");
        protocol::input_stream in(ex->members);
        EXPECT_EQ(in.read_string(), "bad password");
    }
    const auto bare = net::reply_user_exception(6, protocol::encoding_1_1, "::X", std::nullopt, false);
    const auto none = test::reply_of(bare);
    auto ex = protocol::decode_user_exception(none.payload);
    ASSERT_TRUE(ex);
    EXPECT_TRUE(ex->members.empty());
}

TEST(local_reply, answer_object_op_serves_ping_isA_id_and_ids) {
    bool malformed = true;
    auto pong = ask(test::request_message(1, {"router", "Glacier2"}, "ice_ping", test::empty_encaps()), malformed);
    ASSERT_TRUE(pong);
    EXPECT_FALSE(malformed);
    EXPECT_EQ(test::reply_of(*pong).status, protocol::reply_status::ok);

    auto is_a = [&](std::string_view type) {
        auto params = test::encaps([&](protocol::output_stream& os) { os.write_string(type); });
        auto m = ask(test::request_message(2, {"router", "Glacier2"}, "ice_isA", params), malformed);
        EXPECT_TRUE(m);
        return results(test::reply_of(*m)).read_bool();
    };
    EXPECT_TRUE(is_a("::Ice::Object"));
    EXPECT_FALSE(is_a("::Other"));

    auto id = ask(test::request_message(3, {"router", "Glacier2"}, "ice_id", test::empty_encaps()), malformed);
    ASSERT_TRUE(id);
    EXPECT_EQ(results(test::reply_of(*id)).read_string(), "::Glacier2::Router");

    auto all = ask(test::request_message(4, {"router", "Glacier2"}, "ice_ids", test::empty_encaps()), malformed);
    ASSERT_TRUE(all);
    auto in = results(test::reply_of(*all));
    ASSERT_EQ(in.read_size(), 2);
    EXPECT_EQ(in.read_string(), "::Glacier2::Router");
    EXPECT_EQ(in.read_string(), "::Ice::Object");
}

TEST(local_reply, answer_object_op_leaves_other_operations_and_flags_bad_params) {
    bool malformed = true;
    EXPECT_FALSE(ask(test::request_message(1, {"router", "Glacier2"}, "createSession", test::empty_encaps()), malformed));
    EXPECT_FALSE(malformed);
    EXPECT_FALSE(ask(test::request_message(1, {"router", "Glacier2"}, "ice_isA", test::empty_encaps()), malformed));
    EXPECT_TRUE(malformed) << "ice_isA without its type id";
}

TEST(local_reply, reply_not_exist_echoes_identity_facet_and_operation) {
    const auto msg = test::request_message(8, {"obj", "cat"}, "doIt", test::empty_encaps(), 0, "fct");
    const auto reply = net::reply_not_exist(test::request_of(msg), protocol::reply_status::facet_not_exist);
    const auto r = test::reply_of(reply);  // a loan of `reply`
    EXPECT_EQ(r.request_id, 8);
    EXPECT_EQ(r.status, protocol::reply_status::facet_not_exist);
    auto info = protocol::decode_not_exist(r.payload);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->id.name, "obj");
    EXPECT_EQ(info->id.category, "cat");
    EXPECT_EQ(info->facet, "fct");
    EXPECT_EQ(info->operation, "doIt");
}
