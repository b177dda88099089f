// The per-subscriber delivery state machine (delivery.hpp; docs/icestorm.md §3), without sockets.
#include <moraine/icestorm_bridge/delivery.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace moraine::icestorm_bridge;
using namespace std::chrono_literals;
using offer_result = delivery_state::offer_result;

namespace {

const delivery_state::clock::time_point t0{};

event_ptr ev(std::string name, std::size_t params = 8) {
    auto e = std::make_shared<event>();
    e->topic = "t";
    e->operation = std::move(name);
    e->params = std::make_shared<const moraine::protocol::byte_buffer>(params, std::byte{0});
    return e;
}

qos with(bool ordered, int retry) {
    qos q;
    q.ordered = ordered;
    q.retry_count = retry;
    return q;
}

/// Everything next() releases now, by operation name, with its token.
std::vector<delivery_state::send> drain(delivery_state& d, delivery_state::clock::time_point now = t0) {
    std::vector<delivery_state::send> out;
    while (auto s = d.next(now)) out.push_back(*s);
    return out;
}

std::vector<std::string> names(const std::vector<delivery_state::send>& v) {
    std::vector<std::string> n;
    for (const auto& s : v) n.push_back(s.ev->operation);
    return n;
}

}  // namespace

TEST(delivery, ordered_keeps_one_event_outstanding_in_publish_order) {
    delivery_limits lim;
    delivery_state d(with(true, 0), true);
    EXPECT_EQ(d.max_outstanding(), 1u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d.offer(ev("e" + std::to_string(i)), t0, lim), offer_result::queued);
    std::vector<std::string> got;
    for (int i = 0; i < 4; ++i) {
        auto out = drain(d);
        ASSERT_EQ(out.size(), 1u) << "exactly one event at a time, round " << i;
        got.push_back(out[0].ev->operation);
        EXPECT_FALSE(d.next(t0)) << "nothing more until the reply";
        d.completed(out[0].token, delivery_outcome::ok, t0, lim);
    }
    EXPECT_EQ(got, (std::vector<std::string>{"e0", "e1", "e2", "e3"}));
    EXPECT_EQ(d.outstanding(), 0u);
}

TEST(delivery, twoway_keeps_at_most_five_outstanding) {
    delivery_limits lim;
    delivery_state d(with(false, 0), true);
    for (int i = 0; i < 8; ++i) d.offer(ev("e" + std::to_string(i)), t0, lim);
    auto first = drain(d);
    EXPECT_EQ(names(first), (std::vector<std::string>{"e0", "e1", "e2", "e3", "e4"}));
    EXPECT_EQ(d.queued(), 3u);
    // Replies in any order free slots; the queue still leaves in publish order.
    d.completed(first[3].token, delivery_outcome::ok, t0, lim);
    d.completed(first[1].token, delivery_outcome::ok, t0, lim);
    EXPECT_EQ(names(drain(d)), (std::vector<std::string>{"e5", "e6"}));
}

TEST(delivery, oneway_is_not_windowed) {
    delivery_limits lim;
    delivery_state d(with(false, 0), false);
    EXPECT_EQ(d.max_outstanding(), 0u);
    for (int i = 0; i < 20; ++i) d.offer(ev("e"), t0, lim);
    auto out = drain(d);
    EXPECT_EQ(out.size(), 20u);
    for (const auto& s : out) EXPECT_EQ(s.token, 0u);
}

TEST(delivery, retry_count_zero_fails_at_the_first_transient_failure) {
    delivery_limits lim;
    delivery_state d(with(true, 0), true);
    d.offer(ev("a"), t0, lim);
    d.offer(ev("b"), t0, lim);
    auto a = drain(d);
    d.completed(a[0].token, delivery_outcome::transient, t0, lim);
    EXPECT_TRUE(d.dead());
    EXPECT_EQ(d.queued(), 0u) << "a failed subscriber's queue is dropped";
    EXPECT_EQ(d.offer(ev("c"), t0, lim), offer_result::dead) << "removed on the next publish";
}

