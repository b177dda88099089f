// tls_engine: two engines talk through byte buffers only, as a connection and its peer would.
#include <moraine/transport/tls_engine.hpp>

#include "tls_test_contexts.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using moraine::protocol::byte_buffer;
using moraine::protocol::byte_view;
using moraine::transport::thread_plain_buffer;
using moraine::transport::tls_engine;
using moraine::transport::tls_status;
using moraine::transport::test::client_context;
using moraine::transport::test::ctx_ptr;
using moraine::transport::test::server_context;

namespace {

byte_view view(const std::string& s) { return {reinterpret_cast<const std::byte*>(s.data()), s.size()}; }
std::string text(byte_view b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

/// A server and a client engine and the bytes in flight between them.
struct pair_of_engines {
    ctx_ptr server_ctx = server_context();
    ctx_ptr client_ctx = client_context();
    tls_engine server{server_ctx.get(), true};
    tls_engine client{client_ctx.get(), false};
    byte_buffer to_server, to_client;

    /// Runs both handshakes to completion, bytes passed whole. @return false on a failure.
    bool handshake() {
        for (int round = 0; round < 10; ++round) {
            byte_buffer in = std::exchange(to_client, {});
            auto c = client.handshake(in, to_server);
            if (c.status == tls_status::failed) return false;
            in = std::exchange(to_server, {});
            auto s = server.handshake(in, to_client);
            if (s.status == tls_status::failed) return false;
            if (client.established() && server.established()) return true;
        }
        return false;
    }

    /// Decrypts `in` on `side`, every piece of plaintext appended. @return the last step's status.
    static tls_status read_all(tls_engine& side, byte_view in, std::string& plain_out, byte_buffer& out) {
        std::array<std::byte, 16384> plain;
        auto step = side.read(in, out, plain, [&](byte_view p) {
            plain_out += text(p);
            return true;
        });
        EXPECT_EQ(step.consumed, in.size());
        return step.status;
    }
};

}  // namespace

TEST(tls_engine, handshakes_and_carries_data_both_ways) {
    pair_of_engines p;
    ASSERT_TRUE(p.handshake()) << p.client.error() << " / " << p.server.error();
    // TLS 1.3: the server's session tickets may still be in flight; the client reads them as records.
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(view("hello router"), wire));
    std::string got;
    byte_buffer out;
    EXPECT_EQ(pair_of_engines::read_all(p.server, wire, got, out), tls_status::want_read);
    EXPECT_EQ(got, "hello router");

    wire.clear();
    ASSERT_TRUE(p.server.write(view("hello client"), wire));
    byte_buffer pending = std::exchange(p.to_client, {});
    pending.insert(pending.end(), wire.begin(), wire.end());
    got.clear();
    EXPECT_EQ(pair_of_engines::read_all(p.client, pending, got, out), tls_status::want_read);
    EXPECT_EQ(got, "hello client");
}

TEST(tls_engine, a_record_split_at_every_byte_is_read_whole) {
    pair_of_engines p;
    ASSERT_TRUE(p.handshake());
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(view("one Ice message, in pieces"), wire));
    ASSERT_TRUE(p.client.write(view("and a second record"), wire));
    for (std::size_t cut = 1; cut < wire.size(); ++cut) {
        pair_of_engines q;
        ASSERT_TRUE(q.handshake());
        byte_buffer w;
        ASSERT_TRUE(q.client.write(view("one Ice message, in pieces"), w));
        ASSERT_TRUE(q.client.write(view("and a second record"), w));
        std::string got;
        byte_buffer out;
        const byte_view all(w);
        EXPECT_EQ(pair_of_engines::read_all(q.server, all.first(std::min(cut, all.size())), got, out),
                  tls_status::want_read);
        EXPECT_EQ(pair_of_engines::read_all(q.server, all.subspan(std::min(cut, all.size())), got, out),
                  tls_status::want_read);
        EXPECT_EQ(got, "one Ice message, in piecesand a second record") << "cut at " << cut;
        if (cut > 60) break;  // past the first record's header and into its body: enough positions
    }
}

