// backend_connection: the router's outgoing connection to a back end, against a loopback back
// end polled by the test. Checked: router-originated calls and their replies, forwarding a
// client's request (fresh request id, context kept or dropped, reply relayed under the client's
// id), oneways, holding frames until the back end validates, connection refused, and a lost
// connection failing what is pending.
#include "loop_harness.hpp"

#include <moraine/net/backend_connection.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <gtest/gtest.h>

#include <optional>

using namespace moraine;

namespace {

constexpr protocol::identity_view hello{"hello", ""};

std::shared_ptr<net::backend_connection> connect_to(net::shard& sh, const std::string& endpoint) {
    auto eps = protocol::endpoints_from_string(endpoint);
    auto c = std::make_shared<net::backend_connection>(sh, *eps, "test-key");
    c->start();
    return c;
}

/// What a reply_handler was told.
struct outcome {
    bool called = false;
    std::optional<protocol::reply_status> status;
    protocol::byte_buffer payload;
    std::string failure;

    net::reply_handler handler() {
        return [this](const protocol::reply_view* r, std::string_view why) {
            called = true;
            if (r) {
                status = r->status;
                payload.assign(r->payload.begin(), r->payload.end());
            }
            failure = why;
        };
    }
};

protocol::byte_buffer say(std::string_view text) {
    return test::encaps([&](protocol::output_stream& os) { os.write_string(text); });
}

/// A port on 127.0.0.1 with nothing listening.
unsigned short closed_port() {
    test::loopback_backend b;
    return b.port();  // closed when b goes
}

}  // namespace

