// ice_connection: the base of every connection, driven over a socketpair with the shard run by
// the test thread. Checked: validate connection first, framing across reads, dispatch order,
// compressed messages, batches, protocol errors, slow consumers, graceful close, heartbeats and
// the close bookkeeping (on_closed once, metrics by close_reason).
#include "loop_harness.hpp"

#include <moraine/net/ice_connection.hpp>
#include <moraine/protocol/compression.hpp>

#include <gtest/gtest.h>

#include <algorithm>

using namespace moraine;
using test::probed;

namespace {

constexpr protocol::identity_view hello{"hello", ""};

protocol::byte_buffer ping(std::int32_t id) { return test::request_message(id, hello, "ice_ping", test::empty_encaps()); }

std::size_t closed_count(net::shard& sh, net::close_reason r) { return sh.metrics().closed[static_cast<std::size_t>(r)]; }

}  // namespace

TEST(ice_connection, accepted_connection_speaks_first_with_validate_connection) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_as_accepted();
    ASSERT_TRUE(test::run_until(*shards, [&] { return !p.peer().frames().empty(); }));
    const auto& first = p.peer().frames().front();
    EXPECT_EQ(first, test::validate_connection());
    EXPECT_EQ(test::header_of(first).type, protocol::message_type::validate_connection);
    EXPECT_EQ(sh.metrics().connections_accepted, 1u);
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, a_message_split_across_reads_is_dispatched_once_whole) {
    auto shards = test::owned_shards();
    probed p(shards->at(0));
    p.conn->start_plain();
    const auto msg = ping(7);
    p.peer().send(protocol::byte_view(msg).first(5));
    test::settle(*shards);
    test::run_until(*shards, [&] { return !p.conn->received.empty(); }, std::chrono::milliseconds(50));
    EXPECT_TRUE(p.conn->received.empty()) << "half a header must not be dispatched";
    p.peer().send(protocol::byte_view(msg).subspan(5));
    ASSERT_TRUE(test::run_until(*shards, [&] { return !p.conn->received.empty(); }));
    ASSERT_EQ(p.conn->received.size(), 1u);
    EXPECT_EQ(p.conn->received[0], msg);
    EXPECT_EQ(test::request_of(p.conn->received[0]).request_id, 7);
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, messages_of_one_read_are_dispatched_in_order) {
    auto shards = test::owned_shards();
    probed p(shards->at(0));
    p.conn->start_plain();
    protocol::byte_buffer three;
    for (int id : {1, 2, 3}) {
        auto m = ping(id);
        three.insert(three.end(), m.begin(), m.end());
    }
    p.peer().send(three);
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->received.size() == 3; }));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(test::request_of(p.conn->received[i]).request_id, i + 1);
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, a_compressed_message_is_dispatched_decompressed_and_marked_compressed) {
    auto shards = test::owned_shards();
    probed p(shards->at(0));
    p.conn->start_plain();
    // A request large and repetitive enough for bzip2 to be worth it.
    const auto params = test::encaps([](protocol::output_stream& os) { os.write_string(std::string(4000, 'x')); });
    const auto plain = test::request_message(9, hello, "say", params);
    auto compressed = protocol::compress_message(plain);
    ASSERT_TRUE(compressed.has_value());
    ASSERT_EQ(test::header_of(*compressed).compression, protocol::compression_status::compressed);
    p.peer().send(*compressed);
    ASSERT_TRUE(test::run_until(*shards, [&] { return !p.conn->received.empty(); }));
    // Byte 9 of the decompressed message's own header may differ; everything after it is the original.
    ASSERT_EQ(p.conn->received[0].size(), plain.size());
    EXPECT_TRUE(std::equal(plain.begin() + 10, plain.end(), p.conn->received[0].begin() + 10));
    EXPECT_EQ(test::request_of(p.conn->received[0]).operation, "say");
    EXPECT_EQ(p.conn->headers[0].compression, protocol::compression_status::compressed);
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, for_each_request_walks_a_batch_with_request_id_zero) {
    auto shards = test::owned_shards();
    probed p(shards->at(0));
    p.conn->start_plain();
    protocol::batch_builder batch;
    batch.add(test::request_message(0, hello, "first", test::empty_encaps()));
    batch.add(test::request_message(0, {"other", "cat"}, "second", test::empty_encaps()));
    p.peer().send(batch.finish());
    ASSERT_TRUE(test::run_until(*shards, [&] { return !p.conn->received.empty(); }));
    boost::system::error_code ec;
    auto f = protocol::parse_frame(p.conn->received[0], protocol::limits{0}, ec);
    ASSERT_TRUE(f);
    std::vector<std::string> ops;
    std::vector<std::int32_t> ids;
    EXPECT_TRUE(p.conn->each_request(*f, [&](const protocol::request_view& r) {
        ops.emplace_back(r.operation);
        ids.push_back(r.request_id);
        return true;
    }));
    EXPECT_EQ(ops, (std::vector<std::string>{"first", "second"}));
    EXPECT_EQ(ids, (std::vector<std::int32_t>{0, 0}));
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, bad_bytes_close_it_as_a_protocol_error) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_plain();
    const std::string garbage = "GET / HTTP/1.1\r\n\r\n";
    p.peer().send(protocol::byte_view(reinterpret_cast<const std::byte*>(garbage.data()), garbage.size()));
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->closed(); }));
    EXPECT_TRUE(p.conn->received.empty());
    ASSERT_EQ(p.conn->closes.size(), 1u);
    EXPECT_NE(p.conn->closes[0].find("protocol error"), std::string::npos) << p.conn->closes[0];
    EXPECT_EQ(sh.metrics().protocol_errors, 1u);
    EXPECT_EQ(closed_count(sh, net::close_reason::protocol_error), 1u);
    EXPECT_TRUE(test::run_until(*shards, [&] { return p.peer().eof(); })) << "the socket must be closed";
    test::finish(*shards);
}