TEST(tls_engine, data_after_the_handshake_in_the_same_input_is_left_for_read) {
    pair_of_engines p;
    // Client hello -> server hello ... -> client finished, then at once application data.
    byte_buffer c_out, s_out;
    p.client.handshake({}, c_out);
    p.server.handshake(c_out, s_out);
    c_out.clear();
    ASSERT_EQ(p.client.handshake(s_out, c_out).status, tls_status::ok);
    ASSERT_TRUE(p.client.write(view("early request"), c_out));
    byte_buffer s2;
    auto step = p.server.handshake(c_out, s2);
    ASSERT_EQ(step.status, tls_status::ok) << p.server.error();
    ASSERT_LT(step.consumed, c_out.size()) << "the application record is left over";
    std::string got;
    EXPECT_EQ(pair_of_engines::read_all(p.server, byte_view(c_out).subspan(step.consumed), got, s2),
              tls_status::want_read);
    EXPECT_EQ(got, "early request");
}

TEST(tls_engine, a_large_message_leaves_in_records_and_arrives_whole) {
    pair_of_engines p;
    ASSERT_TRUE(p.handshake());
    std::string big(1 << 20, 'x');
    for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + i % 26);
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(view(big), wire));
    EXPECT_GT(wire.size(), big.size());
    EXPECT_LT(wire.size(), big.size() + big.size() / 100) << "records of 16 KiB: under 1% overhead";
    std::string got;
    byte_buffer out;
    EXPECT_EQ(pair_of_engines::read_all(p.server, wire, got, out), tls_status::want_read);
    EXPECT_EQ(got, big);
}

TEST(tls_engine, the_send_fragment_follows_the_write_within_openssls_bounds) {
    using moraine::transport::tls_send_fragment;
    EXPECT_EQ(tls_send_fragment(0), 512u);
    EXPECT_EQ(tls_send_fragment(86), 512u);
    EXPECT_EQ(tls_send_fragment(600), 600u);
    EXPECT_EQ(tls_send_fragment(16384), 16384u);
    EXPECT_EQ(tls_send_fragment(1 << 20), 16384u);
}

/// The application-data records in `wire` (TLS record headers: type 23, legacy version, length).
std::vector<std::size_t> record_lengths(byte_view wire) {
    std::vector<std::size_t> lengths;
    for (std::size_t at = 0; at + 5 <= wire.size();) {
        const auto len = static_cast<std::size_t>(wire[at + 3]) << 8 | static_cast<std::size_t>(wire[at + 4]);
        if (wire[at] == std::byte{23}) lengths.push_back(len);
        at += 5 + len;
    }
    return lengths;
}

TEST(tls_engine, writes_of_every_size_stay_whole_records_in_order) {
    pair_of_engines p;
    ASSERT_TRUE(p.handshake());
    // The record buffer is sized to each write: small, then large, then small again.
    const std::size_t sizes[] = {1, 86, 511, 512, 600, 16384, 16385, 40000, 86};
    std::string sent, got;
    byte_buffer out;
    for (const std::size_t n : sizes) {
        std::string m(n, static_cast<char>('a' + n % 26));
        byte_buffer wire;
        ASSERT_TRUE(p.client.write(view(m), wire)) << n;
        EXPECT_EQ(record_lengths(wire).size(), (n + 16383) / 16384) << "records for a write of " << n << " bytes";
        EXPECT_EQ(pair_of_engines::read_all(p.server, wire, got, out), tls_status::want_read);
        sent += m;
    }
    EXPECT_EQ(got, sent);
}

TEST(tls_engine, a_read_stopped_by_its_callback_leaves_the_rest) {
    pair_of_engines p;
    ASSERT_TRUE(p.handshake());
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(view("first"), wire));
    const std::size_t first = wire.size();
    ASSERT_TRUE(p.client.write(view("second"), wire));
    std::array<std::byte, 16384> plain;
    byte_buffer out;
    int pieces = 0;
    auto step = p.server.read(wire, out, plain, [&](byte_view) { return ++pieces < 1; });
    EXPECT_EQ(step.status, tls_status::ok);
    EXPECT_EQ(step.consumed, first);
    EXPECT_EQ(pieces, 1);
}

