// servant: what a client-side servant answers and how it goes on the wire. Checked: each
// dispatch_result factory and write_dispatch_reply's reply for it, decoded with protocol/:
// OK with results or void (in the request's encoding), user exceptions, the not-exist replies
// echoing identity / facet / operation, and Unknown*Exception texts.
#include <moraine/client/params.hpp>
#include <moraine/client/servant.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

struct fixture_request {
    protocol::byte_buffer params = empty_params();
    incoming_request req;
    fixture_request() {
        req.id = {"obj", "cat"};
        req.facet = "f";
        req.operation = "doIt";
        protocol::input_stream in(params);
        req.params = in.read_encapsulation();
    }
};

protocol::reply_view reply(const protocol::byte_buffer& message) {
    boost::system::error_code ec;
    auto f = protocol::parse_frame(message, protocol::limits{0}, ec);
    EXPECT_TRUE(f && f->size() == message.size());
    auto r = protocol::decode_reply(f->body());
    EXPECT_TRUE(r);
    return *r;
}

TEST(servant, ok_with_results_and_void) {
    fixture_request f;
    protocol::byte_buffer out;
    write_dispatch_reply(out, 7, f.req, dispatch_result::ok(encode_string_params("done")));
    auto r = reply(out);
    EXPECT_EQ(r.request_id, 7);
    EXPECT_EQ(r.status, protocol::reply_status::ok);
    protocol::input_stream in(r.payload);
    auto e = in.read_encapsulation();
    protocol::input_stream body(e.payload(), e.encoding);
    EXPECT_EQ(body.read_string(), "done");

    protocol::byte_buffer v;
    write_dispatch_reply(v, 8, f.req, dispatch_result::ok());
    auto rv = reply(v);
    EXPECT_EQ(rv.status, protocol::reply_status::ok);
    protocol::input_stream vin(rv.payload);
    auto ve = vin.read_encapsulation();
    EXPECT_TRUE(vin.ok());
    EXPECT_TRUE(ve.payload().empty()) << "void: an empty encapsulation";
}

TEST(servant, user_exception_carries_type_and_members) {
    fixture_request f;
    protocol::output_stream members;
    members.write_string("boom reason");
    protocol::byte_buffer out;
    write_dispatch_reply(out, 3, f.req, dispatch_result::user_exception("::Demo::Boom", members.view()));
    auto r = reply(out);
    EXPECT_EQ(r.status, protocol::reply_status::user_exception);
    auto ex = protocol::decode_user_exception(r.payload);
    ASSERT_TRUE(ex);
    EXPECT_EQ(ex->type_id, "::Demo::Boom");
    protocol::input_stream in(ex->members);
    EXPECT_EQ(in.read_string(), "boom reason");
}

TEST(servant, not_exist_echoes_the_request) {
    fixture_request f;
    for (auto status : {protocol::reply_status::object_not_exist, protocol::reply_status::facet_not_exist,
                        protocol::reply_status::operation_not_exist}) {
        protocol::byte_buffer out;
        write_dispatch_reply(out, 4, f.req, dispatch_result::not_exist(status));
        auto r = reply(out);
        EXPECT_EQ(r.status, status);
        auto info = protocol::decode_not_exist(r.payload);
        ASSERT_TRUE(info);
        EXPECT_EQ(info->id.name, "obj");
        EXPECT_EQ(info->id.category, "cat");
        EXPECT_EQ(info->facet, "f");
        EXPECT_EQ(info->operation, "doIt");
    }
}

TEST(servant, unknown_exceptions_carry_their_text) {
    fixture_request f;
    protocol::byte_buffer out;
    write_dispatch_reply(out, 5, f.req, dispatch_result::unknown(protocol::reply_status::unknown_exception, "kaput"));
    auto r = reply(out);
    EXPECT_EQ(r.status, protocol::reply_status::unknown_exception);
    EXPECT_EQ(protocol::decode_unknown_text(r.payload).value(), "kaput");
}

}  // namespace
}  // namespace moraine::client
