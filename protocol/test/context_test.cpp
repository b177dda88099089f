#include <moraine/protocol/context.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/request.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

TEST(context, find) {
    context_view ctx;
    ctx.entries = {{"_fwd", "o"}, {"k", "v"}};
    EXPECT_EQ(ctx.find("_fwd"), "o");
    EXPECT_EQ(ctx.find("k"), "v");
    EXPECT_FALSE(ctx.find("missing"));
    EXPECT_FALSE(ctx.empty());
    EXPECT_TRUE(context_view{}.empty());
}

TEST(context, duplicate_key_last_wins_like_ice_map_unmarshaling) {
    context_view ctx;
    ctx.entries = {{"k", "1"}, {"k", "2"}};
    EXPECT_EQ(ctx.find("k"), "2");
}

TEST(context, decoded_from_captured_request_matches_record) {
    for (const auto& r : test::load_vectors("forward-context")) {
        if (!test::is_type(r, "request")) continue;
        const auto b = test::bytes(r);
        const auto req = decode_request(byte_view(b).subspan(header_size));
        ASSERT_TRUE(req);
        const auto& expected = r.at("context").as_object();
        EXPECT_EQ(req->context.entries.size(), expected.size());
        for (const auto& [k, v] : expected) EXPECT_EQ(req->context.find(k), std::string_view(v.as_string()));
    }
}

}  // namespace
}  // namespace moraine::protocol