TEST(tls_engine, a_write_from_a_reads_callback_leaves_the_read_going_on) {
    // A WebSocket pong or upgrade answer is sealed while the read that brought the ping is still
    // under way: the records after it in the same input must still be read.
    pair_of_engines p;
    ASSERT_TRUE(p.handshake());
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(view("ping"), wire));
    ASSERT_TRUE(p.client.write(view("data"), wire));
    ASSERT_TRUE(p.client.write(view("more"), wire));
    std::array<std::byte, 16384> plain;
    byte_buffer out, answers;
    std::string got;
    auto step = p.server.read(wire, out, plain, [&](byte_view b) {
        got += text(b);
        if (text(b) == "ping") {
            EXPECT_TRUE(p.server.write(view("pong"), answers));
        }
        return true;
    });
    EXPECT_EQ(step.status, tls_status::want_read);
    EXPECT_EQ(step.consumed, wire.size());
    EXPECT_EQ(got, "pingdatamore");
    // The answer is a whole record, in order for the client.
    std::string back;
    byte_buffer in = std::exchange(p.to_client, {}), ignored;
    in.insert(in.end(), answers.begin(), answers.end());
    EXPECT_EQ(pair_of_engines::read_all(p.client, in, back, ignored), tls_status::want_read);
    EXPECT_EQ(back, "pong");
}

TEST(tls_engine, close_notify_reads_as_closed) {
    pair_of_engines p;
    ASSERT_TRUE(p.handshake());
    byte_buffer wire;
    p.client.shutdown(wire);
    ASSERT_FALSE(wire.empty());
    std::string got;
    byte_buffer out;
    EXPECT_EQ(pair_of_engines::read_all(p.server, wire, got, out), tls_status::closed);
    EXPECT_FALSE(p.server.write(view("too late"), out));
}

TEST(tls_engine, a_tampered_record_fails_with_a_reason) {
    pair_of_engines p;
    ASSERT_TRUE(p.handshake());
    byte_buffer wire;
    ASSERT_TRUE(p.client.write(view("integrity matters"), wire));
    wire[wire.size() - 3] ^= std::byte{0x40};
    std::string got;
    byte_buffer out;
    EXPECT_EQ(pair_of_engines::read_all(p.server, wire, got, out), tls_status::failed);
    EXPECT_TRUE(got.empty());
    EXPECT_FALSE(p.server.error().empty());
}

TEST(tls_engine, garbage_instead_of_a_client_hello_fails_the_handshake) {
    auto ctx = server_context();
    tls_engine server(ctx.get(), true);
    byte_buffer out;
    const std::string junk = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    EXPECT_EQ(server.handshake(view(junk), out).status, tls_status::failed);
    EXPECT_FALSE(server.error().empty());
    EXPECT_FALSE(server.established());
}

TEST(tls_engine, a_client_that_verifies_refuses_an_untrusted_certificate) {
    pair_of_engines p;
    SSL_set_verify(p.client.native(), SSL_VERIFY_PEER, nullptr);
    EXPECT_FALSE(p.handshake());
    EXPECT_NE(p.client.error().find("certificate"), std::string::npos) << p.client.error();
}

TEST(tls_engine, writes_refused_before_the_handshake) {
    auto ctx = client_context();
    tls_engine client(ctx.get(), false);
    byte_buffer out;
    EXPECT_FALSE(client.write(view("x"), out));
    EXPECT_TRUE(out.empty());
}

TEST(tls_engine, survives_a_move_between_calls) {
    pair_of_engines p;
    byte_buffer c_out, s_out;
    p.client.handshake({}, c_out);
    tls_engine moved = std::move(p.server);
    moved.handshake(c_out, s_out);
    c_out.clear();
    ASSERT_EQ(p.client.handshake(s_out, c_out).status, tls_status::ok);
    s_out.clear();
    EXPECT_EQ(moved.handshake(c_out, s_out).status, tls_status::ok) << moved.error();
    EXPECT_EQ(p.server.native(), nullptr);
}

TEST(tls_engine, the_thread_plain_buffer_holds_a_record_and_is_one_per_thread) {
    const auto here = thread_plain_buffer();
    EXPECT_EQ(here.size(), 16384u);
    EXPECT_EQ(thread_plain_buffer().data(), here.data());  // the same buffer on each call
    std::byte* there = nullptr;
    std::thread([&] { there = thread_plain_buffer().data(); }).join();
    EXPECT_NE(there, here.data());
}
