// layered_stream: the TLS and WebSocket layers of a connection driven with bytes only, two
// codecs (or a codec and an engine) playing the router and its peer.
#include <moraine/transport/layered_stream.hpp>

#include <moraine/transport/tls_engine.hpp>
#include <moraine/transport/ws_client_upgrade.hpp>
#include <moraine/transport/ws_masked_frame.hpp>

#include "tls_records.hpp"
#include "tls_test_contexts.hpp"
#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace moraine::transport {
namespace {

using protocol::byte_buffer;
using protocol::byte_view;
using test::hex;
using test::record_count;
using test::pattern;
using test::to_hex;

std::string text(byte_view b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }
byte_buffer bytes_of(std::string_view s) {
    const auto b = protocol::as_bytes(s);
    return {b.begin(), b.end()};
}
void append(byte_buffer& to, byte_view b) { to.insert(to.end(), b.begin(), b.end()); }

/// A sink that records what a feed hands out; `stop_after_stream` makes stream() say stop.
struct recording_sink {
    byte_buffer stream_bytes;
    byte_buffer sent;
    int upgrades = 0;
    int stream_calls = 0;
    bool stop_after_stream = false;

    bool stream(std::span<const std::byte> ice) {
        append(stream_bytes, ice);
        ++stream_calls;
        return !stop_after_stream;
    }
    bool send(byte_view wire) {
        append(sent, wire);
        return true;
    }
    bool upgraded() {
        ++upgrades;
        return true;
    }
};

/// Contexts made once: a key pair per test case would dominate the run time.
SSL_CTX* server_ctx() {
    static const test::ctx_ptr ctx = test::server_context();
    return ctx.get();
}
SSL_CTX* client_ctx() {
    static const test::ctx_ptr ctx = test::client_context();
    return ctx.get();
}

/// A server and a client engine, handshaken; `to_client` holds the server's bytes after the
/// handshake (TLS 1.3 session tickets) that the client has not read yet.
struct tls_pair {
    tls_engine server{server_ctx(), true};
    tls_engine client{client_ctx(), false};
    byte_buffer to_client;

    tls_pair() {
        byte_buffer to_server;
        for (int round = 0; round < 10 && !(client.established() && server.established()); ++round) {
            byte_buffer in = std::exchange(to_client, {});
            EXPECT_NE(client.handshake(in, to_server).status, tls_status::failed) << client.error();
            in = std::exchange(to_server, {});
            EXPECT_NE(server.handshake(in, to_client).status, tls_status::failed) << server.error();
        }
        EXPECT_TRUE(client.established() && server.established());
    }

    /// Decrypts `wire` with the client engine (after the pending tickets). @return the plaintext.
    std::string client_reads(byte_view wire) {
        byte_buffer in = std::exchange(to_client, {}), out;
        append(in, wire);
        std::string plain;
        const auto step = client.read(in, out, thread_plain_buffer(), [&](std::span<std::byte> p) {
            plain += text(p);
            return true;
        });
        EXPECT_EQ(step.status, tls_status::want_read) << client.error();
        return plain;
    }
};

/// Three Ice-sized messages, the last with a tail (an event body shared by many subscribers).
struct three_messages {
    byte_buffer a = pattern(14, 1), b = pattern(40, 2), c_head = pattern(25, 3), c_tail = pattern(300, 4);
    std::vector<message_pieces> pieces{{a, {}}, {b, {}}, {c_head, c_tail}};