TEST(backend_connection, invoke_sends_a_twoway_with_a_fresh_id_and_hands_back_the_reply) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::loopback_backend backend;
    auto c = connect_to(sh, backend.endpoint());
    outcome got;
    const auto params = say("hi");
    c->invoke(test::request_message(0, hello, "echo", params), got.handler());
    EXPECT_EQ(c->in_flight(), 1u);
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return got.called;
    }));
    EXPECT_TRUE(c->validated());
    ASSERT_EQ(backend.requests.size(), 1u);
    const auto r = test::request_of(backend.requests[0]);
    EXPECT_NE(r.request_id, 0) << "a twoway gets a request id of the connection";
    EXPECT_EQ(r.operation, "echo");
    ASSERT_TRUE(got.status);
    EXPECT_EQ(*got.status, protocol::reply_status::ok);
    EXPECT_TRUE(got.failure.empty());
    protocol::input_stream in(got.payload);
    EXPECT_EQ(in.read_encapsulation().bytes.size(), params.size());
    EXPECT_EQ(c->in_flight(), 0u);
    c->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(backend_connection, forward_relays_the_reply_under_the_clients_request_id) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::loopback_backend backend;
    auto c = connect_to(sh, backend.endpoint());
    test::probed client(sh);
    client.conn->start_plain();
    const auto msg = test::request_message(42, hello, "echo", say("x"), 0, {}, {{"k", "v"}});
    const auto r = test::request_of(msg);
    c->forward(r, /*keep_context=*/false, /*twoway=*/true, client.conn, 42, 0);
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return !client.conn->replies.empty();
    }));
    ASSERT_EQ(backend.requests.size(), 1u);
    const auto sent = test::request_of(backend.requests[0]);
    EXPECT_EQ(sent.operation, "echo");
    EXPECT_EQ(sent.id.name, "hello");
    EXPECT_TRUE(sent.context.empty()) << "Glacier2.Client.ForwardContext=0 drops the context";
    ASSERT_EQ(client.conn->replies.size(), 1u);
    EXPECT_EQ(client.conn->replies[0].request_id, 42);
    EXPECT_EQ(client.conn->replies[0].status, protocol::reply_status::ok);
    client.conn->close(net::close_reason::shutdown, "test over");
    c->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(backend_connection, forward_keeps_the_context_when_asked) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::loopback_backend backend;
    auto c = connect_to(sh, backend.endpoint());
    test::probed client(sh);
    client.conn->start_plain();
    const auto msg = test::request_message(3, hello, "echo", say("x"), 0, {}, {{"k", "v"}});
    c->forward(test::request_of(msg), /*keep_context=*/true, true, client.conn, 3, 0);
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return !backend.requests.empty();
    }));
    const auto sent = test::request_of(backend.requests[0]);
    ASSERT_EQ(sent.context.entries.size(), 1u);
    EXPECT_EQ(sent.context.find("k"), std::optional<std::string_view>("v"));
    client.conn->close(net::close_reason::shutdown, "test over");
    c->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(backend_connection, a_oneway_goes_out_with_request_id_zero_and_awaits_nothing) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::loopback_backend backend;
    auto c = connect_to(sh, backend.endpoint());
    test::probed client(sh);
    const auto msg = test::request_message(0, hello, "tick", test::empty_encaps());
    c->forward(test::request_of(msg), false, /*twoway=*/false, client.conn, 0, 0);
    EXPECT_EQ(c->in_flight(), 0u);
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return !backend.requests.empty();
    }));
    EXPECT_EQ(test::request_of(backend.requests[0]).request_id, 0);
    EXPECT_EQ(test::request_of(backend.requests[0]).operation, "tick");
    c->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(backend_connection, nothing_is_written_before_the_back_end_validates) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::loopback_backend backend;
    backend.never_validate();
    auto c = connect_to(sh, backend.endpoint());
    outcome got;
    c->invoke(test::request_message(0, hello, "echo", say("early")), got.handler());
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return backend.accepted() == 1;
    }));
    // Connected: let the router's side run everything it has to do, then look at the wire.
    test::run_until(*shards, [&] { return false; }, std::chrono::milliseconds(20));
    backend.pump();
    EXPECT_TRUE(backend.requests.empty()) << "a request left before validate connection";
    EXPECT_FALSE(c->validated());
    backend.validate_now();
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return got.called;
    }));
    EXPECT_TRUE(c->validated());
    ASSERT_EQ(backend.requests.size(), 1u);
    EXPECT_EQ(test::request_of(backend.requests[0]).operation, "echo");
    c->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(backend_connection, a_refused_connection_fails_calls_with_glacier2s_text) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    auto c = connect_to(sh, "tcp -h 127.0.0.1 -p " + std::to_string(closed_port()));
    bool connect_failed = false;
    c->on_connect_failed([&] { connect_failed = true; });
    outcome got;
    c->invoke(test::request_message(0, hello, "echo", test::empty_encaps()), got.handler());
    ASSERT_TRUE(test::run_until(*shards, [&] { return got.called; }));
    EXPECT_FALSE(got.status);
    EXPECT_EQ(got.failure, net::connection_refused_text);
    EXPECT_TRUE(c->failed_unconnected());
    EXPECT_TRUE(connect_failed);
    test::finish(*shards);
}

TEST(backend_connection, a_lost_connection_answers_forwarded_twoways_with_connection_lost) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::loopback_backend backend;
    backend.answer_with([](const protocol::request_view&) { return protocol::byte_buffer{}; });  // never answers
    auto c = connect_to(sh, backend.endpoint());
    test::probed client(sh);
    client.conn->start_plain();
    const auto msg = test::request_message(8, hello, "slow", test::empty_encaps());
    c->forward(test::request_of(msg), false, true, client.conn, 8, 0);
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return !backend.requests.empty();
    }));
    EXPECT_EQ(c->in_flight(), 1u);
    backend.drop_connections();
    ASSERT_TRUE(test::run_until(*shards, [&] { return !client.peer().frames().empty(); }));
    const auto reply = test::reply_of(client.peer().frames()[0]);
    EXPECT_EQ(reply.request_id, 8);
    ASSERT_EQ(reply.status, protocol::reply_status::unknown_local_exception);
    const auto text = protocol::decode_unknown_text(reply.payload);
    ASSERT_TRUE(text);
    EXPECT_NE(text->find("ConnectionLostException"), std::string_view::npos) << *text;
    EXPECT_TRUE(c->closed());
    EXPECT_FALSE(c->failed_unconnected()) << "it had been validated";
    client.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}