TEST(delivery, retry_count_goes_offline_for_the_discard_interval_then_retries) {
    delivery_limits lim;
    lim.discard_interval_s = 10;
    delivery_state d(with(false, 2), true);
    d.offer(ev("a"), t0, lim);
    d.completed(drain(d)[0].token, delivery_outcome::transient, t0, lim);
    EXPECT_FALSE(d.dead());
    EXPECT_TRUE(d.offline(t0));
    EXPECT_EQ(d.retries(), 1);
    EXPECT_EQ(d.offer(ev("lost"), t0 + 9s, lim), offer_result::discarded);
    // After the interval: back online, the event goes.
    EXPECT_EQ(d.offer(ev("b"), t0 + 10s, lim), offer_result::queued);
    auto b = drain(d, t0 + 10s);
    ASSERT_EQ(names(b), (std::vector<std::string>{"b"}));
    d.completed(b[0].token, delivery_outcome::transient, t0 + 10s, lim);
    EXPECT_EQ(d.retries(), 2);
    d.offer(ev("c"), t0 + 20s, lim);
    d.completed(drain(d, t0 + 20s)[0].token, delivery_outcome::transient, t0 + 20s, lim);
    EXPECT_TRUE(d.dead()) << "the third failure is past retryCount=2";
}

TEST(delivery, a_success_resets_the_retries) {
    delivery_limits lim;
    lim.discard_interval_s = 0;
    delivery_state d(with(false, 1), true);
    for (int round = 0; round < 3; ++round) {
        d.offer(ev("x"), t0, lim);
        d.completed(drain(d)[0].token, delivery_outcome::transient, t0, lim);
        EXPECT_FALSE(d.dead());
        d.offer(ev("y"), t0, lim);
        d.completed(drain(d)[0].token, delivery_outcome::ok, t0, lim);
        EXPECT_EQ(d.retries(), 0);
    }
}

TEST(delivery, retry_forever_and_hard_failures) {
    delivery_limits lim;
    lim.discard_interval_s = 0;
    delivery_state forever(with(false, -1), true);
    for (int i = 0; i < 100; ++i) {
        forever.offer(ev("x"), t0, lim);
        forever.completed(drain(forever)[0].token, delivery_outcome::transient, t0, lim);
    }
    EXPECT_FALSE(forever.dead());
    forever.offer(ev("x"), t0, lim);
    forever.completed(drain(forever)[0].token, delivery_outcome::hard, t0, lim);
    EXPECT_TRUE(forever.dead()) << "ObjectNotExist removes even a retry-forever subscriber";
}

TEST(delivery, oneway_failures_count_too) {
    delivery_limits lim;
    delivery_state d(with(false, 1), false);
    d.offer(ev("a"), t0, lim);
    ASSERT_EQ(drain(d).size(), 1u);
    d.completed(0, delivery_outcome::transient, t0, lim);
    EXPECT_FALSE(d.dead());
    EXPECT_EQ(d.offer(ev("b"), t0 + 60s, lim), offer_result::queued);
    drain(d, t0 + 60s);
    d.completed(0, delivery_outcome::transient, t0 + 60s, lim);
    EXPECT_TRUE(d.dead());
}

TEST(delivery, failures_while_offline_are_one_failure) {
    delivery_limits lim;
    delivery_state d(with(false, 1), true);
    for (int i = 0; i < 5; ++i) d.offer(ev("e"), t0, lim);
    auto out = drain(d);
    ASSERT_EQ(out.size(), 5u);
    for (const auto& s : out) d.completed(s.token, delivery_outcome::transient, t0, lim);
    EXPECT_FALSE(d.dead()) << "five replies failing together use one retry";
    EXPECT_EQ(d.retries(), 1);
}

TEST(delivery, send_timeout_fails_an_unanswered_event) {
    delivery_limits lim;
    lim.send_timeout_ms = 1000;
    delivery_state d(with(true, 0), true);
    d.offer(ev("a"), t0, lim);
    auto a = drain(d);
    EXPECT_EQ(d.offer(ev("b"), t0 + 999ms, lim), offer_result::queued);
    EXPECT_FALSE(d.next(t0 + 999ms));
    EXPECT_EQ(d.offer(ev("c"), t0 + 1000ms, lim), offer_result::dead) << "unanswered for Send.Timeout";
    d.completed(a[0].token, delivery_outcome::ok, t0 + 2s, lim);  // too late: ignored
    EXPECT_TRUE(d.dead());
}

TEST(delivery, queue_size_max_remove_subscriber) {
    delivery_limits lim;
    lim.queue_size_max = 3;
    delivery_state d(with(true, -1), true);
    d.offer(ev("sent"), t0, lim);
    drain(d);  // one outstanding: it does not count against the queue
    for (int i = 0; i < 3; ++i) EXPECT_EQ(d.offer(ev("q"), t0, lim), offer_result::queued);
    EXPECT_EQ(d.offer(ev("over"), t0, lim), offer_result::dead) << "overflow is a hard error, even with retryCount=-1";
    EXPECT_TRUE(d.dead());
}

