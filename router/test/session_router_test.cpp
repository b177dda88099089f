// session_router: the Glacier2 router as a net::session_directory for the services beside it.
// Checked: deliver() writes a frame onto the session's client connection (built only when it
// will be queued), refuses a full queue and an unknown session, routes a twoway's reply to its
// done handler, reuses its cache; hosts(), forwards_context(), and the session set-up limit.
#include "glacier2_harness.hpp"

#include <moraine/router/session_router.hpp>

#include <gtest/gtest.h>

using namespace moraine;
using delivery = net::session_directory::delivery;

namespace {

/// A frame source making a request `operation` to {sub, category}, counting how often it ran.
struct event_maker {
    std::string category;
    std::string operation = "event";
    int built = 0;
    net::outbound_frame operator()() {
        ++built;
        return net::outbound_frame{test::request_message(0, {"sub", category}, operation, test::empty_encaps()), {}};
    }
};

}  // namespace

TEST(session_router, deliver_queues_a_frame_on_the_sessions_client_connection) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    net::session_directory& dir = g.router();
    net::session_directory::session_cache cache;
    event_maker make{category};
    const std::size_t before = c.peer().frames().size();
    EXPECT_EQ(dir.deliver(g.shards().at(0), category, cache, 1 << 20, net::session_directory::frame_source(make), false,
                          nullptr),
              delivery::queued);
    EXPECT_EQ(make.built, 1);
    EXPECT_FALSE(cache.connection.expired()) << "the connection is cached for the next event";
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before; }));
    const auto ev = test::request_of(c.peer().frames()[before]);
    EXPECT_EQ(ev.operation, "event");
    EXPECT_EQ(ev.request_id, 0);

    make.operation = "second";
    EXPECT_EQ(dir.deliver(g.shards().at(0), category, cache, 1 << 20, net::session_directory::frame_source(make), false,
                          nullptr),
              delivery::queued);
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before + 1; }));
    EXPECT_EQ(test::request_of(c.peer().frames()[before + 1]).operation, "second");
}

TEST(session_router, deliver_to_an_unknown_session_or_a_full_queue_builds_nothing) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    net::session_directory::session_cache cache;
    event_maker make{category};
    EXPECT_EQ(g.router().deliver(g.shards().at(0), "nobody", cache, 1 << 20, net::session_directory::frame_source(make),
                                 false, nullptr),
              delivery::no_session);
    // Something queued and a limit of one byte: the queue counts as full.
    c.conn->enqueue(test::ok_reply(99, test::empty_encaps()));
    EXPECT_EQ(g.router().deliver(g.shards().at(0), category, cache, 1, net::session_directory::frame_source(make), false,
                                 nullptr),
              delivery::queue_full);
    EXPECT_EQ(make.built, 0);
}

TEST(session_router, a_delivered_twoway_gets_its_reply_through_done) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    net::session_directory::session_cache cache;
    event_maker make{category};
    std::optional<protocol::reply_status> answered;
    const std::size_t before = c.peer().frames().size();
    ASSERT_EQ(g.router().deliver(g.shards().at(0), category, cache, 1 << 20, net::session_directory::frame_source(make),
                                 true, [&](const protocol::reply_view* r) { answered = r ? r->status : protocol::reply_status::unknown_exception; }),
              delivery::queued);
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before; }));
    const auto ev = test::request_of(c.peer().frames()[before]);
    ASSERT_NE(ev.request_id, 0) << "a twoway event gets a request id";
    EXPECT_FALSE(answered);
    c.peer().send(test::ok_reply(ev.request_id, test::empty_encaps()));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return answered.has_value(); }));
    EXPECT_EQ(*answered, protocol::reply_status::ok);
}

TEST(session_router, a_twoway_whose_connection_closes_gets_a_null_reply) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    net::session_directory::session_cache cache;
    event_maker make{c.conn->current_session()->category};
    bool called = false, null_reply = false;
    g.router().deliver(g.shards().at(0), make.category, cache, 1 << 20, net::session_directory::frame_source(make), true,
                       [&](const protocol::reply_view* r) {
                           called = true;
                           null_reply = r == nullptr;
                       });
    c.conn->close(net::close_reason::peer_closed, "client gone");
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return called; }));
    EXPECT_TRUE(null_reply);
    EXPECT_EQ(g.router().deliver(g.shards().at(0), make.category, cache, 1 << 20,
                                 net::session_directory::frame_source(make), false, nullptr),
              delivery::no_session)
        << "a cached connection that closed is not used";
}

TEST(session_router, hosts_proxies_at_its_server_endpoints) {
    test::glacier2 g([](router::config& cfg) { cfg.server_forward_context = true; });
    EXPECT_TRUE(g.router().hosts(*protocol::proxy_from_string("cat/cb:tcp -h 127.0.0.1 -p 4064")));
    EXPECT_FALSE(g.router().hosts(*protocol::proxy_from_string("cat/cb:tcp -h 127.0.0.1 -p 9999")));
    EXPECT_TRUE(g.router().forwards_context());
}

TEST(session_router, begin_setup_reserves_room_under_the_session_limit) {
    test::glacier2 g;
    auto& r = g.router();
    EXPECT_TRUE(r.begin_setup(2));
    EXPECT_TRUE(r.begin_setup(2));
    EXPECT_FALSE(r.begin_setup(2)) << "two set-ups in progress fill a limit of two";
    r.end_setup();
    r.session_opened();  // one set-up became a session
    EXPECT_FALSE(r.begin_setup(2)) << "one session and one set-up";
    r.end_setup();
    EXPECT_TRUE(r.begin_setup(2));
    r.end_setup();
    r.session_closed();
    EXPECT_EQ(r.sessions_open(), 0u);
}