TEST(ice_connection, a_message_over_message_size_max_is_refused) {
    auto shards = test::owned_shards(1, [](net::runtime_config& c) { c.message_size_max = 1024; });
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_plain();
    const auto params = test::encaps([](protocol::output_stream& os) { os.write_string(std::string(2000, 'y')); });
    p.peer().send(test::request_message(1, hello, "big", params));
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->closed(); }));
    EXPECT_TRUE(p.conn->received.empty());
    EXPECT_EQ(closed_count(sh, net::close_reason::protocol_error), 1u);
    test::finish(*shards);
}

TEST(ice_connection, the_peer_closing_is_counted_as_peer_closed) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_plain();
    const auto open_before = sh.metrics().connections_open;
    p.peer().reset();
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->closed(); }));
    EXPECT_EQ(closed_count(sh, net::close_reason::peer_closed), 1u);
    EXPECT_EQ(sh.metrics().connections_open, open_before - 1);
    test::finish(*shards);
}

TEST(ice_connection, close_is_idempotent_and_runs_on_closed_once) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_plain();
    p.conn->close(net::close_reason::policy, "first");
    p.conn->close(net::close_reason::io_error, "second");
    EXPECT_TRUE(p.conn->closed());
    EXPECT_EQ(p.conn->closes, (std::vector<std::string>{"first"}));
    EXPECT_EQ(closed_count(sh, net::close_reason::policy), 1u);
    EXPECT_EQ(closed_count(sh, net::close_reason::io_error), 0u);
    EXPECT_EQ(p.conn->enqueue(ping(1)), net::enqueue_result::over_limit) << "a closed connection takes nothing";
    test::finish(*shards);
}

TEST(ice_connection, queued_frames_leave_in_order_at_the_end_of_the_turn) {
    auto shards = test::owned_shards();
    probed p(shards->at(0));
    p.conn->start_plain();
    test::settle(*shards);
    EXPECT_EQ(p.conn->enqueue(test::ok_reply(1, test::empty_encaps())), net::enqueue_result::queued);
    EXPECT_EQ(p.conn->enqueue(test::ok_reply(2, test::empty_encaps())), net::enqueue_result::queued);
    EXPECT_GT(p.conn->queued_bytes(), 0u);
    EXPECT_EQ(p.peer().read(), 0u) << "nothing is written before the turn ends";
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.peer().frames().size() == 2; }));
    EXPECT_EQ(test::reply_of(p.peer().frames()[0]).request_id, 1);
    EXPECT_EQ(test::reply_of(p.peer().frames()[1]).request_id, 2);
    EXPECT_EQ(p.conn->queued_bytes(), 0u);
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, a_queue_past_its_hard_limit_closes_a_slow_consumer) {
    auto shards = test::owned_shards(1, [](net::runtime_config& c) {
        c.connection_queue_high = 1024;
        c.connection_queue_low = 256;
        c.connection_queue_max = 4096;
    });
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_plain();
    EXPECT_EQ(p.conn->enqueue(protocol::byte_buffer(2048)), net::enqueue_result::above_high);
    EXPECT_EQ(p.conn->enqueue(protocol::byte_buffer(4096)), net::enqueue_result::over_limit);
    EXPECT_TRUE(p.conn->closed());
    EXPECT_EQ(sh.metrics().slow_consumers_closed, 1u);
    EXPECT_EQ(closed_count(sh, net::close_reason::slow_consumer), 1u);
    EXPECT_EQ(sh.metrics().queue_bytes, 0u) << "a closed connection's frames no longer count as waiting";
    test::finish(*shards);
}

