// client_connection: a Glacier2 client's connection, over a socketpair, with back ends on
// loopback. Checked: createSession installs a session, a routed request reaches the back end
// and its reply comes back under the client's request id with the back end's bytes, an unknown
// target gets ObjectNotExist, an unreachable back end gets Glacier2's ConnectionRefused text,
// a request before a session drops the connection, and closing ends the session.
#include "glacier2_harness.hpp"

#include <moraine/router/client_connection.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

protocol::byte_buffer say(std::string_view text) {
    return test::encaps([&](protocol::output_stream& os) { os.write_string(text); });
}

}  // namespace

TEST(client_connection, create_session_installs_a_session_and_registers_it_on_the_shard) {
    test::glacier2 g;
    auto& c = g.connect();
    EXPECT_EQ(c.conn->current_session(), nullptr);
    const auto reply = g.create_session(c, "alice");
    ASSERT_FALSE(reply.empty());
    const auto r = test::reply_of(reply);
    EXPECT_EQ(r.request_id, 1);
    EXPECT_EQ(r.status, protocol::reply_status::ok);
    ASSERT_NE(c.conn->current_session(), nullptr);
    EXPECT_EQ(c.conn->current_session()->user_id, "alice");
    EXPECT_EQ(g.local().session_count(), 1u);
    EXPECT_EQ(g.local().find_session(c.conn->current_session()->category), c.conn.get());
    EXPECT_EQ(g.local().metrics().sessions_created, 1u);
    EXPECT_EQ(g.router().sessions_open(), 1u);
}

TEST(client_connection, a_routed_request_is_forwarded_and_its_reply_relayed_under_the_clients_id) {
    test::glacier2 g;
    test::loopback_backend backend;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    ASSERT_EQ(test::reply_of(g.add_proxy(c, "hello:" + backend.endpoint())).status, protocol::reply_status::ok);
    c.next_id = 77;
    const auto reply = g.call(c, {"hello", ""}, "sayHello", say("world"), [&] { backend.pump(); });
    ASSERT_FALSE(reply.empty()) << "no reply relayed";
    const auto r = test::reply_of(reply);
    EXPECT_EQ(r.request_id, 77) << "the client's own request id";
    EXPECT_EQ(r.status, protocol::reply_status::ok);
    EXPECT_EQ(test::string_result(r), "world") << "the back end's results, verbatim";
    ASSERT_EQ(backend.requests.size(), 1u);
    const auto sent = test::request_of(backend.requests[0]);
    EXPECT_EQ(sent.operation, "sayHello");
    EXPECT_EQ(sent.id.name, "hello");
    EXPECT_EQ(g.local().metrics().requests_forwarded, 1u);
    EXPECT_EQ(g.local().metrics().replies_forwarded, 1u);
}

TEST(client_connection, a_oneway_is_forwarded_without_a_reply) {
    test::glacier2 g;
    test::loopback_backend backend;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    g.add_proxy(c, "hello:" + backend.endpoint());
    const auto frames_before = c.peer().frames().size();
    c.peer().send(test::request_message(0, {"hello", ""}, "tick", say("t")));
    ASSERT_TRUE(test::run_until(g.shards(), [&] {
        backend.pump();
        return !backend.requests.empty();
    }));
    EXPECT_EQ(test::request_of(backend.requests[0]).request_id, 0);
    EXPECT_EQ(c.peer().frames().size(), frames_before);
}

TEST(client_connection, the_context_is_forwarded_only_when_configured) {
    for (bool forward : {false, true}) {
        test::glacier2 g([&](router::config& cfg) { cfg.client_forward_context = forward; });
        test::loopback_backend backend;
        auto& c = g.connect();
        ASSERT_FALSE(g.create_session(c).empty());
        g.add_proxy(c, "hello:" + backend.endpoint());
        ASSERT_FALSE(g.call(c, {"hello", ""}, "op", say("x"), [&] { backend.pump(); }, {{"trace", "on"}}).empty());
        ASSERT_EQ(backend.requests.size(), 1u);
        const auto sent = test::request_of(backend.requests[0]);
        EXPECT_EQ(sent.context.find("trace").has_value(), forward) << "ForwardContext=" << forward;
    }
}

TEST(client_connection, a_target_outside_the_routing_table_gets_object_not_exist) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const auto reply = g.call(c, {"nobody", ""}, "op", test::empty_encaps());
    ASSERT_FALSE(reply.empty());
    const auto r = test::reply_of(reply);
    EXPECT_EQ(r.status, protocol::reply_status::object_not_exist);
    auto info = protocol::decode_not_exist(r.payload);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->id.name, "nobody");
    EXPECT_FALSE(c.conn->closed());
}

TEST(client_connection, an_unreachable_back_end_gets_connection_refused) {
    unsigned short port;
    {
        test::loopback_backend gone;
        port = gone.port();
    }
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    g.add_proxy(c, "hello:tcp -h 127.0.0.1 -p " + std::to_string(port));
    const auto reply = g.call(c, {"hello", ""}, "op", test::empty_encaps());
    ASSERT_FALSE(reply.empty());
    const auto r = test::reply_of(reply);
    ASSERT_EQ(r.status, protocol::reply_status::unknown_local_exception);
    EXPECT_EQ(protocol::decode_unknown_text(r.payload).value(), net::connection_refused_text);
}

TEST(client_connection, a_routed_request_before_a_session_drops_the_connection) {
    test::glacier2 g;
    auto& c = g.connect();
    EXPECT_TRUE(g.call(c, {"hello", ""}, "op", test::empty_encaps()).empty());
    EXPECT_TRUE(c.conn->closed());
    EXPECT_EQ(g.shards().at(0).metrics().closed[static_cast<std::size_t>(net::close_reason::policy)], 1u);
    EXPECT_TRUE(test::run_until(g.shards(), [&] { return c.peer().eof(); }));
}

TEST(client_connection, closing_ends_the_session) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    ASSERT_EQ(g.local().session_count(), 1u);
    c.peer().reset();  // the client goes away
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return c.conn->closed(); }));
    EXPECT_EQ(g.local().session_count(), 0u);
    EXPECT_EQ(g.router().sessions_open(), 0u);
    EXPECT_EQ(g.local().metrics().sessions_destroyed, 1u);
}

TEST(client_connection, a_compressed_capable_client_gets_large_replies_compressed) {
    test::glacier2 g;
    test::loopback_backend backend;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    g.add_proxy(c, "hello:" + backend.endpoint());
    // Compression byte 1: the client accepts a compressed reply; the echo is large and repetitive.
    auto msg = test::request_message(5, {"hello", ""}, "big", say(std::string(2000, 'z')));
    msg[9] = std::byte{1};
    const auto reply = g.exchange(c, msg, [&] { backend.pump(); });
    ASSERT_FALSE(reply.empty());
    EXPECT_EQ(test::header_of(reply).compression, protocol::compression_status::compressed);
}
