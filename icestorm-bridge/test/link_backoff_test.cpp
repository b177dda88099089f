#include <moraine/icestorm_bridge/link_backoff.hpp>

#include <gtest/gtest.h>

using namespace moraine::icestorm_bridge;
using namespace std::chrono_literals;

namespace {
const link_backoff::clock::time_point t0{};
}

TEST(link_backoff, a_healthy_link_forwards_everything) {
    link_backoff b;
    EXPECT_TRUE(b.admit(t0));
    EXPECT_TRUE(b.admit(t0 + 1ms));
    EXPECT_EQ(b.succeeded(), 0u);
    EXPECT_EQ(b.lost_total(), 0u);
}

TEST(link_backoff, an_outage_discards_and_counts_then_tries_again_after_doubling_waits) {
    link_backoff b;
    EXPECT_TRUE(b.failed(t0));    // starts the outage: the event is lost
    EXPECT_FALSE(b.failed(t0));   // another forward of before the outage: lost, nothing more
    EXPECT_FALSE(b.admit(t0 + 50ms));
    EXPECT_TRUE(b.admit(t0 + 100ms));   // the wait is over: a trial
    EXPECT_TRUE(b.admit(t0 + 101ms));   // during the trial every event goes (none lost to a slow connect)
    EXPECT_FALSE(b.failed(t0 + 110ms));  // the trial failed: next one 200 ms later
    EXPECT_FALSE(b.failed(t0 + 111ms));  // the trial's second event failed too: only counted
    EXPECT_FALSE(b.admit(t0 + 300ms));
    EXPECT_TRUE(b.admit(t0 + 310ms));
    EXPECT_EQ(b.lost_total(), 6u);  // 2 failed forwards, 2 held back, the 2 failed trial events
    EXPECT_EQ(b.succeeded(), 6u);   // the second trial got a reply: outage over
    EXPECT_FALSE(b.down());
    EXPECT_TRUE(b.admit(t0 + 311ms));
    EXPECT_EQ(b.succeeded(), 0u);
}

TEST(link_backoff, the_wait_stops_growing_at_ten_seconds) {
    link_backoff b;
    auto now = t0;
    b.failed(now);
    for (int i = 0; i < 10; ++i) {  // 100 ms doubled ten times would be 102 s
        now += 20s;
        ASSERT_TRUE(b.admit(now));
        b.failed(now);
    }
    EXPECT_FALSE(b.admit(now + 9999ms));
    EXPECT_TRUE(b.admit(now + 10s));
}

TEST(link_backoff, the_wait_is_capped_by_a_shorter_discard_interval) {
    link_backoff b(2000ms);  // IceStorm.Discard.Interval=2
    auto now = t0;
    b.failed(now);
    for (int i = 0; i < 10; ++i) {
        now += 20s;
        ASSERT_TRUE(b.admit(now));
        b.failed(now);
    }
    EXPECT_EQ(b.schedule().max_delay, 2000ms);
    EXPECT_FALSE(b.admit(now + 1999ms));
    EXPECT_TRUE(b.admit(now + 2s));
}
