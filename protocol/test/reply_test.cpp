#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/error.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/user_exception.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;
using test::to_hex;

byte_buffer message_bytes(const test::record& r) {
    auto b = test::bytes(r);
    boost::system::error_code ec;
    const auto f = parse_frame(b, limits{}, ec);
    EXPECT_TRUE(f);
    if (f && f->header.compression == compression_status::compressed) return *decompress_message(*f, limits{});
    return b;
}

byte_view body_of(const byte_buffer& m) { return byte_view(m).subspan(header_size); }

void expect_fields(const reply_view& rep, const test::record& r, byte_view body, const std::string& where) {
    SCOPED_TRACE(where);
    EXPECT_EQ(rep.request_id, test::num(r, "requestId"));
    EXPECT_EQ(static_cast<int>(rep.status), test::num(r, "replyStatus"));
    EXPECT_EQ(rep.payload.data(), body.data() + 5);
    switch (rep.status) {
    case reply_status::ok:
    case reply_status::user_exception: {
        const auto& result = r.at("result").as_object();
        input_stream in(rep.payload);
        const auto e = in.read_encapsulation();
        ASSERT_TRUE(in.ok());
        EXPECT_EQ(in.remaining(), 0u);
        EXPECT_EQ(e.bytes.data() - body.data(), result.at("offset").to_number<std::int64_t>());
        EXPECT_EQ(static_cast<std::int64_t>(e.bytes.size()), result.at("size").to_number<std::int64_t>());
        EXPECT_EQ(to_hex(e.payload()), test::str(result, "payloadHex"));
        break;
    }
    case reply_status::object_not_exist:
    case reply_status::facet_not_exist:
    case reply_status::operation_not_exist: {
        const auto info = decode_not_exist(rep.payload);
        ASSERT_TRUE(info);
        EXPECT_EQ(info->id.name, std::string_view(r.at("identity").at("name").as_string()));
        EXPECT_EQ(info->id.category, std::string_view(r.at("identity").at("category").as_string()));
        const auto& facet = r.at("facet").as_array();
        EXPECT_EQ(info->facet, facet.empty() ? std::string_view() : std::string_view(facet[0].as_string()));
        EXPECT_EQ(info->operation, test::str(r, "operation"));
        break;
    }
    default: {
        const auto text = decode_unknown_text(rep.payload);
        ASSERT_TRUE(text);
        EXPECT_EQ(*text, test::str(r, "text"));
    }
    }
}

TEST(reply, every_captured_reply_decodes_to_the_recorded_fields) {
    std::size_t n = 0;
    for (const auto& name : test::vector_names()) {
        for (const auto& r : test::load_vectors(name)) {
            if (!test::is_type(r, "reply")) continue;
            const auto msg = message_bytes(r);
            const auto rep = decode_reply(body_of(msg));
            ASSERT_TRUE(rep) << name;
            expect_fields(*rep, r, body_of(msg), name);
            ++n;
        }
    }
    EXPECT_GT(n, 60u);
}

TEST(reply, rewriting_with_the_same_id_reproduces_the_capture) {
    for (const auto& name : test::vector_names()) {
        for (const auto& r : test::load_vectors(name)) {
            if (!test::is_type(r, "reply") || test::num(r, "compress") == 2) continue;
            const auto msg = test::bytes(r);
            const auto rep = decode_reply(body_of(msg));
            ASSERT_TRUE(rep);
            byte_buffer out;
            EXPECT_EQ(write_reply_message(out, rep->request_id, *rep, static_cast<std::uint8_t>(test::num(r, "compress"))),
                      msg.size());
            EXPECT_EQ(to_hex(out), to_hex(msg)) << name;
        }
    }
}

// The router's relay of a back-end reply: the caller's request id, payload verbatim.
TEST(reply, relaying_reproduces_every_forwarded_reply) {
    std::size_t n = 0;
    for (const auto& name : test::vector_names()) {
        for (const auto& [in, out] : test::reply_relays(name)) {
            const auto msg = message_bytes(in);
            const auto rep = decode_reply(body_of(msg));
            ASSERT_TRUE(rep);
            byte_buffer buf;
            const auto compress = static_cast<std::uint8_t>(test::num(out, "compress"));
            write_reply_message(buf, static_cast<std::int32_t>(test::num(out, "requestId")), *rep,
                                compress == 2 ? 1 : compress);
            // A compressed capture is compared after decompression (header byte 9 = 1 then).
            EXPECT_EQ(to_hex(buf), to_hex(message_bytes(out))) << name;
            ++n;
        }
    }
    EXPECT_GE(n, 20u);
}