    byte_buffer stream() const {
        byte_buffer s = a;
        append(s, b);
        append(s, c_head);
        append(s, c_tail);
        return s;
    }
    std::size_t bytes() const { return a.size() + b.size() + c_head.size() + c_tail.size(); }
    layered_encoded encode_with(layered_stream& codec, byte_buffer& wire) const {
        return codec.encode(pieces.size(), [this](std::size_t i) { return pieces[i]; }, wire);
    }
};

/// Feeds `wire` in two pieces cut at `split`. @return the two feeds' ends.
std::pair<layered_end, layered_end> feed_split(layered_stream& codec, const byte_buffer& wire, std::size_t split,
                                               recording_sink& sink) {
    byte_buffer first(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(split));
    byte_buffer second(wire.begin() + static_cast<std::ptrdiff_t>(split), wire.end());
    const auto e1 = codec.feed(first, sink);
    const auto e2 = codec.feed(second, sink);
    return {e1, e2};
}

/// Feeds `wire` to `codec` cut at `split`, expecting the upgrade, both feeds needing more and
/// `m`'s stream. @return what the sink saw.
recording_sink expect_upgraded_split(layered_stream& codec, const byte_buffer& wire, std::size_t split,
                                     const three_messages& m) {
    recording_sink sink;
    const auto [e1, e2] = feed_split(codec, wire, split, sink);
    EXPECT_EQ(e1, layered_end::need_more) << split;
    EXPECT_EQ(e2, layered_end::need_more) << split;
    EXPECT_EQ(sink.upgrades, 1) << split;
    EXPECT_FALSE(codec.upgrading()) << split;
    EXPECT_EQ(sink.stream_bytes, m.stream()) << split;
    return sink;
}

const std::string upgrade_request =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1:4064\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Protocol: ice.zeroc.com\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Key: gwa0KJOvl4hRSb3AE1yS7g==\r\n\r\n";

/// A server codec over plain WebSocket, already upgraded.
layered_stream upgraded_ws_server(recording_sink& sink) {
    layered_stream s(nullptr, true, ws_role::server, 0);
    s.expect_upgrade();
    byte_buffer req = bytes_of(upgrade_request);
    EXPECT_EQ(s.feed(req, sink), layered_end::need_more);
    EXPECT_EQ(sink.upgrades, 1);
    sink.sent.clear();
    return s;
}

/// A client's masked frame of `op` carrying `payload`.
byte_buffer client_frame(ws_opcode op, byte_view payload) {
    byte_buffer f;
    append_masked_frame(f, op, payload, random_mask_key());
    return f;
}

TEST(layered_stream, tls_bytes_split_anywhere_give_the_same_ice_stream) {
    const three_messages m;
    std::size_t size = 0;
    for (std::size_t split = 0; split == 0 || split <= size; ++split) {
        tls_pair p;
        layered_stream client(&p.client, false, ws_role::client, 0), server(&p.server, false, ws_role::server, 0);
        byte_buffer wire;
        const auto r = m.encode_with(client, wire);
        ASSERT_TRUE(r.ok) << p.client.error();
        ASSERT_EQ(r.bytes, m.bytes());
        size = wire.size();
        recording_sink sink;
        const auto [e1, e2] = feed_split(server, wire, split, sink);
        ASSERT_EQ(e1, layered_end::need_more) << split;
        ASSERT_EQ(e2, layered_end::need_more) << split;
        ASSERT_EQ(sink.stream_bytes, m.stream()) << split;
        EXPECT_TRUE(sink.sent.empty());
    }
}

TEST(layered_stream, wss_upgrade_and_frames_split_anywhere_give_the_same_ice_stream) {
    const three_messages m;
    std::size_t size = 0;
    for (std::size_t split = 0; split == 0 || split <= size; ++split) {
        tls_pair p;
        layered_stream client(&p.client, true, ws_role::client, 0), server(&p.server, true, ws_role::server, 0);
        server.expect_upgrade();
        ws_client_upgrade upgrade("127.0.0.1", 4064, "/");
        byte_buffer wire;
        ASSERT_TRUE(client.seal(protocol::as_bytes(upgrade.request()), wire));
        ASSERT_EQ(m.encode_with(client, wire).bytes, m.bytes());  // masked frames right behind the request
        size = wire.size();
        const recording_sink sink = expect_upgraded_split(server, wire, split, m);
        // The 101 went out sealed, and the client's upgrade accepts it.
        const std::string answer = p.client_reads(sink.sent);
        ASSERT_EQ(answer.rfind("HTTP/1.1 101 ", 0), 0u) << answer;
        EXPECT_EQ(upgrade.put(protocol::as_bytes(answer)).status, ws_upgrade_status::accepted);
    }
}

TEST(layered_stream, ws_bytes_split_anywhere_or_one_at_a_time_give_the_same_ice_stream) {
    const three_messages m;
    byte_buffer wire = bytes_of(upgrade_request);
    layered_stream client(nullptr, true, ws_role::client, 0);
    ASSERT_EQ(m.encode_with(client, wire).bytes, m.bytes());
    for (std::size_t split = 0; split <= wire.size(); ++split) {
        layered_stream server(nullptr, true, ws_role::server, 0);
        server.expect_upgrade();
        recording_sink sink;
        const auto [e1, e2] = feed_split(server, wire, split, sink);
        ASSERT_EQ(e1, layered_end::need_more) << split;
        ASSERT_EQ(e2, layered_end::need_more) << split;
        ASSERT_EQ(sink.upgrades, 1);
        ASSERT_EQ(sink.stream_bytes, m.stream()) << split;
        EXPECT_EQ(text(sink.sent).rfind("HTTP/1.1 101 ", 0), 0u);
    }
    layered_stream server(nullptr, true, ws_role::server, 0);
    server.expect_upgrade();
    recording_sink sink;
    for (auto b : wire) {
        std::array<std::byte, 1> one{b};
        ASSERT_EQ(server.feed(one, sink), layered_end::need_more);
    }
    EXPECT_EQ(sink.stream_bytes, m.stream());
}

TEST(layered_stream, several_messages_leave_as_one_ws_batch) {
    const three_messages m;
    layered_stream server(nullptr, true, ws_role::server, 0);
    byte_buffer wire;
    const auto r = m.encode_with(server, wire);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.bytes, m.bytes());
    // One unmasked binary frame per Ice message, the tail in the same frame as its head.
    byte_buffer expected;
    append(expected, ws_header(ws_opcode::binary, m.a.size()).view());
    append(expected, m.a);
    append(expected, ws_header(ws_opcode::binary, m.b.size()).view());
    append(expected, m.b);
    append(expected, ws_header(ws_opcode::binary, m.c_head.size() + m.c_tail.size()).view());
    append(expected, m.c_head);
    append(expected, m.c_tail);
    EXPECT_EQ(to_hex(wire), to_hex(expected));

