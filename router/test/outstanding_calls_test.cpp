// outstanding_calls: request ids toward the client and what their replies complete. Checked: ids
// count from 1, skip outstanding ones and wrap after INT32_MAX without 0; a reply completes the
// callback or the event it was sent for, once; the failure sets empty the tables.
#include <moraine/router/outstanding_calls.hpp>

#include <gtest/gtest.h>

#include <climits>

using namespace moraine;

namespace {

net::callback_route route_with(std::int32_t back_end_id) {
    net::callback_route r;
    r.request_id = back_end_id;
    return r;
}

}  // namespace

TEST(outstanding_calls, an_idle_connection_has_nothing_outstanding) {
    router::outstanding_calls calls;
    EXPECT_TRUE(calls.empty());
    EXPECT_EQ(calls.callbacks(), 0u);
    const auto c = calls.complete(1);
    EXPECT_FALSE(c.callback);
    EXPECT_FALSE(c.event);
    EXPECT_TRUE(calls.take_callbacks().empty());
    EXPECT_TRUE(calls.take_events().empty());
}

TEST(outstanding_calls, a_reply_completes_the_call_sent_under_its_id_once) {
    router::outstanding_calls calls;
    const auto cb = calls.next_id();
    const auto ev = calls.next_id();
    EXPECT_EQ(cb, 1);
    EXPECT_EQ(ev, 2);
    calls.add_callback(cb, route_with(77));
    int events_done = 0;
    calls.add_event(ev, [&](const protocol::reply_view*) { ++events_done; });
    EXPECT_EQ(calls.callbacks(), 1u);
    EXPECT_FALSE(calls.empty());

    auto first = calls.complete(cb);
    ASSERT_TRUE(first.callback);
    EXPECT_EQ(first.callback->request_id, 77);
    EXPECT_FALSE(first.event);
    auto second = calls.complete(ev);
    ASSERT_TRUE(second.event);
    EXPECT_FALSE(second.callback);
    second.event(nullptr);
    EXPECT_EQ(events_done, 1);
    EXPECT_TRUE(calls.empty());
    EXPECT_FALSE(calls.complete(cb).callback) << "a second reply under the same id completes nothing";
}

TEST(outstanding_calls, ids_skip_outstanding_ones_and_wrap_without_zero) {
    router::outstanding_calls calls;
    const auto kept = calls.next_id();  // 1, outstanding for the whole test
    calls.add_callback(kept, route_with(1));
    std::int32_t id = 0;
    for (int i = 0; i < 5; ++i) id = calls.next_id();
    EXPECT_EQ(id, 6);
    EXPECT_EQ(calls.next_id(), 7);

    router::outstanding_calls wrap(INT32_MAX - 1);
    wrap.add_event(1, [](const protocol::reply_view*) {});
    wrap.add_event(2, [](const protocol::reply_view*) {});
    EXPECT_EQ(wrap.next_id(), INT32_MAX - 1);
    EXPECT_EQ(wrap.next_id(), INT32_MAX);
    EXPECT_EQ(wrap.next_id(), 3) << "after INT32_MAX: 1 and 2 are outstanding, 0 is never used";
}

TEST(outstanding_calls, taking_everything_for_a_failure_empties_both_tables) {
    router::outstanding_calls calls;
    for (std::int32_t back = 10; back < 13; ++back) calls.add_callback(calls.next_id(), route_with(back));
    calls.add_event(calls.next_id(), [](const protocol::reply_view*) {});
    EXPECT_EQ(calls.take_callbacks().size(), 3u);
    EXPECT_EQ(calls.callbacks(), 0u);
    EXPECT_FALSE(calls.empty()) << "the event still waits";
    EXPECT_EQ(calls.take_events().size(), 1u);
    EXPECT_TRUE(calls.empty());
}