TEST(reply, glacier2_permission_denied_sliced) {
    const auto r = test::find_record("create-session-denied", [](auto& r) { return test::is_type(r, "reply"); });
    output_stream members;
    members.write_string("permission denied");
    byte_buffer encaps;
    write_user_exception_encaps(encaps, encoding_1_1, "::Glacier2::PermissionDeniedException", members.view(), true);
    byte_buffer out;
    write_reply_user_exception(out, static_cast<std::int32_t>(test::num(r, "requestId")), encaps);
    EXPECT_EQ(to_hex(out), test::str(r, "hex"));
}

TEST(reply, not_in_routing_table_is_object_not_exist_ice_add_proxy) {
    const auto r = test::find_record("not-in-routing-table", [](auto& r) { return test::is_type(r, "reply"); });
    byte_buffer out;
    write_reply_not_exist(out, 2, reply_status::object_not_exist, {"ghost", ""}, "", "ice_add_proxy");
    EXPECT_EQ(to_hex(out), test::str(r, "hex"));
}

TEST(reply, filter_rejection_carries_the_request_fields) {
    const auto r = test::find_record("filter-category-reject",
                                     [](auto& r) { return test::is_type(r, "reply") && test::num(r, "replyStatus") == 2; });
    byte_buffer out;
    write_reply_not_exist(out, 8, reply_status::object_not_exist, {"hello", ""}, "", "sayHello");
    EXPECT_EQ(to_hex(out), test::str(r, "hex"));
}

TEST(reply, unknown_local_exception_text) {
    const auto r = test::find_record("backend-down", [](auto& r) { return test::is_type(r, "reply") && test::num(r, "replyStatus") == 5; });
    byte_buffer out;
    write_reply_unknown(out, 20, reply_status::unknown_local_exception, test::str(r, "text"));
    EXPECT_EQ(to_hex(out), test::str(r, "hex"));
}

TEST(reply, ok_replies) {
    byte_buffer out;
    write_reply_ok(out, 15, from_hex("060000000101"));  // callback: OK, void
    EXPECT_EQ(to_hex(out), "49636550010001000200190000000f00000000060000000101");
    const auto routed = test::find_record("routed-twoway", [](auto& r) { return test::is_type(r, "reply"); });
    out.clear();
    write_reply_ok(out, 6, from_hex("0a000000010100000801"));  // getClientProxy: nil + hasRoutingTable
    EXPECT_EQ(to_hex(out), test::str(routed, "hex"));
}

TEST(reply, long_unknown_text_uses_the_long_size_form) {
    byte_buffer out;
    const std::string text(300, 'x');
    write_reply_unknown(out, 1, reply_status::unknown_exception, text);
    const auto rep = decode_reply(body_of(out));
    ASSERT_TRUE(rep);
    EXPECT_EQ(rep->status, reply_status::unknown_exception);
    EXPECT_EQ(to_hex(rep->payload.first(5)), "ff2c010000");
    EXPECT_EQ(*decode_unknown_text(rep->payload), text);
}

TEST(reply, errors) {
    EXPECT_EQ(decode_reply(from_hex("01000000")).error(), errc::out_of_bounds);
    EXPECT_EQ(decode_reply(from_hex("0100000008")).error(), errc::bad_reply_status);
    EXPECT_TRUE(decode_reply(from_hex("0100000007")));
    EXPECT_EQ(decode_not_exist(from_hex("0161" "00" "02")).error(), errc::bad_facet);
    EXPECT_EQ(decode_not_exist(from_hex("0161")).error(), errc::out_of_bounds);
    EXPECT_EQ(decode_unknown_text(from_hex("05616263")).error(), errc::out_of_bounds);
}

}  // namespace
}  // namespace moraine::protocol
