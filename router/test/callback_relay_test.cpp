// callback_relay: after a takeover, a back end's requests for a session that moved go to the new
// process through the old one. Checked: relay_endpoints (loopback for wildcards, plain first, no
// udp); a callback for a session in transit waits, then reaches the new process's server endpoint
// (a loopback back end standing in for it) once taken, and its reply comes back under the back
// end's request id; oneways and SessionControl calls go the same way; callbacks past the
// per-session limit get ObjectNotExist; an unreachable new process gives UnknownLocalException;
// parked callbacks of a session that came back reach its client here.
#include "glacier2_harness.hpp"

#include <moraine/router/callback_relay.hpp>
#include <moraine/router/server_connection.hpp>
#include <moraine/router/session_control.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

/// Router A whose server endpoint (wildcard host) is where `b`, the new process, listens.
std::function<void(router::config&)> served_by(const test::loopback_backend& b) {
    const auto port = b.port();
    return [port](router::config& c) {
        c.server_endpoints = *protocol::endpoints_from_string("tcp -h 0.0.0.0 -p " + std::to_string(port));
    };
}

protocol::byte_buffer ping(std::string_view text) {
    return test::encaps([&](protocol::output_stream& os) { os.write_string(text); });
}

/// The requests `b` received, decoded (validate connection and the like left out).
std::vector<protocol::request_view> requests_at(const test::loopback_backend& b) {
    std::vector<protocol::request_view> out;
    for (const auto& m : b.requests)
        if (test::header_of(m).type == protocol::message_type::request) out.push_back(test::request_of(m));
    return out;
}

/// A session on shard 0 of `g`, handed over (in transit): its category.
std::string hand_over_session(test::glacier2& g) {
    auto& c = g.connect(0);
    EXPECT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    EXPECT_TRUE(c.conn->move_state().has_value());
    EXPECT_TRUE(c.conn->hand_over());
    return category;
}

}  // namespace

TEST(callback_relay, relay_endpoints_are_loopback_for_wildcards_plain_first_without_udp) {
    auto bound = protocol::endpoints_from_string(
        "ssl -h 0.0.0.0 -p 1:udp -h 0.0.0.0 -p 2:ws -h * -p 3:tcp -h 10.1.2.3 -p 4:tcp -h 0.0.0.0 -p 5");
    ASSERT_TRUE(bound);
    bound->back().host = "::";  // a colon would end the endpoint in the string form
    const auto out = router::relay_endpoints(*bound);
    ASSERT_EQ(out.size(), 4u);
    EXPECT_TRUE(out[0].is_tcp());
    EXPECT_EQ(out[0].host, "10.1.2.3");
    EXPECT_TRUE(out[1].is_tcp());
    EXPECT_EQ(out[1].host, "::1");
    EXPECT_TRUE(out[2].is_ws());
    EXPECT_EQ(out[2].host, "127.0.0.1");
    EXPECT_TRUE(out[3].is_ssl());
    EXPECT_EQ(out[3].host, "127.0.0.1");
}

TEST(callback_relay, callbacks_wait_while_in_transit_then_reach_the_new_process) {
    test::loopback_backend next;  // the new process's server endpoint
    test::glacier2 g(served_by(next));
    const auto category = hand_over_session(g);
    test::back_end b(g, 0);

    b.pair.peer.send(test::request_message(31, {"cb", category}, "notify", ping("one")));
    b.pair.peer.send(test::request_message(0, {"cb", category}, "notify", ping("oneway")));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return g.local(0).moved().parked() == 2; }));
    for (int i = 0; i < 20; ++i) test::run_until(g.shards(), [] { return false; }, std::chrono::milliseconds(1));
    next.pump();
    EXPECT_TRUE(b.pair.peer.frames().empty()) << "no answer while the new process has not answered";
    EXPECT_EQ(next.accepted(), 0u);

    g.router().moved_away(category);  // the new process took it
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        next.pump();
        return !b.pair.peer.frames().empty() && requests_at(next).size() == 2;
    }));
    const auto relayed = requests_at(next);
    EXPECT_EQ(relayed[0].operation, "notify");
    EXPECT_EQ(relayed[0].id.category, category);
    EXPECT_NE(relayed[0].request_id, 0);
    EXPECT_EQ(relayed[1].request_id, 0) << "a oneway stays a oneway";
    const auto r = test::reply_of(b.pair.peer.frames()[0]);
    EXPECT_EQ(r.request_id, 31);
    EXPECT_EQ(r.status, protocol::reply_status::ok);
    EXPECT_EQ(test::string_result(r), "one") << "the new process's reply (an echo)";
    EXPECT_EQ(g.local(0).moved().parked(), 0u);

    // Taken: a later callback and a SessionControl call go there at once.
    b.pair.peer.send(test::request_message(32, {"cb", category}, "notify", ping("two")));
    const auto control = router::session_control_category(test::glacier2_config());
    b.pair.peer.send(test::request_message(33, {category, control}, "getSessionTimeout", test::empty_encaps()));
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        next.pump();
        return b.pair.peer.frames().size() == 3;
    }));
    EXPECT_EQ(test::reply_of(b.pair.peer.frames()[1]).request_id, 32);
    EXPECT_EQ(test::string_result(test::reply_of(b.pair.peer.frames()[1])), "two");
    EXPECT_EQ(test::reply_of(b.pair.peer.frames()[2]).request_id, 33);
    EXPECT_EQ(requests_at(next).back().operation, "getSessionTimeout");
    EXPECT_EQ(next.accepted(), 1u) << "one connection to the new process, shared";
}

