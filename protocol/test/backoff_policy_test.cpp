#include <moraine/protocol/backoff_policy.hpp>

#include <gtest/gtest.h>

#include <iterator>
#include <limits>
#include <random>
#include <set>

namespace moraine::protocol {
namespace {

using namespace std::chrono_literals;

TEST(backoff_policy, ceiling_doubles_from_initial_up_to_max) {
    const backoff_policy p{.initial_delay = 100ms, .max_delay = 1000ms};
    EXPECT_EQ(p.ceiling(1), 100ms);
    EXPECT_EQ(p.ceiling(2), 200ms);
    EXPECT_EQ(p.ceiling(3), 400ms);
    EXPECT_EQ(p.ceiling(4), 800ms);
    EXPECT_EQ(p.ceiling(5), 1000ms);
    EXPECT_EQ(p.ceiling(6), 1000ms);
    EXPECT_EQ(p.ceiling(0), 100ms) << "attempt 0 counts as the first";
}

TEST(backoff_policy, huge_attempt_numbers_stay_at_the_cap) {
    const backoff_policy p{.initial_delay = 100ms, .max_delay = 30s};
    EXPECT_EQ(p.ceiling(64), 30s);
    EXPECT_EQ(p.ceiling(5000), 30s) << "pow overflows to inf: still the cap";
    EXPECT_EQ(p.ceiling(std::numeric_limits<unsigned>::max()), 30s);
}

TEST(backoff_policy, other_multipliers) {
    backoff_policy p{.initial_delay = 1000ms, .max_delay = 60s, .multiplier = 1.5};
    EXPECT_EQ(p.ceiling(2), 1500ms);
    EXPECT_EQ(p.ceiling(3), 2250ms);
    p.multiplier = 1.0;
    EXPECT_EQ(p.ceiling(10), 1000ms) << "constant delays";
    p.multiplier = 0.5;
    EXPECT_EQ(p.ceiling(10), 1000ms) << "below 1 counts as 1: delays never shrink";
    p.multiplier = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(p.ceiling(10), 1000ms);
}

TEST(backoff_policy, zero_initial_delay_retries_at_once_then_backs_off) {
    backoff_policy p{.initial_delay = 0ms, .max_delay = 1s};
    EXPECT_EQ(p.ceiling(1), 0ms);
    EXPECT_EQ(p.ceiling(2), 2ms);
    EXPECT_EQ(p.ceiling(3), 4ms);
    EXPECT_EQ(p.ceiling(20), 1s);
    p.multiplier = 1.0;
    EXPECT_EQ(p.ceiling(20), 0ms) << "asked for: always at once";
}

TEST(backoff_policy, max_below_initial_wins) {
    const backoff_policy p{.initial_delay = 5s, .max_delay = 1s};
    EXPECT_EQ(p.ceiling(1), 1s);
    EXPECT_EQ(p.ceiling(3), 1s);
    const backoff_policy negative{.initial_delay = -5ms, .max_delay = -1ms};
    EXPECT_EQ(negative.ceiling(1), 0ms);
    EXPECT_EQ(negative.delay(3, 0.5), 0ms);
}

TEST(backoff_policy, jitter_spans_the_top_share_of_the_ceiling) {
    const backoff_policy p{.initial_delay = 100ms, .max_delay = 10s, .jitter = 0.5};
    EXPECT_EQ(p.delay(1, 0.0), 100ms);
    EXPECT_EQ(p.delay(1, 1.0), 50ms);
    EXPECT_EQ(p.delay(3, 0.5), 300ms);  // 400 × (1 − 0.25)
    EXPECT_EQ(p.delay(1, -3.0), 100ms) << "u clamped to [0, 1]";
    EXPECT_EQ(p.delay(1, 7.0), 50ms);
    EXPECT_EQ(p.delay(1, std::numeric_limits<double>::quiet_NaN()), 100ms);
}

TEST(backoff_policy, no_jitter_and_full_jitter) {
    backoff_policy p{.initial_delay = 100ms, .max_delay = 10s, .jitter = 0.0};
    EXPECT_EQ(p.delay(2, 0.9), 200ms);
    p.jitter = 1.0;
    EXPECT_EQ(p.delay(2, 1.0), 0ms);
    EXPECT_EQ(p.delay(2, 0.25), 150ms);
    p.jitter = 4.0;  // clamped to 1
    EXPECT_EQ(p.delay(2, 1.0), 0ms);
    p.jitter = -1.0;  // clamped to 0
    EXPECT_EQ(p.delay(2, 1.0), 200ms);
}

TEST(backoff_policy, random_draws_stay_in_range_and_spread) {
    const backoff_policy p{.initial_delay = 100ms, .max_delay = 800ms};  // jitter 0.5
    std::mt19937 rng(42);
    for (unsigned attempt = 1; attempt <= 8; ++attempt) {
        const auto c = p.ceiling(attempt);
        std::set<std::int64_t> seen;
        for (int i = 0; i < 200; ++i) {
            const auto d = p.delay(attempt, rng);
            ASSERT_LE(d, c) << "attempt " << attempt;
            ASSERT_GE(d, c / 2) << "attempt " << attempt;
            seen.insert(d.count());
        }
        EXPECT_GT(seen.size(), 10u) << "attempt " << attempt << ": sessions must not come back in lockstep";
    }
}

TEST(backoff_policy, without_jitter_a_fixed_schedule) {
    // As topic links (100 ms doubling to 10 s) and the login back-off use it.
    const backoff_policy links{.initial_delay = 100ms, .max_delay = 10s, .multiplier = 2.0, .jitter = 0.0};
    const std::chrono::milliseconds expected[] = {100ms, 200ms, 400ms, 800ms, 1600ms, 3200ms, 6400ms, 10s, 10s};
    for (unsigned n = 1; n <= std::size(expected); ++n) {
        EXPECT_EQ(links.ceiling(n), expected[n - 1]) << "probe " << n;
        EXPECT_EQ(links.delay(n, 1.0), expected[n - 1]) << "no jitter: every draw is the ceiling";
    }
    const backoff_policy logins{.initial_delay = 1000ms, .max_delay = 8000ms, .jitter = 0.0};
    EXPECT_EQ(logins.ceiling(1), 1000ms);
    EXPECT_EQ(logins.ceiling(4), 8000ms);
    EXPECT_EQ(logins.ceiling(40), 8000ms) << "the old 30-doubling guard is not needed";
}

TEST(backoff_policy, defaults) {
    const backoff_policy p;
    EXPECT_EQ(p.ceiling(1), 100ms);
    EXPECT_EQ(p.ceiling(8), 10s);  // 12.8 s capped
    EXPECT_EQ(p.delay(1, 1.0), 50ms);
}

}  // namespace
}  // namespace moraine::protocol
