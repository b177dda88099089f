#include <moraine/client/params.hpp>
#include <moraine/client/servant_map.hpp>
#include <moraine/protocol/reply.hpp>

#include <gtest/gtest.h>
#include <stdexcept>

namespace moraine::client {
namespace {

using protocol::reply_status;

struct servant_map_test : ::testing::Test {
    servant_map servants;
    protocol::byte_buffer params = encode_string_params("ring");
    std::string got;

    servant_map_test() {
        servants.add("cb", [this](const incoming_request& r) {
            if (r.operation == "boom") throw std::runtime_error("servant blew up");
            got = decode_string_result(r.params.bytes).value_or("?");
            return dispatch_result::ok();
        });
    }
    incoming_request request(std::string_view category, std::string_view name, std::string_view op = "ping",
                             std::string_view facet = {}) {
        incoming_request r;
        r.id = {name, category};
        r.facet = facet;
        r.operation = op;
        r.params = {params, protocol::encoding_1_1};
        return r;
    }
};

TEST_F(servant_map_test, dispatches_to_the_named_servant_in_the_session_category) {
    const auto r = servants.dispatch("CAT", request("CAT", "cb"));
    EXPECT_EQ(r.status, reply_status::ok);
    EXPECT_EQ(got, "ring");
}

TEST_F(servant_map_test, unknown_identity_is_object_not_exist) {
    EXPECT_EQ(servants.dispatch("CAT", request("CAT", "other")).status, reply_status::object_not_exist);
    EXPECT_EQ(servants.dispatch("CAT", request("OTHER", "cb")).status, reply_status::object_not_exist);
    EXPECT_TRUE(got.empty());
}

TEST_F(servant_map_test, facet_ping_and_exceptions) {
    EXPECT_EQ(servants.dispatch("CAT", request("CAT", "cb", "ping", "f")).status, reply_status::facet_not_exist);
    EXPECT_EQ(servants.dispatch("CAT", request("CAT", "cb", "ice_ping")).status, reply_status::ok);
    EXPECT_TRUE(got.empty()) << "ice_ping is answered without the servant";
    const auto r = servants.dispatch("CAT", request("CAT", "cb", "boom"));
    EXPECT_EQ(r.status, reply_status::unknown_exception);
    EXPECT_EQ(r.text, "servant blew up");
}

TEST_F(servant_map_test, remove) {
    EXPECT_TRUE(servants.remove("cb"));
    EXPECT_FALSE(servants.remove("cb"));
    EXPECT_EQ(servants.dispatch("CAT", request("CAT", "cb")).status, reply_status::object_not_exist);
}

TEST_F(servant_map_test, replies_carry_the_request_fields) {
    const auto req = request("CAT", "nobody", "ping");
    protocol::byte_buffer msg;
    write_dispatch_reply(msg, 7, req, dispatch_result::not_exist(reply_status::object_not_exist));
    auto reply = protocol::decode_reply(protocol::byte_view(msg).subspan(protocol::header_size));
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->request_id, 7);
    auto info = protocol::decode_not_exist(reply->payload);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->id.name, "nobody");
    EXPECT_EQ(info->id.category, "CAT");
    EXPECT_EQ(info->operation, "ping");

    msg.clear();
    write_dispatch_reply(msg, 8, req, dispatch_result::ok());
    reply = protocol::decode_reply(protocol::byte_view(msg).subspan(protocol::header_size));
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, reply_status::ok);
    EXPECT_EQ(protocol::byte_buffer(reply->payload.begin(), reply->payload.end()), empty_params());
}

}  // namespace
}  // namespace moraine::client