    // A client decodes them back; its own frames are masked (mask bit set).
    layered_stream client(nullptr, true, ws_role::client, 0);
    recording_sink sink;
    EXPECT_EQ(client.feed(wire, sink), layered_end::need_more);
    EXPECT_EQ(sink.stream_bytes, m.stream());
    byte_buffer masked;
    ASSERT_EQ(m.encode_with(client, masked).bytes, m.bytes());
    EXPECT_EQ(masked.size(), expected.size() + 3 * 4);  // a 4-byte key per frame
    EXPECT_EQ(std::to_integer<unsigned>(masked[1]) & 0x80, 0x80u);
}

TEST(layered_stream, several_messages_leave_as_one_tls_record) {
    const three_messages m;
    tls_pair p;
    layered_stream server(&p.server, true, ws_role::server, 0);
    byte_buffer wire;
    ASSERT_TRUE(m.encode_with(server, wire).ok);
    EXPECT_EQ(record_count(wire), 1);  // headers and messages gathered into one SSL_write
    layered_stream client(&p.client, true, ws_role::client, 0);
    byte_buffer in = std::exchange(p.to_client, {});
    append(in, wire);
    recording_sink sink;
    EXPECT_EQ(client.feed(in, sink), layered_end::need_more);
    EXPECT_EQ(sink.stream_bytes, m.stream());
}

TEST(layered_stream, a_large_message_is_sealed_where_it_lies_and_small_ones_around_it_gathered) {
    tls_pair p;
    layered_stream server(&p.server, false, ws_role::server, 0);
    const byte_buffer small1 = pattern(100, 5), large = pattern(100 * 1024, 6), small2 = pattern(200, 7);
    const std::vector<message_pieces> pieces{{small1, {}}, {large, {}}, {small2, {}}};
    byte_buffer wire;
    const auto r = server.encode(pieces.size(), [&](std::size_t i) { return pieces[i]; }, wire);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.bytes, small1.size() + large.size() + small2.size());
    // small1 alone, 100 KiB in 16 KiB records (7), small2 alone.
    EXPECT_EQ(record_count(wire), 1 + 7 + 1);
    EXPECT_EQ(p.client_reads(wire), text(small1) + text(large) + text(small2));
}

TEST(layered_stream, one_encode_stops_at_flush_max) {
    layered_stream server(nullptr, true, ws_role::server, 0);
    const byte_buffer message = pattern(1024);
    byte_buffer wire;
    const std::size_t count = 1000;
    const auto r = server.encode(count, [&](std::size_t) { return message_pieces{message, {}}; }, wire);
    ASSERT_TRUE(r.ok);
    const std::size_t taken = r.bytes / message.size();
    EXPECT_EQ(r.bytes % message.size(), 0u);  // whole messages only
    EXPECT_LT(taken, count);
    EXPECT_GE(wire.size(), layered_stream::flush_max);
    EXPECT_LT(wire.size() - (message.size() + 4), layered_stream::flush_max);  // the last one crossed it
    EXPECT_EQ(wire.size(), taken * (message.size() + 4));
}

