// session_control: Glacier2::SessionControl and its StringSet / IdentitySet objects, called
// through dispatch_session_control with the reply routed to a probe connection. Checked: the
// category names, the proxy handed to a SessionManager, getSessionTimeout, editing a session's
// category filter, destroy, ObjectNotExist for an unknown session, and for a session in transit
// to a new process whose parking is full.
#include "glacier2_harness.hpp"

#include <moraine/protocol/input_stream.hpp>
#include <moraine/router/moved_sessions.hpp>
#include <moraine/router/session_control.hpp>
#include <moraine/router/session_shard.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

/// Calls SessionControl-side `operation` on object {session, category} and returns the reply.
protocol::byte_buffer control_call(test::glacier2& g, test::probed& origin, const std::string& session,
                                   const std::string& category, std::string_view operation,
                                   const protocol::byte_buffer& params) {
    const std::size_t before = origin.peer().frames().size();
    router::dispatch_session_control(g.local(), test::request_message(0, {session, category}, operation, params), true,
                                     net::callback_route{0, origin.conn, 12});
    EXPECT_TRUE(test::run_until(g.shards(), [&] { return origin.peer().frames().size() > before; }));
    return origin.peer().frames().size() > before ? origin.peer().frames()[before] : protocol::byte_buffer{};
}

protocol::byte_buffer strings(std::initializer_list<std::string_view> items) {
    return test::encaps([&](protocol::output_stream& os) {
        os.write_size(static_cast<std::int32_t>(items.size()));
        for (auto s : items) os.write_string(s);
    });
}

}  // namespace

TEST(session_control, category_names_follow_the_instance_name) {
    auto cfg = test::glacier2_config();
    cfg.instance_name = "Edge";
    EXPECT_EQ(router::session_control_category(cfg), "Edge.SessionControl");
    EXPECT_TRUE(router::is_session_control_category(cfg, "Edge.SessionControl"));
    EXPECT_TRUE(router::is_session_control_category(cfg, "Edge.SessionControl.categories"));
    EXPECT_FALSE(router::is_session_control_category(cfg, "Glacier2.SessionControl"));
    EXPECT_FALSE(router::is_session_control_category(cfg, "Edge"));
}

TEST(session_control, the_proxy_names_the_session_at_the_server_endpoints_or_is_nil) {
    const auto cfg = test::glacier2_config();
    const auto p = router::session_control_proxy(cfg, cfg.server_endpoints, "abc");
    EXPECT_EQ(p.id.name, "abc");
    EXPECT_EQ(p.id.category, "Glacier2.SessionControl");
    ASSERT_EQ(p.endpoints.size(), 1u);
    EXPECT_EQ(p.endpoints[0].port, 4064);
    EXPECT_TRUE(router::session_control_proxy(cfg, {}, "abc").is_nil());
}

TEST(session_control, get_session_timeout_and_category_filter_editing) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string session = c.conn->current_session()->category;
    test::probed origin(g.shards().at(0));
    origin.conn->start_plain();

    const auto timeout = control_call(g, origin, session, "Glacier2.SessionControl", "getSessionTimeout",
                                      test::empty_encaps());
    EXPECT_EQ(test::reply_of(timeout).request_id, 12) << "answered under the route's request id";
    EXPECT_EQ(test::results_of(timeout).read_int(), 30);

    const auto added = control_call(g, origin, session, "Glacier2.SessionControl.categories", "add",
                                    strings({"allowed", "also"}));
    EXPECT_EQ(test::reply_of(added).status, protocol::reply_status::ok);
    const auto& cats = c.conn->current_session()->filters.categories();
    EXPECT_EQ(cats, (std::vector<std::string>{"allowed", "also"}));

    control_call(g, origin, session, "Glacier2.SessionControl.categories", "remove", strings({"also"}));
    const auto got = control_call(g, origin, session, "Glacier2.SessionControl.categories", "get", test::empty_encaps());
    auto in = test::results_of(got);
    ASSERT_EQ(in.read_size(), 1);
    EXPECT_EQ(in.read_string(), "allowed");
    origin.conn->close(net::close_reason::shutdown, "test over");
}

TEST(session_control, destroy_ends_the_session) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string session = c.conn->current_session()->category;
    test::probed origin(g.shards().at(0));
    origin.conn->start_plain();
    const auto reply = control_call(g, origin, session, "Glacier2.SessionControl", "destroy", test::empty_encaps());
    EXPECT_EQ(test::reply_of(reply).status, protocol::reply_status::ok);
    EXPECT_EQ(c.conn->current_session(), nullptr);
    EXPECT_EQ(g.local().session_count(), 0u);
    origin.conn->close(net::close_reason::shutdown, "test over");
}

TEST(session_control, an_unknown_session_or_operation_is_not_exist) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    test::probed origin(g.shards().at(0));
    origin.conn->start_plain();
    const auto nobody = control_call(g, origin, "nobody", "Glacier2.SessionControl", "destroy", test::empty_encaps());
    EXPECT_EQ(test::reply_of(nobody).status, protocol::reply_status::object_not_exist);
    const auto odd = control_call(g, origin, c.conn->current_session()->category, "Glacier2.SessionControl", "explode",
                                  test::empty_encaps());
    EXPECT_EQ(test::reply_of(odd).status, protocol::reply_status::operation_not_exist);
    EXPECT_NE(c.conn->current_session(), nullptr);
    origin.conn->close(net::close_reason::shutdown, "test over");
}

TEST(session_control, a_call_for_a_moved_session_refused_parking_is_not_exist_from_one_decode) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    test::probed origin(g.shards().at(0));
    origin.conn->start_plain();
    // A session in transit to a new process (takeover) whose parking is full: the next call
    // cannot be parked and is answered here, from the request decoded before parking was tried.
    auto& moved = g.local().moved();
    moved.leave("gone");
    for (std::size_t i = 0; i < router::moved_sessions::max_parked; ++i)
        router::dispatch_session_control(g.local(),
                                         test::request_message(0, {"gone", "Glacier2.SessionControl"}, "destroy",
                                                               test::empty_encaps()),
                                         false, net::callback_route{0, {}, 0});
    ASSERT_EQ(moved.parked(), router::moved_sessions::max_parked);

    const auto reply = control_call(g, origin, "gone", "Glacier2.SessionControl", "getSessionTimeout",
                                    test::empty_encaps());
    const auto r = test::reply_of(reply);
    EXPECT_EQ(r.request_id, 12) << "answered under the route's request id";
    EXPECT_EQ(r.status, protocol::reply_status::object_not_exist);
    protocol::input_stream in(r.payload);  // ObjectNotExist: identity, facet, operation
    const auto id = in.read_identity();
    EXPECT_EQ(id.name, "gone");
    EXPECT_EQ(id.category, "Glacier2.SessionControl");
    EXPECT_EQ(in.read_size(), 0) << "no facet";
    EXPECT_EQ(in.read_string(), "getSessionTimeout");
    EXPECT_TRUE(in.ok());
    EXPECT_EQ(moved.parked(), router::moved_sessions::max_parked) << "refused, not parked";
    EXPECT_NE(c.conn->current_session(), nullptr) << "another session is untouched";
    origin.conn->close(net::close_reason::shutdown, "test over");
}
