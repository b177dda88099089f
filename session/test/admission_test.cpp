#include <moraine/session/admission.hpp>

#include <gtest/gtest.h>

using namespace moraine::session;
using namespace std::chrono_literals;
using kind = admission_refusal::kind;

namespace {
const admission::clock::time_point t0{std::chrono::hours(1)};

admission_limits backoff_only() {
    admission_limits l;
    l.backoff_free_failures = 2;
    l.backoff_initial = 1000ms;
    l.backoff_max = 8000ms;
    return l;
}
}  // namespace

TEST(admission, free_failures_then_doubling_wait_capped) {
    admission a(backoff_only());
    a.failed("10.0.0.1", "alice", t0);
    a.failed("10.0.0.1", "alice", t0);
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0));  // two free failures
    a.failed("10.0.0.1", "alice", t0);
    auto r = a.check("10.0.0.1", "alice", t0 + 500ms);
    EXPECT_EQ(r.why, kind::backoff_address);
    EXPECT_GT(r.retry_after, 400ms);
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0 + 1001ms));
    a.failed("10.0.0.1", "alice", t0 + 1001ms);  // 4th: 2 s
    EXPECT_TRUE(a.check("10.0.0.1", "alice", t0 + 2900ms));
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0 + 3002ms));
    for (int i = 0; i < 10; ++i) a.failed("10.0.0.1", "alice", t0 + 4s);
    EXPECT_EQ(a.check("10.0.0.1", "alice", t0 + 4s).retry_after, 8001ms);  // capped at backoff_max
}

TEST(admission, per_user_across_addresses_and_per_address_across_users) {
    admission a(backoff_only());
    for (int i = 0; i < 3; ++i) a.failed("10.0.0." + std::to_string(i), "alice", t0);
    EXPECT_EQ(a.check("10.0.0.9", "alice", t0).why, kind::backoff_user);  // a new address, same user
    EXPECT_FALSE(a.check("10.0.0.9", "bob", t0));
    for (int i = 0; i < 3; ++i) a.failed("10.0.0.7", "u" + std::to_string(i), t0);
    EXPECT_EQ(a.check("10.0.0.7", "carol", t0).why, kind::backoff_address);  // guessing users from one address
}

TEST(admission, success_clears_the_record) {
    admission a(backoff_only());
    for (int i = 0; i < 2; ++i) a.failed("10.0.0.1", "alice", t0);
    a.succeeded("10.0.0.1", "alice", t0);
    a.failed("10.0.0.1", "alice", t0);
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0));  // one failure since the success: still free
}

TEST(admission, rate_per_address_with_burst) {
    admission_limits l;
    l.setups_per_second = 5;  // burst 10
    admission a(l);
    for (int i = 0; i < 10; ++i) EXPECT_FALSE(a.check("10.0.0.1", "u", t0, false)) << i;
    auto r = a.check("10.0.0.1", "u", t0, false);
    EXPECT_EQ(r.why, kind::rate);
    EXPECT_GT(r.retry_after, 0ms);
    EXPECT_FALSE(a.check("10.0.0.2", "u", t0, false));      // another address has its own bucket
    EXPECT_FALSE(a.check("10.0.0.1", "u", t0 + 210ms, false));  // one token back after 200 ms
    EXPECT_TRUE(a.check("10.0.0.1", "u", t0 + 220ms, false));
}

TEST(admission, back_off_off_when_initial_is_zero) {
    admission_limits l;
    l.backoff_initial = 0ms;
    admission a(l);
    for (int i = 0; i < 50; ++i) a.failed("10.0.0.1", "alice", t0);
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0));
}

TEST(admission, memory_is_bounded) {
    admission a(backoff_only(), 100);
    for (int i = 0; i < 1000; ++i) a.check("addr" + std::to_string(i), "u", t0 + std::chrono::milliseconds(i), false);
    EXPECT_LE(a.entries(), 101u);
    // Idle records go: past twice the longest wait nothing of the flood is left but the newest.
    a.check("late", "u", t0 + 1h, false);
    EXPECT_LE(a.entries(), 3u);
}

TEST(admission, parallel_guesses_get_no_more_tries_than_serial_ones) {
    admission a(backoff_only());  // 2 free failures
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0));
    a.failed("10.0.0.1", "alice", t0);               // a failure: from now on checks in flight count
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0));
    EXPECT_EQ(a.check("10.0.0.1", "alice", t0).why, kind::checking);  // 1 failed + 1 running
    a.failed("10.0.0.1", "alice", t0);
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0));  // the third try, as one by one
    EXPECT_EQ(a.check("10.0.0.1", "alice", t0).why, kind::checking);
    a.failed("10.0.0.1", "alice", t0);
    EXPECT_EQ(a.check("10.0.0.1", "alice", t0).why, kind::backoff_address);
}

TEST(admission, parallel_logins_without_failures_pass) {
    admission a(backoff_only());
    for (int i = 0; i < 100; ++i) EXPECT_FALSE(a.check("10.0.0.1", "demo", t0)) << i;  // 100 sessions at once
    for (int i = 0; i < 100; ++i) a.succeeded("10.0.0.1", "demo", t0);
}

TEST(admission, a_user_is_not_locked_out_from_an_address_they_logged_in_from) {
    admission a(backoff_only());
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0));
    a.succeeded("10.0.0.1", "alice", t0);
    for (int i = 0; i < 5; ++i) a.failed("10.0.0.66", "alice", t0 + 1s);  // someone guessing alice's password
    EXPECT_EQ(a.check("10.0.0.66", "alice", t0 + 1s).why, kind::backoff_address);
    EXPECT_EQ(a.check("10.0.0.2", "alice", t0 + 1s).why, kind::backoff_user);  // elsewhere: held back
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0 + 1s));                       // her own address: not
}

TEST(admission, calls_without_a_password_check_are_only_rate_limited) {
    admission a(backoff_only());
    for (int i = 0; i < 10; ++i) a.failed("10.0.0.1", "alice", t0);
    EXPECT_FALSE(a.check("10.0.0.1", "alice", t0, false));
}