TEST(layered_stream, a_refused_upgrade_is_answered_and_reported_with_its_reason) {
    layered_stream server(nullptr, true, ws_role::server, 0);
    server.expect_upgrade();
    recording_sink sink;
    byte_buffer req = bytes_of("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Key: x+09A4SNFs2w7YjDsKsf5w==\r\n\r\n");
    append(req, client_frame(ws_opcode::binary, pattern(14)));
    EXPECT_EQ(server.feed(req, sink), layered_end::refused);
    EXPECT_EQ(server.why(), "WebSocket upgrade refused: missing WebSocket version");
    EXPECT_EQ(text(sink.sent).rfind("HTTP/1.1 400", 0), 0u) << text(sink.sent);
    EXPECT_EQ(sink.upgrades, 0);
    EXPECT_TRUE(sink.stream_bytes.empty());

    // Not HTTP at all: refused with no answer.
    layered_stream other(nullptr, true, ws_role::server, 0);
    other.expect_upgrade();
    recording_sink quiet;
    byte_buffer garbage = bytes_of("IceP garbage\r\n\r\n");
    EXPECT_EQ(other.feed(garbage, quiet), layered_end::refused);
    EXPECT_EQ(other.why().rfind("bad WebSocket upgrade request: ", 0), 0u) << other.why();
    EXPECT_TRUE(quiet.sent.empty());
}

TEST(layered_stream, a_refused_upgrade_over_tls_is_answered_sealed) {
    tls_pair p;
    layered_stream server(&p.server, true, ws_role::server, 0);
    server.expect_upgrade();
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(protocol::as_bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), wire));
    recording_sink sink;
    EXPECT_EQ(server.feed(wire, sink), layered_end::refused);
    EXPECT_EQ(server.why().rfind("WebSocket upgrade refused: ", 0), 0u) << server.why();
    EXPECT_EQ(p.client_reads(sink.sent).rfind("HTTP/1.1 4", 0), 0u);
}

TEST(layered_stream, a_ping_is_answered_with_its_pong_and_reading_goes_on) {
    recording_sink sink;
    auto server = upgraded_ws_server(sink);
    byte_buffer in = client_frame(ws_opcode::ping, protocol::as_bytes("hi"));
    append(in, client_frame(ws_opcode::binary, pattern(14)));
    EXPECT_EQ(server.feed(in, sink), layered_end::need_more);
    EXPECT_EQ(to_hex(sink.sent), "8a02" + to_hex(protocol::as_bytes("hi")));
    EXPECT_EQ(sink.stream_bytes, pattern(14));
    EXPECT_TRUE(server.why().empty());
}

TEST(layered_stream, a_close_frame_is_answered_and_reported) {
    recording_sink sink;
    auto server = upgraded_ws_server(sink);
    const std::array<std::byte, 2> normal{std::byte{0x03}, std::byte{0xe8}};
    byte_buffer in = client_frame(ws_opcode::close, normal);
    append(in, client_frame(ws_opcode::binary, pattern(14)));  // after the close: never read
    EXPECT_EQ(server.feed(in, sink), layered_end::ws_closed);
    EXPECT_EQ(to_hex(sink.sent), "880203e8");
    EXPECT_EQ(server.why(), "peer closed the connection");
    EXPECT_TRUE(sink.stream_bytes.empty());
}

TEST(layered_stream, frame_errors_send_their_close_code_and_say_why) {
    {
        recording_sink sink;
        auto server = upgraded_ws_server(sink);
        byte_buffer in = client_frame(ws_opcode::text, protocol::as_bytes("hello"));
        EXPECT_EQ(server.feed(in, sink), layered_end::ws_failed);
        EXPECT_EQ(to_hex(sink.sent), "880203eb");  // 1003
        EXPECT_EQ(server.why(), "WebSocket text frame (Ice sends binary frames only)");
    }
    {
        recording_sink sink;
        auto server = upgraded_ws_server(sink);
        byte_buffer in = hex(test::validate_frame_hex);  // unmasked: only a server may send that
        EXPECT_EQ(server.feed(in, sink), layered_end::ws_failed);
        EXPECT_EQ(to_hex(sink.sent), "880203ea");  // 1002
        EXPECT_EQ(server.why(), "WebSocket protocol error: " + make_error_code(ws_errc::unmasked_frame).message());
    }
    {
        layered_stream server(nullptr, true, ws_role::server, 16);
        server.expect_upgrade();
        recording_sink sink;
        byte_buffer in = bytes_of(upgrade_request);
        append(in, client_frame(ws_opcode::binary, pattern(17)));
        EXPECT_EQ(server.feed(in, sink), layered_end::ws_failed);
        EXPECT_EQ(to_hex(sink.sent).substr(to_hex(sink.sent).size() - 8), "880203f1");  // 1009, after the 101
        EXPECT_EQ(server.why(), "WebSocket message larger than the message size limit");
    }
}

