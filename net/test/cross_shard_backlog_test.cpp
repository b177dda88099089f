// The cross-shard backlog: pause above high, exactly one wake-up at low.
#include <moraine/net/cross_shard_backlog.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace moraine::net {
namespace {

TEST(cross_shard_backlog, pauses_above_high_and_wakes_once_at_low) {
    cross_shard_backlog b;
    b.add(100);
    EXPECT_FALSE(b.should_pause(200));
    b.add(150);
    EXPECT_TRUE(b.should_pause(200));
    EXPECT_FALSE(b.handled(100, 50));  // 150 left: above low
    EXPECT_TRUE(b.handled(100, 50));   // 50 left: wake the reader
    EXPECT_FALSE(b.handled(50, 50));   // already woken
    EXPECT_EQ(b.bytes(), 0u);
    EXPECT_FALSE(b.should_pause(200));
}

TEST(cross_shard_backlog, no_wake_up_without_a_pause) {
    cross_shard_backlog b;
    b.add(500);
    EXPECT_FALSE(b.handled(500, 50));
}

TEST(cross_shard_backlog, a_reader_never_sleeps_without_a_waker) {
    // Two threads as two shards: whenever the reader decides to sleep, some handler must
    // later report the wake-up; the reader then goes on. It must reach the end.
    cross_shard_backlog b;
    constexpr int rounds = 20000;
    std::atomic<int> posted{0}, handled{0}, wakeups{0};
    std::thread handler([&] {
        while (handled.load() < rounds) {
            if (handled.load() < posted.load()) {
                if (b.handled(10, 20)) wakeups.fetch_add(1);
                handled.fetch_add(1);
            }
        }
    });
    int seen_wakeups = 0;
    for (int i = 0; i < rounds; ++i) {
        while (b.should_pause(40)) {
            while (wakeups.load() == seen_wakeups) std::this_thread::yield();  // asleep until woken
            seen_wakeups = wakeups.load();
        }
        b.add(10);
        posted.fetch_add(1);
    }
    handler.join();
    EXPECT_EQ(b.bytes(), 0u);
}

}  // namespace
}  // namespace moraine::net
