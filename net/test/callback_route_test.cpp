// callback_route / send_callback_reply: a reply goes back to the connection a request came in
// on, on that connection's shard, whichever shard answers; a closed origin drops it.
#include "loop_harness.hpp"

#include <moraine/net/callback_route.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(callback_route, a_reply_on_the_same_shard_is_queued_on_the_origin) {
    auto shards = test::owned_shards(2);
    test::probed origin(shards->at(0));
    origin.conn->start_plain();
    net::callback_route route{0, origin.conn, 21};
    net::send_callback_reply(*shards, 0, route, test::ok_reply(21, test::empty_encaps()));
    EXPECT_GT(origin.conn->queued_bytes(), 0u) << "same shard: queued at once";
    ASSERT_TRUE(test::run_until(*shards, [&] { return !origin.peer().frames().empty(); }));
    EXPECT_EQ(test::reply_of(origin.peer().frames()[0]).request_id, 21);
    origin.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(callback_route, a_reply_from_another_shard_crosses_to_the_origins_shard) {
    auto shards = test::owned_shards(2);
    test::probed origin(shards->at(1));
    origin.conn->start_plain();
    test::settle(*shards);
    net::callback_route route{1, origin.conn, 5};
    net::send_callback_reply(*shards, 0, route, test::ok_reply(5, test::empty_encaps()));
    EXPECT_EQ(origin.conn->queued_bytes(), 0u) << "posted to shard 1, not touched from shard 0";
    auto& io1 = shards->at(1).io();
    io1.restart();
    EXPECT_GE(io1.poll_one(), 1u);
    EXPECT_GT(origin.conn->queued_bytes() + origin.peer().read(), 0u);
    ASSERT_TRUE(test::run_until(*shards, [&] { return !origin.peer().frames().empty(); }));
    EXPECT_EQ(test::reply_of(origin.peer().frames()[0]).request_id, 5);
    origin.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(callback_route, a_reply_to_a_gone_origin_is_dropped) {
    auto shards = test::owned_shards(2);
    net::callback_route route;
    {
        test::probed origin(shards->at(1));
        route = {1, origin.conn, 5};
        origin.conn->close(net::close_reason::peer_closed, "gone");
    }
    net::send_callback_reply(*shards, 0, route, test::ok_reply(5, test::empty_encaps()));
    net::send_callback_reply(*shards, 1, route, test::ok_reply(5, test::empty_encaps()));
    EXPECT_TRUE(route.origin.expired());
    EXPECT_GE(test::settle(*shards), 1u) << "the crossing ran and found nobody";
}
