// server_connection: a back end's connection to the server endpoint. Checked: a callback to a
// session's category reaches that session's client connection as a request, the client's reply
// goes back to the back end under the back end's request id, a callback for an unknown session
// gets ObjectNotExist, and a session on another shard is reached across shards.
#include "glacier2_harness.hpp"

#include <moraine/router/server_connection.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

void callback_round_trip(unsigned client_shard, unsigned server_shard) {
    test::glacier2 g({}, 2);
    auto& c = g.connect(client_shard);
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    ASSERT_EQ(g.router().owner_of(category), client_shard);
    test::back_end b(g, server_shard);

    const auto params = test::encaps([](protocol::output_stream& os) { os.write_string("ping"); });
    b.pair.peer.send(test::request_message(31, {"cb", category}, "notify", params));
    const std::size_t before = c.peer().frames().size();
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before; }));
    const auto cb_msg = c.peer().frames()[before];
    const auto cb = test::request_of(cb_msg);
    EXPECT_EQ(cb.operation, "notify");
    EXPECT_EQ(cb.id.category, category);
    EXPECT_NE(cb.request_id, 0) << "a twoway callback";

    // The client answers its callback: the back end gets the reply under its own id 31.
    c.peer().send(test::ok_reply(cb.request_id, test::encaps([](protocol::output_stream& os) { os.write_string("pong"); })));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return !b.pair.peer.frames().empty(); }));
    const auto r = test::reply_of(b.pair.peer.frames()[0]);
    EXPECT_EQ(r.request_id, 31);
    EXPECT_EQ(r.status, protocol::reply_status::ok);
    EXPECT_EQ(test::string_result(r), "pong");
    EXPECT_EQ(g.local(client_shard).metrics().callbacks_forwarded, 1u);
}

}  // namespace

TEST(server_connection, a_callback_reaches_the_session_and_its_reply_the_back_end) { callback_round_trip(0, 0); }

TEST(server_connection, a_callback_crosses_to_the_shard_owning_the_session) { callback_round_trip(1, 0); }

TEST(server_connection, a_callback_for_an_unknown_session_gets_object_not_exist) {
    test::glacier2 g;
    test::back_end b(g, 0);
    b.pair.peer.send(test::request_message(4, {"cb", "no-such-session"}, "notify", test::empty_encaps()));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return !b.pair.peer.frames().empty(); }));
    const auto r = test::reply_of(b.pair.peer.frames()[0]);
    EXPECT_EQ(r.request_id, 4);
    EXPECT_EQ(r.status, protocol::reply_status::object_not_exist);
}

TEST(server_connection, a_oneway_callback_is_delivered_as_a_oneway) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    test::back_end b(g, 0);
    b.pair.peer.send(test::request_message(0, {"cb", c.conn->current_session()->category}, "tick", test::empty_encaps()));
    const std::size_t before = c.peer().frames().size();
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before; }));
    EXPECT_EQ(test::request_of(c.peer().frames()[before]).request_id, 0);
    EXPECT_EQ(test::request_of(c.peer().frames()[before]).operation, "tick");
}
