// turn_flusher: what one loop turn queues on a connection leaves at the turn's end, in one
// flush per connection however many frames were queued, and a flush posted once per turn.
#include "loop_harness.hpp"

#include <moraine/net/turn_flusher.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(turn_flusher, frames_of_one_turn_leave_together_at_its_end) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::probed a(sh), b(sh);
    a.conn->start_plain();
    b.conn->start_plain();
    test::settle(*shards);
    // One turn: three frames to a, one to b, queued from a handler as a service would.
    net::asio::post(sh.io(), [&] {
        for (int id : {1, 2, 3}) a.conn->enqueue(test::ok_reply(id, test::empty_encaps()));
        b.conn->enqueue(test::ok_reply(9, test::empty_encaps()));
        // Still inside the turn: nothing on the wire yet.
        EXPECT_EQ(a.peer().read(), 0u);
        EXPECT_EQ(b.peer().read(), 0u);
    });
    // The handler, then exactly one flush handler for both connections.
    sh.io().restart();
    EXPECT_EQ(sh.io().poll_one(), 1u);
    EXPECT_GT(a.conn->queued_bytes(), 0u);
    EXPECT_EQ(sh.io().poll_one(), 1u);
    EXPECT_EQ(a.conn->queued_bytes(), 0u) << "the flush wrote a's whole queue";
    EXPECT_EQ(b.conn->queued_bytes(), 0u);
    ASSERT_EQ(a.peer().frames().size(), 3u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(test::reply_of(a.peer().frames()[i]).request_id, i + 1);
    ASSERT_EQ(b.peer().frames().size(), 1u);
    EXPECT_EQ(test::reply_of(b.peer().frames()[0]).request_id, 9);
    a.conn->close(net::close_reason::shutdown, "test over");
    b.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(turn_flusher, a_connection_marked_directly_is_flushed_once_at_the_turn_end) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    net::turn_flusher flusher(sh.io());
    test::probed a(sh);
    a.conn->start_plain();
    test::settle(*shards);
    a.conn->enqueue(test::ok_reply(4, test::empty_encaps()));  // marks it on the shard's own flusher
    flusher.mark(a.conn);                                       // and on this one
    EXPECT_EQ(a.peer().read(), 0u);
    test::settle(*shards);
    ASSERT_EQ(a.peer().frames().size(), 1u) << "the frame is written once, not once per mark";
    EXPECT_EQ(test::reply_of(a.peer().frames()[0]).request_id, 4);
    a.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(turn_flusher, a_closed_connection_is_skipped) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::probed a(sh);
    a.conn->start_plain();
    test::settle(*shards);
    a.conn->enqueue(test::ok_reply(1, test::empty_encaps()));
    a.conn->close(net::close_reason::policy, "closed within the turn");
    test::settle(*shards);
    EXPECT_TRUE(a.peer().frames().empty());
    EXPECT_TRUE(a.peer().eof());
    test::finish(*shards);
}