TEST(callback_relay, past_the_parking_limit_a_callback_gets_object_not_exist) {
    test::loopback_backend next;
    test::glacier2 g(served_by(next));
    const auto category = hand_over_session(g);
    test::back_end b(g, 0);
    const auto limit = static_cast<std::int32_t>(router::moved_sessions::max_parked);
    for (std::int32_t id = 1; id <= limit + 1; ++id)
        b.pair.peer.send(test::request_message(id, {"cb", category}, "notify", ping("x")));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return !b.pair.peer.frames().empty(); }));
    const auto over = test::reply_of(b.pair.peer.frames()[0]);
    EXPECT_EQ(over.request_id, limit + 1);
    EXPECT_EQ(over.status, protocol::reply_status::object_not_exist);
    EXPECT_EQ(g.local(0).moved().parked(), router::moved_sessions::max_parked);

    g.router().moved_away(category);
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        next.pump();
        return b.pair.peer.frames().size() == static_cast<std::size_t>(limit + 1);
    }));
    for (std::int32_t id = 1; id <= limit; ++id) {
        const auto r = test::reply_of(b.pair.peer.frames()[static_cast<std::size_t>(id)]);
        EXPECT_EQ(r.request_id, id) << "in the order they came";
        EXPECT_EQ(r.status, protocol::reply_status::ok);
    }
}

TEST(callback_relay, an_unreachable_new_process_gives_unknown_local_exception) {
    std::uint16_t closed_port = 0;
    {
        test::loopback_backend gone;  // its port is free again once it is destroyed
        closed_port = gone.port();
    }
    test::glacier2 g([closed_port](router::config& c) {
        c.server_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p " + std::to_string(closed_port));
    });
    const auto category = hand_over_session(g);
    test::back_end b(g, 0);
    g.router().moved_away(category);
    b.pair.peer.send(test::request_message(41, {"cb", category}, "notify", ping("x")));
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return !b.pair.peer.frames().empty(); }));
    const auto r = test::reply_of(b.pair.peer.frames()[0]);
    EXPECT_EQ(r.request_id, 41);
    EXPECT_EQ(r.status, protocol::reply_status::unknown_local_exception);
}

TEST(callback_relay, parked_callbacks_of_a_session_that_came_back_reach_its_client) {
    test::loopback_backend next;
    test::glacier2 g(served_by(next));
    auto& c = g.connect(0);
    ASSERT_FALSE(g.create_session(c).empty());
    const std::string category = c.conn->current_session()->category;
    test::back_end b(g, 0);
    // As for a session taken off its shard and refused: parked while away, delivered once back.
    auto& owner = g.local(0);
    owner.moved().leave(category);
    router::parked_callback p{false, test::request_message(0, {"cb", category}, "notify", ping("held")), {}, {}, {}, false, false, {}};
    ASSERT_TRUE(router::route_to_moved(owner, category, p));
    const std::size_t before = c.peer().frames().size();
    router::release_parked(owner, category, owner.moved().come_back(category), false);
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.peer().frames().size() > before; }));
    const auto cb = test::request_of(c.peer().frames()[before]);
    EXPECT_EQ(cb.operation, "notify");
    EXPECT_EQ(cb.id.category, category);
    EXPECT_FALSE(owner.moved().contains(category));
    next.pump();
    EXPECT_EQ(next.accepted(), 0u) << "nothing relayed";
}

TEST(callback_relay, topic_events_for_a_moved_session_follow_it_with_their_replies) {
    // The topic service beside the router delivers to a session that left: parked while it is in
    // transit, then relayed to the new process's server endpoint; a twoway event's reply comes
    // back to the delivery state (here: `replies`), a oneway stays a oneway.
    using delivery = net::session_directory::delivery;
    test::loopback_backend next;
    test::glacier2 g(served_by(next));
    const auto category = hand_over_session(g);
    net::session_directory::session_cache cache;
    std::vector<bool> replies;  // true: an OK reply; false: none (the relay failed)
    auto deliver = [&](std::string_view cat, std::string_view text, bool twoway) {
        const auto message = test::request_message(0, {"tick", std::string(cat)}, "tick", ping(text));
        auto make = [&] { return net::outbound_frame{message, {}}; };
        net::session_directory::reply_done done;
        if (twoway)
            done = [&](const protocol::reply_view* r) { replies.push_back(r && r->status == protocol::reply_status::ok); };
        return g.router().deliver(g.shards().at(0), cat, cache, 1 << 20, net::session_directory::frame_source(make), twoway,
                                  std::move(done));
    };

    EXPECT_EQ(deliver(category, "e1", true), delivery::queued);
    EXPECT_EQ(deliver(category, "e2", false), delivery::queued);
    EXPECT_EQ(g.local(0).moved().parked(), 2u) << "held while the session is in transit";
    EXPECT_EQ(deliver("never-here", "x", true), delivery::no_session) << "a session that never left this process";

    g.router().moved_away(category);  // the new process took it
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        next.pump();
        return requests_at(next).size() == 2 && replies.size() == 1;
    }));
    auto relayed = requests_at(next);
    EXPECT_EQ(relayed[0].operation, "tick");
    EXPECT_EQ(relayed[0].id.category, category);
    EXPECT_NE(relayed[0].request_id, 0);
    EXPECT_EQ(relayed[1].request_id, 0) << "a oneway event stays a oneway";
    EXPECT_EQ(replies, std::vector<bool>{true});

    // Taken: the next event goes there at once, in order after the parked ones.
    EXPECT_EQ(deliver(category, "e3", true), delivery::queued);
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        next.pump();
        return replies.size() == 2;
    }));
    relayed = requests_at(next);
    ASSERT_EQ(relayed.size(), 3u);
    protocol::input_stream in(relayed[2].params.payload(), relayed[2].params.encoding);
    EXPECT_EQ(in.read_string(), "e3");
    EXPECT_EQ(replies, (std::vector<bool>{true, true}));
}