TEST(layered_stream, a_tls_close_notify_is_reported_as_closed) {
    tls_pair p;
    layered_stream server(&p.server, false, ws_role::server, 0);
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(pattern(14), wire));
    p.client.shutdown(wire);
    recording_sink sink;
    EXPECT_EQ(server.feed(wire, sink), layered_end::tls_closed);
    EXPECT_EQ(sink.stream_bytes, pattern(14));  // what came before the close is delivered
    EXPECT_EQ(server.why(), "peer closed the TLS connection");
}

TEST(layered_stream, bad_records_fail_with_the_engines_reason) {
    tls_pair p;
    layered_stream server(&p.server, false, ws_role::server, 0);
    byte_buffer garbage = bytes_of("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    recording_sink sink;
    EXPECT_EQ(server.feed(garbage, sink), layered_end::tls_failed);
    EXPECT_EQ(server.why(), "TLS error: " + p.server.error());
    EXPECT_GT(server.why().size(), std::string("TLS error: ").size());
    EXPECT_TRUE(sink.stream_bytes.empty());
    // Encoding cannot seal on a failed engine either.
    byte_buffer out;
    const three_messages m;
    EXPECT_FALSE(m.encode_with(server, out).ok);
}

TEST(layered_stream, a_sink_that_stops_stops_the_feed) {
    recording_sink sink;
    auto server = upgraded_ws_server(sink);
    byte_buffer in = client_frame(ws_opcode::binary, pattern(14, 1));
    append(in, client_frame(ws_opcode::binary, pattern(14, 2)));
    sink.stop_after_stream = true;
    EXPECT_EQ(server.feed(in, sink), layered_end::stopped);
    EXPECT_EQ(sink.stream_calls, 1);
    EXPECT_EQ(sink.stream_bytes, pattern(14, 1));
    EXPECT_TRUE(server.why().empty());

    tls_pair p;
    layered_stream tls(&p.server, false, ws_role::server, 0);
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(pattern(14), wire));
    recording_sink tls_sink;
    tls_sink.stop_after_stream = true;
    EXPECT_EQ(tls.feed(wire, tls_sink), layered_end::stopped);
}

TEST(layered_stream, early_bytes_are_held_then_fed_and_leave_nothing_behind) {
    layered_stream client(nullptr, true, ws_role::client, 0);
    EXPECT_TRUE(client.movable());  // a fresh WebSocket codec without TLS: nothing to carry
    byte_buffer frame = hex(test::validate_frame_hex);
    client.hold_early(byte_view(frame).first(3));
    client.hold_early(byte_view(frame).subspan(3));
    EXPECT_TRUE(client.has_early());
    EXPECT_FALSE(client.movable());
    byte_buffer early = client.take_early();
    EXPECT_FALSE(client.has_early());
    EXPECT_EQ(client.take_early().capacity(), 0u);
    recording_sink sink;
    EXPECT_EQ(client.feed_plain(early, sink), layered_end::need_more);
    EXPECT_EQ(to_hex(sink.stream_bytes), test::validate_message_hex);
}

TEST(layered_stream, movable_only_upgraded_between_frames_without_tls) {
    recording_sink sink;
    layered_stream server(nullptr, true, ws_role::server, 0);
    server.expect_upgrade();
    EXPECT_FALSE(server.movable());  // still upgrading
    byte_buffer req = bytes_of(upgrade_request);
    ASSERT_EQ(server.feed(req, sink), layered_end::need_more);
    EXPECT_TRUE(server.movable());
    byte_buffer frame = client_frame(ws_opcode::binary, pattern(14));
    byte_buffer half(frame.begin(), frame.begin() + 5);
    ASSERT_EQ(server.feed(half, sink), layered_end::need_more);
    EXPECT_FALSE(server.movable());  // in the middle of a frame
    tls_pair p;
    layered_stream tls(&p.server, true, ws_role::server, 0);
    EXPECT_FALSE(tls.movable());
}

}  // namespace
}  // namespace moraine::transport
