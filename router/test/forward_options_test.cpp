// Glacier2's `_fwd` letters and the `_ovrd` override key (docs/glacier2.md §5).
#include <moraine/router/forward_options.hpp>

#include <gtest/gtest.h>

namespace moraine::router {
namespace {

protocol::context_view ctx_of(std::vector<std::pair<std::string_view, std::string_view>> entries) {
    protocol::context_view c;
    c.entries = std::move(entries);
    return c;
}

TEST(forward_options, the_request_kind_without_fwd) {
    EXPECT_EQ(decide_forward(true, {}, false, false).kind, forward_kind::twoway);
    EXPECT_EQ(decide_forward(false, {}, false, false).kind, forward_kind::oneway);
    EXPECT_EQ(decide_forward(false, {}, true, false).kind, forward_kind::oneway);
    // AlwaysBatch turns oneways into batch oneways, in buffered mode only.
    EXPECT_EQ(decide_forward(false, {}, true, true).kind, forward_kind::batch_oneway);
    EXPECT_EQ(decide_forward(false, {}, false, true).kind, forward_kind::oneway);
    EXPECT_EQ(decide_forward(true, {}, true, true).kind, forward_kind::twoway);
}

TEST(forward_options, fwd_letters_apply_in_order) {
    EXPECT_EQ(decide_forward(true, ctx_of({{"_fwd", "o"}}), false, false).kind, forward_kind::oneway);
    EXPECT_EQ(decide_forward(false, ctx_of({{"_fwd", "t"}}), false, false).kind, forward_kind::twoway);
    EXPECT_EQ(decide_forward(true, ctx_of({{"_fwd", "O"}}), true, false).kind, forward_kind::batch_oneway);
    EXPECT_EQ(decide_forward(true, ctx_of({{"_fwd", "O"}}), false, false).kind, forward_kind::oneway);
    EXPECT_EQ(decide_forward(true, ctx_of({{"_fwd", "D"}}), true, false).kind, forward_kind::batch_datagram);
    EXPECT_EQ(decide_forward(true, ctx_of({{"_fwd", "D"}}), false, false).kind, forward_kind::datagram);
    EXPECT_EQ(decide_forward(true, ctx_of({{"_fwd", "o"}}), true, true).kind, forward_kind::batch_oneway);
    EXPECT_EQ(decide_forward(true, ctx_of({{"_fwd", "d"}}), true, true).kind, forward_kind::batch_datagram);
    EXPECT_EQ(decide_forward(false, ctx_of({{"_fwd", "Ot"}}), true, false).kind, forward_kind::twoway);
    const auto o = decide_forward(true, ctx_of({{"k", "v"}, {"_fwd", "szx?"}}), false, false);
    EXPECT_EQ(o.kind, forward_kind::twoway);
    EXPECT_TRUE(o.secure);
    EXPECT_TRUE(o.compress);
    EXPECT_EQ(o.unknown, "x?");
    EXPECT_TRUE(decide_forward(true, ctx_of({{"_fwd", "D"}}), true, false).is_batch());
    EXPECT_TRUE(decide_forward(true, ctx_of({{"_fwd", "D"}}), true, false).is_datagram());
}

forward_options kind(forward_kind k) {
    forward_options o;
    o.kind = k;
    return o;
}

TEST(forward_options, override_key_only_for_non_twoway_with_a_value) {
    const protocol::identity_view id{"clock", "cat"};
    const forward_options oneway = kind(forward_kind::oneway);
    const forward_options twoway = kind(forward_kind::twoway);
    EXPECT_EQ(override_key(ctx_of({}), id, "", oneway, "h:1"), "");
    EXPECT_EQ(override_key(ctx_of({{"_ovrd", ""}}), id, "", oneway, "h:1"), "");
    EXPECT_EQ(override_key(ctx_of({{"_ovrd", "k"}}), id, "", twoway, "h:1"), "");
    const auto k = override_key(ctx_of({{"_ovrd", "k"}}), id, "", oneway, "h:1");
    EXPECT_FALSE(k.empty());
    EXPECT_EQ(override_key(ctx_of({{"x", "y"}, {"_ovrd", "k"}}), id, "", oneway, "h:1"), k);
    // Another value, target, facet, peer or mode is another key.
    EXPECT_NE(override_key(ctx_of({{"_ovrd", "k2"}}), id, "", oneway, "h:1"), k);
    EXPECT_NE(override_key(ctx_of({{"_ovrd", "k"}}), {"clock2", "cat"}, "", oneway, "h:1"), k);
    EXPECT_NE(override_key(ctx_of({{"_ovrd", "k"}}), id, "f", oneway, "h:1"), k);
    EXPECT_NE(override_key(ctx_of({{"_ovrd", "k"}}), id, "", oneway, "h:2"), k);
    EXPECT_NE(override_key(ctx_of({{"_ovrd", "k"}}), id, "", kind(forward_kind::batch_oneway), "h:1"), k);
    // Fields cannot run into each other: ("ab","c") and ("a","bc") differ.
    EXPECT_NE(override_key(ctx_of({{"_ovrd", "k"}}), {"ab", "c"}, "", oneway, ""),
              override_key(ctx_of({{"_ovrd", "k"}}), {"a", "bc"}, "", oneway, ""));
}

}  // namespace
}  // namespace moraine::router