TEST(delivery, queue_size_max_drop_events_drops_the_oldest) {
    delivery_limits lim;
    lim.queue_size_max = 2;
    lim.policy = queue_policy::drop_events;
    delivery_state d(with(true, 0), true);
    d.offer(ev("e0"), t0, lim);
    auto first = drain(d);
    EXPECT_EQ(d.offer(ev("e1"), t0, lim), offer_result::queued);
    EXPECT_EQ(d.offer(ev("e2"), t0, lim), offer_result::queued);
    EXPECT_EQ(d.offer(ev("e3"), t0, lim), offer_result::dropped);
    d.completed(first[0].token, delivery_outcome::ok, t0, lim);
    auto next = drain(d);
    d.completed(next[0].token, delivery_outcome::ok, t0, lim);
    next.push_back(drain(d)[0]);
    EXPECT_EQ(names(next), (std::vector<std::string>{"e2", "e3"}));
}

TEST(delivery, byte_bound_drops_the_new_event) {
    delivery_limits lim;
    lim.queue_bytes = 100;
    delivery_state d(with(true, 0), true);
    d.offer(ev("sent", 500), t0, lim);
    auto first = drain(d);
    EXPECT_EQ(d.offer(ev("big", 500), t0, lim), offer_result::queued) << "an empty queue takes any event";
    EXPECT_EQ(d.offer(ev("more", 10), t0, lim), offer_result::dropped);
    d.completed(first[0].token, delivery_outcome::ok, t0, lim);
    EXPECT_EQ(names(drain(d)), (std::vector<std::string>{"big"}));
    EXPECT_EQ(d.offer(ev("fits", 60), t0, lim), offer_result::queued);
    EXPECT_EQ(d.offer(ev("fits2", 40), t0, lim), offer_result::queued);
}

TEST(delivery, release_frees_the_slot_without_an_outcome) {
    delivery_limits lim;
    delivery_state d(with(true, 0), true);
    d.offer(ev("a"), t0, lim);
    d.offer(ev("b"), t0, lim);
    auto a = drain(d);
    d.release(a[0].token);
    EXPECT_FALSE(d.dead());
    EXPECT_EQ(names(drain(d)), (std::vector<std::string>{"b"}));
}

TEST(delivery, offer_now_sends_at_once_while_nothing_waits_and_the_window_has_room) {
    delivery_limits lim;
    delivery_state oneway(with(false, 0), false);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(oneway.offer_now(t0, lim), std::optional<std::uint64_t>(0));
    EXPECT_EQ(oneway.queued(), 0u);
    EXPECT_EQ(oneway.outstanding(), 0u);

    delivery_state twoway(with(false, 0), true);
    std::vector<std::uint64_t> tokens;
    for (int i = 0; i < 5; ++i) {
        auto t = twoway.offer_now(t0, lim);
        ASSERT_TRUE(t);
        EXPECT_NE(*t, 0u);
        tokens.push_back(*t);
    }
    EXPECT_EQ(twoway.outstanding(), 5u);
    EXPECT_FALSE(twoway.offer_now(t0, lim)) << "the window is full";
    EXPECT_EQ(twoway.offer(ev("queued"), t0, lim), offer_result::queued);
    twoway.completed(tokens[2], delivery_outcome::ok, t0, lim);
    EXPECT_FALSE(twoway.offer_now(t0, lim)) << "an event already waits: it goes first";
    EXPECT_EQ(names(drain(twoway)), (std::vector<std::string>{"queued"}));
}

TEST(delivery, offer_now_declines_offline_dead_and_zero_queue_subscribers) {
    delivery_limits lim;
    lim.discard_interval_s = 10;
    delivery_state d(with(false, 1), true);
    auto token = d.offer_now(t0, lim);
    ASSERT_TRUE(token);
    d.completed(*token, delivery_outcome::transient, t0, lim);
    EXPECT_FALSE(d.offer_now(t0 + 9s, lim)) << "offline: offer() discards it";
    EXPECT_EQ(d.offer(ev("lost"), t0 + 9s, lim), offer_result::discarded);
    token = d.offer_now(t0 + 10s, lim);
    ASSERT_TRUE(token) << "the discard interval is over";
    EXPECT_FALSE(d.offline(t0 + 10s));
    d.completed(*token, delivery_outcome::transient, t0 + 10s, lim);
    EXPECT_TRUE(d.dead());
    EXPECT_FALSE(d.offer_now(t0 + 20s, lim));

    delivery_limits zero;
    zero.queue_size_max = 0;
    delivery_state z(with(false, 0), false);
    EXPECT_FALSE(z.offer_now(t0, zero)) << "offer() applies QueueSizeMaxPolicy";
    EXPECT_EQ(z.offer(ev("e"), t0, zero), offer_result::dead);
}
