// moved_sessions: a session handed over is in transit (its callbacks park, at most max_parked),
// then taken (callbacks relayed, none park) or come back (parked ones handed out, forgotten).
#include <moraine/router/moved_sessions.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

router::parked_callback numbered(std::int32_t id) {
    router::parked_callback c;
    c.back.request_id = id;
    return c;
}

}  // namespace

TEST(moved_sessions, a_session_in_transit_parks_callbacks_in_order_until_taken) {
    router::moved_sessions m;
    EXPECT_FALSE(m.contains("cat"));
    m.leave("cat");
    EXPECT_TRUE(m.contains("cat"));
    EXPECT_FALSE(m.taken("cat"));
    for (std::int32_t id = 1; id <= 3; ++id) {
        auto c = numbered(id);
        ASSERT_TRUE(m.park("cat", c));
    }
    EXPECT_EQ(m.parked(), 3u);
    const auto out = m.take("cat");
    ASSERT_EQ(out.size(), 3u);
    for (std::int32_t id = 1; id <= 3; ++id) EXPECT_EQ(out[static_cast<std::size_t>(id - 1)].back.request_id, id);
    EXPECT_TRUE(m.taken("cat"));
    EXPECT_EQ(m.parked(), 0u);
    auto late = numbered(4);
    EXPECT_FALSE(m.park("cat", late)) << "a taken session's callbacks are relayed, not parked";
    EXPECT_EQ(late.back.request_id, 4) << "a refused park leaves the callback to the caller";
}

TEST(moved_sessions, parks_at_most_max_parked_per_session) {
    router::moved_sessions m;
    m.leave("a");
    m.leave("b");
    for (std::size_t i = 0; i < router::moved_sessions::max_parked; ++i) {
        auto c = numbered(static_cast<std::int32_t>(i + 1));
        ASSERT_TRUE(m.park("a", c));
    }
    auto over = numbered(1000);
    EXPECT_FALSE(m.park("a", over));
    auto other = numbered(7);
    EXPECT_TRUE(m.park("b", other)) << "the limit is per session";
    EXPECT_EQ(m.parked(), router::moved_sessions::max_parked + 1);
}

TEST(moved_sessions, a_session_that_comes_back_hands_out_its_callbacks_and_is_forgotten) {
    router::moved_sessions m;
    m.leave("cat");
    auto c = numbered(9);
    ASSERT_TRUE(m.park("cat", c));
    const auto out = m.come_back("cat");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].back.request_id, 9);
    EXPECT_FALSE(m.contains("cat"));
    EXPECT_EQ(m.parked(), 0u);
    EXPECT_TRUE(m.come_back("cat").empty());
    auto d = numbered(10);
    EXPECT_FALSE(m.park("unknown", d)) << "only sessions in transit park";
}

TEST(moved_sessions, leaving_again_keeps_what_is_parked) {
    router::moved_sessions m;
    m.leave("cat");
    auto c = numbered(1);
    ASSERT_TRUE(m.park("cat", c));
    m.leave("cat");
    EXPECT_EQ(m.parked(), 1u);
    EXPECT_FALSE(m.taken("cat"));
    EXPECT_EQ(m.take("cat").size(), 1u);
}
