// budget_hold: a reader's hysteresis against the shards' memory budget, and the one count per hold.
#include <moraine/net/budget_hold.hpp>

#include <moraine/net/memory_budget.hpp>

#include <gtest/gtest.h>

#include <type_traits>

using moraine::net::budget_hold;
using moraine::net::memory_budget;

static_assert(sizeof(budget_hold) == 1, "one byte beside the connection's other flags");
static_assert(std::is_trivially_copyable_v<budget_hold>);

TEST(budget_hold, holds_at_the_budget_and_releases_below_three_quarters) {
    memory_budget b(1, 1000);
    budget_hold h;
    b.set_queued(0, 999);
    EXPECT_FALSE(h.update(b));
    EXPECT_FALSE(h.held());
    b.set_queued(0, 1000);
    EXPECT_TRUE(h.update(b));  // free → held: counted once
    EXPECT_TRUE(h.held());
    EXPECT_FALSE(h.update(b));  // still held: not counted again
    EXPECT_TRUE(h.held());
    b.set_queued(0, 750);  // below the budget, not below the low watermark
    EXPECT_FALSE(h.update(b));
    EXPECT_TRUE(h.held());
    b.set_queued(0, 749);
    EXPECT_FALSE(h.update(b));
    EXPECT_FALSE(h.held());
    b.set_queued(0, 800);  // free again: only the budget holds it, not the low watermark
    EXPECT_FALSE(h.update(b));
    EXPECT_FALSE(h.held());
}

TEST(budget_hold, each_new_hold_is_counted) {
    memory_budget b(2, 100);
    budget_hold h;
    int counted = 0;
    for (int round = 0; round < 3; ++round) {
        b.set_queued(1, 100);
        counted += h.update(b);
        b.set_queued(1, 0);
        counted += h.update(b);
    }
    EXPECT_EQ(counted, 3);
    EXPECT_FALSE(h.held());
}

TEST(budget_hold, no_budget_never_holds) {
    memory_budget b(1, 0);
    budget_hold h;
    b.set_queued(0, std::size_t(1) << 40);
    EXPECT_FALSE(h.update(b));
    EXPECT_FALSE(h.held());
}
