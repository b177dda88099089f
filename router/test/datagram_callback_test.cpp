// datagram_callback: requests that reached a udp server endpoint (a back end's ice_datagram()
// callbacks). Checked: one reaches the session its category names as a oneway request on the
// client's connection, on the session's own shard or across shards, with Server.Buffered too;
// an unknown category and a `_fwd=d` one are lost without harm; each is counted.
#include "glacier2_harness.hpp"

#include <moraine/router/datagram_callback.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

/// Hands `message` to route_datagram_callback on shard `shard`, as the udp receiver would.
void arrives(test::glacier2& g, unsigned shard, const protocol::byte_buffer& message) {
    router::route_datagram_callback(g.router(), g.shards().at(shard), test::request_of(message));
}

protocol::byte_buffer tick(const std::string& category,
                           const std::vector<std::pair<std::string, std::string>>& ctx = {}) {
    return test::request_message(0, {"cb", category}, "tick", test::empty_encaps(), 0, {}, ctx);
}

void delivered_as_oneway(unsigned client_shard, unsigned datagram_shard, bool buffered) {
    test::glacier2 g([&](router::config& cfg) { cfg.server_buffered = buffered; }, 2);
    auto& c = g.connect(client_shard);
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    const std::size_t before = c.peer().frames().size();
    arrives(g, datagram_shard, tick(category));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before; }));
    const auto r = test::request_of(c.peer().frames()[before]);
    EXPECT_EQ(r.request_id, 0) << "a datagram has no reply: delivered oneway";
    EXPECT_EQ(r.operation, "tick");
    EXPECT_EQ(r.id.category, category);
    EXPECT_EQ(g.local(client_shard).metrics().callbacks_forwarded, 1u);
    EXPECT_EQ(g.local(datagram_shard).metrics().datagram_callbacks, 1u);
}

}  // namespace

TEST(datagram_callback, reaches_the_session_as_a_oneway) { delivered_as_oneway(0, 0, false); }

TEST(datagram_callback, crosses_to_the_shard_owning_the_session) { delivered_as_oneway(1, 0, false); }

TEST(datagram_callback, is_delivered_through_the_buffered_queue) { delivered_as_oneway(0, 1, true); }

TEST(datagram_callback, an_unknown_category_or_fwd_d_is_lost_and_the_session_goes_on) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    const std::size_t before = c.peer().frames().size();
    arrives(g, 0, tick("no-such-session"));
    arrives(g, 0, tick(category, {{"_fwd", "d"}}));  // toward the client as a datagram: no way there
    arrives(g, 0, tick(category));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before; }));
    test::settle(g.shards());
    EXPECT_EQ(c.peer().frames().size(), before + 1) << "only the last one is delivered";
    EXPECT_EQ(g.local().metrics().callbacks_forwarded, 1u);
    EXPECT_EQ(g.local().metrics().datagram_callbacks, 3u);
    EXPECT_FALSE(c.conn->closed());
}
