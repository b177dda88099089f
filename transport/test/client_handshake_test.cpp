// client_handshake: the connecting side's TLS handshake and WebSocket upgrade driven with bytes
// only, against a server made of a tls_engine and a ws_server_upgrade by hand. Checked: tls
// only, ws only, wss; the bytes behind the handshake held for the Ice layer (behind the last TLS
// flight, behind the 101, split anywhere); a refused upgrade; a TLS failure in the handshake and
// after it (a certificate refused once TLS 1.3 finished); the server closing mid-way.
#include <moraine/transport/client_handshake.hpp>

#include <moraine/transport/ws_error.hpp>
#include <moraine/transport/ws_server_upgrade.hpp>

#include "tls_test_contexts.hpp"
#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

#include <openssl/ssl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace moraine::transport {
namespace {

using protocol::byte_buffer;
using protocol::byte_view;
using test::hex;
using test::to_hex;

std::string text(byte_view b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }
void append(byte_buffer& to, byte_view b) { to.insert(to.end(), b.begin(), b.end()); }

SSL_CTX* server_ctx() {
    static const test::ctx_ptr ctx = test::server_context();  // one key pair for the suite
    return ctx.get();
}
SSL_CTX* client_ctx() {
    static const test::ctx_ptr ctx = test::client_context();
    return ctx.get();
}

/// The server end by hand: its TLS handshake, then the upgrade request read and answered with
/// `answer` (the real 101 when empty), `behind` (stream bytes) sent right behind the last TLS
/// flight (ssl) or the answer (ws, wss), in the same write.
struct server_side {
    server_side(bool tls, bool ws) {
        if (tls) engine.emplace(server_ctx(), true);
        if (ws) upgrade.emplace();
    }

    /// The client's bytes in, the server's bytes out.
    byte_buffer take(byte_view in) {
        byte_buffer out;
        if (engine && !engine->established()) {
            const auto step = engine->handshake(in, out);
            if (step.status != tls_status::ok) return out;  // want_read, or an alert in `out`
            if (!upgrade) send(behind, out);
            in = in.subspan(step.consumed);
        }
        byte_buffer plain;
        if (engine) {
            engine->read(in, out, thread_plain_buffer(), [&](std::span<std::byte> p) {
                append(plain, p);
                return true;
            });
        } else {
            append(plain, in);
        }
        if (upgrade && !answered && !plain.empty()) {
            const auto r = upgrade->put(plain);
            if (r.status == ws_upgrade_status::need_more) return out;
            answered = true;
            byte_buffer head = bytes_of(answer.empty() ? r.answer : answer);
            append(head, behind);
            send(head, out);
        }
        return out;
    }
    void send(byte_view plain, byte_buffer& out) {
        if (plain.empty()) return;
        if (!engine) return append(out, plain);
        EXPECT_TRUE(engine->write(plain, out)) << engine->error();
    }
    static byte_buffer bytes_of(std::string_view s) {
        const auto b = protocol::as_bytes(s);
        return {b.begin(), b.end()};
    }

