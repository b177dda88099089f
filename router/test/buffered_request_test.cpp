// buffered_request: what a buffered session's queues hold and when they flush (a takeover
// cuts the hold short, so the session moves with empty queues)
// (Glacier2.Client.Buffered). Checked on flush_timing itself (no timer until a hold, cancel
// without one) and through a buffered client connection: requests queued in one turn leave
// together, and with AlwaysBatch as one batch message, in order.
#include "glacier2_harness.hpp"

#include <moraine/router/buffered_request.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(buffered_request, flush_timing_starts_idle_without_a_timer) {
    router::flush_timing t(250);
    EXPECT_EQ(t.hold, std::chrono::milliseconds(250));
    EXPECT_FALSE(t.posted);
    EXPECT_FALSE(t.holding);
    EXPECT_EQ(t.timer, nullptr);
    t.cancel();  // nothing to cancel: no effect, no timer made
    EXPECT_EQ(t.timer, nullptr);
}

TEST(buffered_request, queued_items_report_their_message_size) {
    router::queued_request q;
    q.message = protocol::byte_buffer(123);
    EXPECT_EQ(q.size(), 123u);
    router::queued_callback cb;
    cb.message = protocol::byte_buffer(7);
    EXPECT_EQ(cb.size(), 7u);
}

TEST(buffered_request, oneways_of_one_read_leave_as_one_batch_with_always_batch) {
    test::glacier2 g([](router::config& cfg) {
        cfg.client_buffered = true;
        cfg.client_always_batch = true;
    });
    test::loopback_backend backend;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    ASSERT_EQ(test::reply_of(g.add_proxy(c, "hello:" + backend.endpoint())).status, protocol::reply_status::ok);
    protocol::byte_buffer three;
    for (const char* op : {"a", "b", "c"}) {
        auto m = test::request_message(0, {"hello", ""}, op, test::empty_encaps());
        three.insert(three.end(), m.begin(), m.end());
    }
    c.peer().send(three);
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        backend.pump();
        return !backend.requests.empty();
    }));
    test::run_until(g.shards(), [&] {
        backend.pump();
        return false;
    }, std::chrono::milliseconds(20));
    ASSERT_EQ(backend.requests.size(), 1u) << "one batch message, not three requests";
    ASSERT_EQ(test::header_of(backend.requests[0]).type, protocol::message_type::batch_request);
    protocol::batch_reader batch(protocol::byte_view(backend.requests[0]).subspan(protocol::header_size));
    std::vector<std::string> ops;
    while (!batch.done()) {
        auto r = batch.next();
        ASSERT_TRUE(r);
        ops.emplace_back(r->operation);
    }
    EXPECT_EQ(ops, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(buffered_request, a_buffered_twoway_still_gets_its_reply) {
    test::glacier2 g([](router::config& cfg) { cfg.client_buffered = true; });
    test::loopback_backend backend;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    g.add_proxy(c, "hello:" + backend.endpoint());
    const auto reply = g.call(c, {"hello", ""}, "op", test::encaps([](protocol::output_stream& os) {
                                  os.write_string("buffered");
                              }),
                              [&] { backend.pump(); });
    ASSERT_FALSE(reply.empty());
    EXPECT_EQ(test::string_result(test::reply_of(reply)), "buffered");
}

TEST(buffered_request, a_takeover_cuts_the_hold_short_and_the_session_moves_empty) {
    test::glacier2 g([](router::config& cfg) {
        cfg.client_buffered = true;
        cfg.client_sleep_time_ms = 60000;  // a hold no test waits out
    });
    test::loopback_backend backend;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    ASSERT_EQ(test::reply_of(g.add_proxy(c, "hello:" + backend.endpoint())).status, protocol::reply_status::ok);
    const auto oneway = [&](const char* op) {
        c.peer().send(test::request_message(0, {"hello", ""}, op, test::empty_encaps()));
    };
    oneway("first");  // reaches the idle queue: flushed at the end of its turn, then the hold runs
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        backend.pump();
        return backend.requests.size() == 1;
    }));
    oneway("second");  // held for 60 s
    test::run_until(g.shards(), [&] {
        backend.pump();
        return false;
    }, std::chrono::milliseconds(20));
    ASSERT_EQ(backend.requests.size(), 1u);
    EXPECT_TRUE(c.conn->held_by_queues());
    EXPECT_FALSE(c.conn->move_state().has_value()) << "a queue that holds a request does not move";

    const std::string category = c.conn->current_session()->category;
    auto moved = g.local().take_movable(8);
    ASSERT_EQ(moved.size(), 1u) << "flushed, then moved at the same look";
    EXPECT_EQ(moved[0].first.category, category);
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        backend.pump();
        return backend.requests.size() == 2;
    }));
    EXPECT_EQ(test::request_of(backend.requests[1]).operation, "second");
}