TEST(ice_connection, a_graceful_close_sends_close_connection_after_the_queue_and_nothing_after) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_plain();
    test::settle(*shards);
    p.conn->enqueue(test::ok_reply(5, test::empty_encaps()));
    p.conn->close_gracefully();
    EXPECT_EQ(sh.metrics().close_messages_pending, 1u);
    p.conn->enqueue(test::ok_reply(6, test::empty_encaps()));  // after the close message: dropped
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.peer().frames().size() >= 2; }));
    test::settle(*shards);
    const auto& frames = p.peer().frames();
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(test::reply_of(frames[0]).request_id, 5);
    EXPECT_EQ(test::header_of(frames[1]).type, protocol::message_type::close_connection);
    EXPECT_EQ(sh.metrics().close_messages_pending, 0u);
    EXPECT_FALSE(p.conn->closed()) << "the socket closes when the peer closes it";
    p.peer().reset();
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->closed(); }));
    test::finish(*shards);
}

TEST(ice_connection, a_request_after_the_close_message_is_not_dispatched_but_a_reply_is) {
    // The peer, told the close is graceful, sends its unanswered requests again elsewhere: one
    // dispatched here as well would run twice (a topic event delivered twice, seen in a takeover).
    auto shards = test::owned_shards();
    probed p(shards->at(0));
    p.conn->start_plain();
    p.peer().send(ping(1));
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->received.size() == 1; }));
    p.conn->close_gracefully();
    ASSERT_FALSE(p.conn->closed());
    p.peer().send(ping(2));
    protocol::batch_builder batch;
    batch.add(test::request_message(0, hello, "late", test::empty_encaps()));
    p.peer().send(batch.finish());
    const auto reply = test::ok_reply(9, test::empty_encaps());
    p.peer().send(reply);
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->received.size() == 2; }));
    test::settle(*shards);
    ASSERT_EQ(p.conn->received.size(), 2u) << "only the reply after the close message";
    EXPECT_EQ(test::request_of(p.conn->received[0]).request_id, 1);
    EXPECT_EQ(p.conn->received[1], reply);
    ASSERT_TRUE(test::run_until(*shards, [&] { return !p.peer().frames().empty(); }));
    EXPECT_EQ(test::header_of(p.peer().frames().back()).type, protocol::message_type::close_connection);
    // Reading goes on while closing, so the peer's close ends the connection at once (a parked
    // read would leave it open until the process ends).
    p.peer().reset();
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->closed(); }));
    test::finish(*shards);
}

TEST(ice_connection, a_graceful_close_with_a_request_at_a_back_end_is_forceful) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->start_plain();
    p.conn->request_forwarded();
    p.conn->close_gracefully();
    EXPECT_TRUE(p.conn->closed());
    EXPECT_EQ(closed_count(sh, net::close_reason::shutdown), 1u);
    test::finish(*shards);
}

TEST(ice_connection, heartbeat_if_idle_sends_only_after_a_quiet_period) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    probed p(sh);
    p.conn->heartbeat();  // loops not started: nothing
    EXPECT_EQ(sh.metrics().heartbeats_sent, 0u);
    p.conn->start_plain();
    p.conn->enqueue(test::ok_reply(1, test::empty_encaps()));
    p.conn->heartbeat_if_idle();  // something was queued since the last call: no heartbeat
    EXPECT_EQ(sh.metrics().heartbeats_sent, 0u);
    p.conn->heartbeat_if_idle();  // nothing since: heartbeat
    EXPECT_EQ(sh.metrics().heartbeats_sent, 1u);
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.peer().frames().size() == 2; }));
    EXPECT_EQ(test::header_of(p.peer().frames()[1]).type, protocol::message_type::validate_connection);
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, on_frame_returning_false_stops_reading) {
    auto shards = test::owned_shards();
    probed p(shards->at(0));
    p.conn->stop_reading = true;
    p.conn->start_plain();
    p.peer().send(ping(1));
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.conn->received.size() == 1; }));
    p.peer().send(ping(2));
    test::run_until(*shards, [&] { return p.conn->received.size() > 1; }, std::chrono::milliseconds(50));
    EXPECT_EQ(p.conn->received.size(), 1u);
    EXPECT_FALSE(p.conn->closed());
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(ice_connection, a_connection_is_freed_once_closed_and_run_dry) {
    auto shards = test::owned_shards();
    std::weak_ptr<test::probe_connection> weak;
    {
        probed p(shards->at(0));
        p.conn->start_as_accepted();
        test::settle(*shards);
        weak = p.conn;
        p.conn->close(net::close_reason::shutdown, "test over");
        p.conn.reset();
        test::finish(*shards);
    }
    EXPECT_TRUE(weak.expired()) << "a pending read or write kept the connection alive";
}
