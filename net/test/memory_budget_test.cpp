// The shards' memory budget: per-shard slots summed, transit counted until received, hysteresis edges.
#include <moraine/net/memory_budget.hpp>

#include <gtest/gtest.h>

using moraine::net::memory_budget;

TEST(memory_budget, sums_queued_bytes_and_events_in_transit) {
    memory_budget b(3, 1000);
    b.set_queued(0, 100);
    b.set_queued(2, 50);
    EXPECT_EQ(b.held(), 150u);
    b.sent(1, 300);  // shard 1 posted 300 bytes of events to the others
    EXPECT_EQ(b.held(), 450u);
    b.received(0, 150);
    b.received(2, 150);  // both took theirs off their queues
    EXPECT_EQ(b.held(), 150u);
    b.set_queued(0, 0);  // a slot holds the shard's current figure, not a sum of updates
    EXPECT_EQ(b.held(), 50u);
}

TEST(memory_budget, spent_at_the_budget_and_low_below_three_quarters) {
    memory_budget b(1, 1000);
    EXPECT_EQ(b.low_watermark(), 750u);
    b.set_queued(0, 999);
    EXPECT_FALSE(b.spent());
    EXPECT_FALSE(b.below_low());
    b.set_queued(0, 1000);
    EXPECT_TRUE(b.spent());
    b.set_queued(0, 750);
    EXPECT_FALSE(b.spent());
    EXPECT_FALSE(b.below_low());  // between the marks: a held reader stays held
    b.set_queued(0, 749);
    EXPECT_TRUE(b.below_low());
}

TEST(memory_budget, zero_is_no_budget) {
    memory_budget b(2, 0);
    b.set_queued(0, std::size_t(1) << 40);
    EXPECT_FALSE(b.spent());
    EXPECT_TRUE(b.below_low());
}

TEST(memory_budget, a_receipt_seen_before_its_send_never_goes_negative) {
    memory_budget b(2, 1000);
    b.received(1, 200);
    EXPECT_EQ(b.held(), 0u);
    b.sent(0, 200);
    EXPECT_EQ(b.held(), 0u);
}