    std::optional<tls_engine> engine;
    std::optional<ws_server_upgrade> upgrade;
    std::string answer;
    byte_buffer behind;
    bool answered = false;
};

/// A client handshake and its stream, over a client engine when `tls`.
struct client_side {
    client_side(bool tls, bool ws) {
        if (tls) engine.emplace(client_ctx(), false);
        stream.emplace(engine ? &*engine : nullptr, ws, ws_role::client, 0);
        std::optional<ws_client_upgrade> up;
        if (ws) up.emplace("127.0.0.1", 4064, "/");
        hs.emplace(engine ? &*engine : nullptr, std::move(up), *stream);
    }
    std::optional<tls_engine> engine;
    std::optional<layered_stream> stream;
    std::optional<client_handshake> hs;
};

/// Runs both ends until the client is done or failed (or stalls), handing the client the
/// server's bytes `chunk` at a time, as reads cut them; what the server sent past the read that
/// ended the handshake goes to `rest` (the connection's first reads). @return the client's last
/// outcome.
handshake_outcome run(client_side& c, server_side& s, std::size_t chunk = 1 << 20, byte_buffer* rest = nullptr) {
    byte_buffer to_server;
    handshake_outcome o = c.hs->start(to_server);
    for (int round = 0; round < 20 && o.status == handshake_status::want_read; ++round) {
        const byte_buffer to_client = s.take(std::exchange(to_server, {}));
        if (to_client.empty()) break;  // the server waits too: a stall
        for (std::size_t at = 0; at < to_client.size(); at += chunk) {
            const auto piece = byte_view(to_client).subspan(at, std::min(chunk, to_client.size() - at));
            if (o.status == handshake_status::want_read) o = c.hs->on_bytes(piece, to_server);
            else if (rest) append(*rest, piece);
        }
    }
    if (!to_server.empty()) s.take(to_server);  // the last flight (and the request behind it)
    return o;
}

/// Feeds the stream's early bytes, then the wire bytes `rest`, as the connection would: the Ice
/// stream they carry.
std::string ice_after(layered_stream& stream, byte_buffer rest = {}) {
    struct sink {
        std::string ice;
        bool stream(std::span<const std::byte> b) { return ice += text(b), true; }
        bool send(byte_view) { return true; }
        bool upgraded() { return true; }
    } k;
    byte_buffer early = stream.take_early();
    EXPECT_EQ(stream.feed_plain(early, k), layered_end::need_more);
    EXPECT_EQ(stream.feed(rest, k), layered_end::need_more);
    return k.ice;
}

void use_tls12(server_side& s) { SSL_set_max_proto_version(s.engine->native(), TLS1_2_VERSION); }

TEST(client_handshake, tls_only_is_done_once_established) {
    client_side c(true, false);
    server_side s(true, false);
    const auto o = run(c, s);
    EXPECT_EQ(o.status, handshake_status::done) << o.why;
    EXPECT_TRUE(c.engine->established());
    EXPECT_TRUE(s.engine->established());
    EXPECT_FALSE(c.stream->has_early());
}

TEST(client_handshake, tls_records_behind_the_last_flight_are_held_for_the_ice_layer) {
    // TLS 1.2: the server's Finished is its last flight, and its first record may follow it in
    // the same read (glacier2router's validate connection over ssl).
    for (const std::size_t chunk : {std::size_t{1} << 20, std::size_t{7}}) {
        client_side c(true, false);
        server_side s(true, false);
        use_tls12(s);
        s.behind = hex(test::validate_message_hex);
        byte_buffer rest;
        const auto o = run(c, s, chunk, &rest);
        ASSERT_EQ(o.status, handshake_status::done) << o.why;
        if (chunk > 1000) {
            EXPECT_TRUE(rest.empty()) << "one read: all of it held";
        }
        EXPECT_EQ(to_hex(protocol::as_bytes(ice_after(*c.stream, rest))), test::validate_message_hex)
            << "chunk " << chunk;
    }
}

TEST(client_handshake, ws_only_sends_the_request_first_and_keeps_the_frame_behind_the_101) {
    for (const std::size_t chunk : {std::size_t{1} << 20, std::size_t{1}}) {
        client_side c(false, true);
        server_side s(false, true);
        s.behind = hex(test::validate_frame_hex);
        byte_buffer first;
        // The first flight is the upgrade request itself, unsealed.
        client_side probe(false, true);
        ASSERT_EQ(probe.hs->start(first).status, handshake_status::want_read);
        EXPECT_EQ(text(first).rfind("GET / HTTP/1.1\r\nHost: 127.0.0.1:4064\r\n", 0), 0u);
        byte_buffer rest;
        const auto o = run(c, s, chunk, &rest);
        ASSERT_EQ(o.status, handshake_status::done) << o.why;
        EXPECT_FALSE(c.hs->upgrading());
        EXPECT_FALSE(c.stream->upgrading()) << "the stream never decides the upgrade";
        if (chunk > 1000) {
            EXPECT_TRUE(c.stream->has_early()) << "the frame came in the 101's read";
        }
        EXPECT_EQ(ice_after(*c.stream, rest), text(hex(test::validate_message_hex))) << "chunk " << chunk;
    }
}

TEST(client_handshake, wss_upgrades_inside_tls_and_keeps_the_frame_behind_the_101) {
    client_side c(true, true);
    server_side s(true, true);
    s.behind = hex(test::validate_frame_hex);
    const auto o = run(c, s);
    ASSERT_EQ(o.status, handshake_status::done) << o.why;
    EXPECT_TRUE(s.answered) << "the server read the request, sealed";
    EXPECT_TRUE(c.stream->has_early());
    EXPECT_EQ(ice_after(*c.stream), text(hex(test::validate_message_hex)));
}

TEST(client_handshake, a_101_alone_leaves_no_early_bytes) {
    client_side c(true, true);
    server_side s(true, true);
    const auto o = run(c, s, 5);
    ASSERT_EQ(o.status, handshake_status::done) << o.why;
    EXPECT_FALSE(c.stream->has_early());
}

TEST(client_handshake, a_refused_upgrade_fails_with_the_reason_and_its_ws_errc) {
    for (const bool tls : {false, true}) {
        client_side c(tls, true);
        server_side s(tls, true);
        s.answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        const auto o = run(c, s);
        ASSERT_EQ(o.status, handshake_status::failed);
        EXPECT_EQ(o.failure, handshake_failure::refused);
        EXPECT_FALSE(o.in_tls);
        EXPECT_EQ(o.ec, make_error_code(ws_errc::upgrade_refused));
        EXPECT_EQ(o.why, "WebSocket upgrade refused: the router answered HTTP 404 Not Found");
        EXPECT_FALSE(c.stream->has_early());
    }
}

TEST(client_handshake, garbage_instead_of_a_server_hello_fails_the_tls_handshake) {
    client_side c(true, true);
    byte_buffer out;
    ASSERT_EQ(c.hs->start(out).status, handshake_status::want_read);
    EXPECT_FALSE(out.empty()) << "the ClientHello";
    out.clear();
    const auto garbage = server_side::bytes_of("HTTP/1.1 400 Bad Request\r\n\r\n");
    const auto o = c.hs->on_bytes(garbage, out);
    ASSERT_EQ(o.status, handshake_status::failed);
    EXPECT_EQ(o.failure, handshake_failure::tls_failed);
    EXPECT_TRUE(o.in_tls);
    EXPECT_FALSE(o.why.empty());
    EXPECT_EQ(o.why, c.engine->error());
}

TEST(client_handshake, a_certificate_refused_after_tls13_finished_fails_as_tls_after_the_handshake) {
    // TLS 1.3: our handshake ends before the server checks our certificate; the server's alert
    // answers the flight that carries our Finished and the upgrade request.
    const test::ctx_ptr strict = test::server_context();
    SSL_CTX_set_verify(strict.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       [](int, X509_STORE_CTX*) { return 1; });
    client_side c(true, true);
    server_side s(true, true);
    s.engine.emplace(strict.get(), true);
    byte_buffer to_server, to_client;
    auto o = c.hs->start(to_server);
    for (int round = 0; round < 10 && o.status == handshake_status::want_read; ++round) {
        to_client = s.take(std::exchange(to_server, {}));
        if (to_client.empty()) break;
        o = c.hs->on_bytes(to_client, to_server);
    }
    ASSERT_EQ(o.status, handshake_status::failed);
    EXPECT_EQ(o.failure, handshake_failure::tls_failed);
    EXPECT_FALSE(o.in_tls) << "our handshake had finished";
    EXPECT_TRUE(c.engine->established());
    EXPECT_NE(o.why.find("certificate"), std::string::npos) << o.why;
}

TEST(client_handshake, the_peer_closing_mid_way_says_in_which_step) {
    client_side in_tls(true, true);
    byte_buffer out;
    in_tls.hs->start(out);
    auto o = in_tls.hs->on_peer_closed();
    EXPECT_EQ(o.status, handshake_status::failed);
    EXPECT_EQ(o.failure, handshake_failure::peer_closed);
    EXPECT_TRUE(o.in_tls);

    client_side upgrading(true, true);
    server_side s(true, true);
    s.upgrade.reset();  // a server that never answers the request
    ASSERT_EQ(run(upgrading, s).status, handshake_status::want_read);
    EXPECT_TRUE(upgrading.engine->established());
    o = upgrading.hs->on_peer_closed();
    EXPECT_EQ(o.failure, handshake_failure::peer_closed);
    EXPECT_FALSE(o.in_tls);
}

TEST(client_handshake, a_tls_close_instead_of_the_101_fails_as_tls_closed) {
    client_side c(true, true);
    server_side s(true, true);
    s.upgrade.reset();
    ASSERT_EQ(run(c, s).status, handshake_status::want_read);
    byte_buffer close_notify, out;
    s.engine->shutdown(close_notify);
    const auto o = c.hs->on_bytes(close_notify, out);
    ASSERT_EQ(o.status, handshake_status::failed);
    EXPECT_EQ(o.failure, handshake_failure::tls_closed);
    EXPECT_FALSE(o.in_tls);
}

}  // namespace
}  // namespace moraine::transport
