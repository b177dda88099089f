// connection_handshake: the TLS handshake and WebSocket upgrade of a layered connection over a
// socketpair, the accepting side driven by readability as ice_connection drives it, the
// connecting side as a coroutine or by hand. Checked: what each side hands over (a ready
// stream, the Ice bytes read behind the handshake), the close reason and text of each failure
// (garbage instead of TLS, a refused upgrade, a peer closing early), the deadline, and steps on
// the handshake pool.
#include <moraine/net/connection_handshake.hpp>

#include <moraine/net/handshake_pool.hpp>
#include <moraine/net/tls_config.hpp>
#include <moraine/transport/tls_engine.hpp>
#include <moraine/transport/ws_client_upgrade.hpp>
#include <moraine/transport/ws_mask.hpp>
#include <moraine/transport/ws_masked_frame.hpp>

#include "tls_test_contexts.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace moraine::net {
namespace {

namespace tp = moraine::transport;
using protocol::byte_buffer;
using protocol::byte_view;
using state = handshake_state;

SSL_CTX* server_ctx() {
    static const tp::test::ctx_ptr ctx = tp::test::server_context();  // one key pair for the suite
    return ctx.get();
}
SSL_CTX* client_ctx() {
    static const tp::test::ctx_ptr ctx = tp::test::client_context();
    return ctx.get();
}

byte_buffer bytes_of(std::string_view s) {
    const auto b = protocol::as_bytes(s);
    return {b.begin(), b.end()};
}
std::string text(byte_view b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

/// A connected AF_UNIX stream pair as two asio sockets (asio takes it as "tcp": only read and
/// written), both on `io`.
struct socket_pair {
    explicit socket_pair(asio::io_context& io) : server(io), client(io) {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
        server.assign(tcp::v4(), fds[0]);
        client.assign(tcp::v4(), fds[1]);
    }
    tcp::socket server;
    tcp::socket client;
};

/// The accepting side as ice_connection drives it: a readability wait per want_read, the pool
/// step's resume, and a record of every state and of the deadline.
struct accepting {
    accepting(asio::io_context& io, tcp::socket& s, bool tls, bool websocket, handshake_pool* pool = nullptr,
              std::chrono::milliseconds timeout = std::chrono::seconds(10))
        : io(io), socket(s), pool(pool) {
        if (tls) engine.emplace(server_ctx(), true);
        hs.emplace(socket, engine ? &*engine : nullptr,
                   tp::layered_stream(engine ? &*engine : nullptr, websocket, tp::ws_role::server, 1 << 20));
        hs->start_accepted(
            [this](byte_view wire) {
                asio::write(socket, asio::buffer(wire.data(), wire.size()));
                return true;
            },
            timeout, [this](const char* what) { timed_out = what; });
        arm();
    }
    void arm() {
        socket.async_wait(tcp::socket::wait_read, [this](const boost::system::error_code& ec) {
            on(hs->on_readable(ec, scratch, pool, [this] { on(hs->after_pool_step()); }));
        });
    }
    void on(state s) {
        states.push_back(s);
        if (s == state::want_read) arm();
        else if (s != state::stepping) last = s;
    }
    /// Runs `io` until the handshake ended (or the deadline passed, or 5 s).
    bool run() {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!last && timed_out.empty() && std::chrono::steady_clock::now() < until) {
            io.run_one_for(std::chrono::milliseconds(10));
        }
        return last.has_value();
    }

    asio::io_context& io;
    tcp::socket& socket;
    handshake_pool* pool;
    std::optional<tp::tls_engine> engine;
    std::optional<connection_handshake> hs;
    std::vector<std::byte> scratch = std::vector<std::byte>(64 * 1024);
    std::vector<state> states;
    std::optional<state> last;
    std::string timed_out;
};

/// Writes all of `b` to `s` (blocking).
void put(tcp::socket& s, byte_view b) { asio::write(s, asio::buffer(b.data(), b.size())); }
/// Reads what `s` holds now (waits up to 1 s for the first byte).
byte_buffer take(tcp::socket& s) {
    byte_buffer out;
    for (int i = 0; i < 100 && s.available() == 0; ++i) ::usleep(10'000);
    while (s.available() > 0) {
        byte_buffer chunk(s.available());
        chunk.resize(s.read_some(asio::buffer(chunk)));
        out.insert(out.end(), chunk.begin(), chunk.end());
    }
    return out;
}

/// An Ice client's upgrade request, plus `frame_payload` in a masked binary frame right behind it.
byte_buffer upgrade_request(std::string_view protocol_line, byte_view frame_payload) {
    std::string head = tp::ws_client_upgrade("127.0.0.1", 4063, "/").request();
    if (!protocol_line.empty()) {
        const auto at = head.find("Sec-WebSocket-Protocol: ice.zeroc.com");
        if (at == std::string::npos) throw std::runtime_error("no protocol line to change");
        head.replace(at, std::string_view("Sec-WebSocket-Protocol: ice.zeroc.com").size(), protocol_line);
    }
    auto out = bytes_of(head);
    if (!frame_payload.empty())
        tp::append_masked_frame(out, tp::ws_opcode::binary, frame_payload, tp::random_mask_key());
    return out;
}

/// A client engine driven by hand: ClientHello out, the server's flight in, its last flight out
/// together with `app_data` sealed behind it, in one write.
void tls_client_by_hand(accepting& server, tcp::socket& client, tp::tls_engine& engine, byte_view app_data) {
    byte_buffer flight;
    auto step = engine.handshake({}, flight);
    put(client, flight);
    while (step.status == tp::tls_status::want_read) {
        while (client.available() == 0 && !server.last) server.io.run_one_for(std::chrono::milliseconds(10));
        if (server.last) return;
        const auto in = take(client);
        flight.clear();
        step = engine.handshake(in, flight);
    }
    ASSERT_EQ(step.status, tp::tls_status::ok) << engine.error();
    if (!app_data.empty()) {
        ASSERT_TRUE(engine.write(app_data, flight));
    }
    put(client, flight);
}

TEST(connection_handshake, tls_hands_over_the_stream_and_the_records_behind_the_handshake) {
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, true, false);
    tp::tls_engine client(client_ctx(), false);
    const auto ice = bytes_of("validate?");  // any stream bytes: the handshake does not frame them
    tls_client_by_hand(server, pair.client, client, ice);
    ASSERT_TRUE(server.run());
    EXPECT_EQ(*server.last, state::done);
    EXPECT_EQ(server.hs->end(), tp::layered_end::need_more);
    EXPECT_EQ(text(server.hs->take_early()), "validate?");
    EXPECT_TRUE(server.hs->take_early().empty()) << "taken once";
    EXPECT_TRUE(server.engine->established());
    EXPECT_FALSE(server.hs->take_stream().upgrading());
}

TEST(connection_handshake, ws_upgrade_answers_101_and_keeps_the_first_frame) {
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, false, true);
    put(pair.client, upgrade_request({}, bytes_of("first message")));
    ASSERT_TRUE(server.run());
    EXPECT_EQ(*server.last, state::done);
    EXPECT_EQ(text(server.hs->take_early()), "first message") << "the frame's payload, unmasked";
    const auto answer = text(take(pair.client));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 101")) << answer;
    EXPECT_NE(answer.find("Sec-WebSocket-Protocol: ice.zeroc.com"), std::string::npos) << answer;
}

TEST(connection_handshake, ws_upgrade_in_pieces_waits_for_the_whole_head) {
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, false, true);
    const auto request = upgrade_request({}, {});
    put(pair.client, byte_view(request).first(20));
    for (int i = 0; i < 5; ++i) io.run_one_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(server.last) << "a partial head is not a decision";
    put(pair.client, byte_view(request).subspan(20));
    ASSERT_TRUE(server.run());
    EXPECT_EQ(*server.last, state::done);
    EXPECT_TRUE(server.hs->take_early().empty());
}

TEST(connection_handshake, a_refused_upgrade_fails_for_the_stream_end) {
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, false, true);
    put(pair.client, upgrade_request("Sec-WebSocket-Protocol: chat", {}));
    ASSERT_TRUE(server.run());
    EXPECT_EQ(*server.last, state::failed);
    EXPECT_EQ(server.hs->end(), tp::layered_end::refused);
    EXPECT_NE(server.hs->take_stream().why().find("protocol"), std::string::npos);
}

TEST(connection_handshake, garbage_instead_of_tls_fails_the_tls_handshake) {
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, true, false);
    put(pair.client, bytes_of("IceP\x01\x00\x01\x00\x03\x00\x0e\x00\x00\x00"));  // Ice's validate connection
    ASSERT_TRUE(server.run());
    EXPECT_EQ(*server.last, state::failed);
    EXPECT_EQ(server.hs->end(), tp::layered_end::need_more) << "the handshake's own failure";
    EXPECT_EQ(server.hs->failure().reason, close_reason::handshake);
    EXPECT_TRUE(server.hs->failure().why.starts_with("TLS handshake failed: ")) << server.hs->failure().why;
}

/// How the accepting side (`tls`, then a WebSocket upgrade) fails when its peer closes at once.
connection_handshake::failure_text failure_on_early_close(bool tls) {
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, tls, true);
    pair.client.shutdown(tcp::socket::shutdown_send);
    EXPECT_TRUE(server.run());
    EXPECT_EQ(server.last, state::failed);
    return server.hs->failure();
}

TEST(connection_handshake, a_peer_closing_early_is_peer_closed_before_the_upgrade_a_failure_in_tls) {
    const auto ws = failure_on_early_close(false);  // a port probe
    EXPECT_EQ(ws.reason, close_reason::peer_closed);
    EXPECT_EQ(ws.why, "peer closed before its WebSocket upgrade");
    const auto wss = failure_on_early_close(true);
    EXPECT_EQ(wss.reason, close_reason::handshake);
    EXPECT_EQ(wss.why, "TLS handshake failed: the peer closed the connection");
}

TEST(connection_handshake, the_deadline_names_what_timed_out) {
    asio::io_context io;
    socket_pair pair(io);
    accepting wss(io, pair.server, true, true, nullptr, std::chrono::milliseconds(20));
    EXPECT_FALSE(wss.run());
    EXPECT_EQ(wss.timed_out, "TLS handshake or WebSocket upgrade timed out");

    asio::io_context io2;
    socket_pair pair2(io2);
    std::optional<accepting> ws(std::in_place, io2, pair2.server, false, true, nullptr, std::chrono::milliseconds(20));
    EXPECT_FALSE(ws->run());
    EXPECT_EQ(ws->timed_out, "WebSocket upgrade timed out");

    // Gone before its deadline: nothing is called.
    asio::io_context io3;
    socket_pair pair3(io3);
    std::string late;
    {
        connection_handshake hs(pair3.server, nullptr, tp::layered_stream(nullptr, true, tp::ws_role::server, 0));
        hs.start_accepted([](byte_view) { return true; }, std::chrono::milliseconds(1),
                          [&late](const char* what) { late = what; });
    }
    io3.run_for(std::chrono::milliseconds(30));
    EXPECT_TRUE(late.empty());
}

TEST(connection_handshake, tls_steps_run_on_the_pool_and_resume_here) {
    handshake_pool pool(1);
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, true, false, &pool);
    tp::tls_engine client(client_ctx(), false);
    tls_client_by_hand(server, pair.client, client, {});
    ASSERT_TRUE(server.run());
    EXPECT_EQ(*server.last, state::done);
    EXPECT_NE(std::find(server.states.begin(), server.states.end(), state::stepping), server.states.end());
    EXPECT_TRUE(server.engine->established());
}

TEST(connection_handshake, connect_does_tls_and_the_upgrade_against_the_accepting_side) {
    asio::io_context io;
    socket_pair pair(io);
    accepting server(io, pair.server, true, true);
    tp::tls_engine engine(client_ctx(), false);
    connection_handshake client(pair.client, &engine, tp::layered_stream(&engine, true, tp::ws_role::client, 0));
    tls_config cfg;
    cfg.check_cert_name = false;
    protocol::endpoint ep;
    ep.host = "127.0.0.1";
    ep.port = 4063;
    std::optional<client_handshake_result> result;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> { result = co_await client.connect(&cfg, ep); },
                   [](std::exception_ptr e) {
                       if (e) std::rethrow_exception(e);
                   });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while ((!result || !server.last) && std::chrono::steady_clock::now() < until)
        io.run_one_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(result);
    EXPECT_EQ(result->why, "");
    ASSERT_TRUE(server.last);
    EXPECT_EQ(*server.last, state::done);
    EXPECT_FALSE(client.take_stream().upgrading());
}

TEST(connection_handshake, connect_reports_a_server_gone_in_tls) {
    asio::io_context io;
    socket_pair pair(io);
    pair.server.close();
    tp::tls_engine engine(client_ctx(), false);
    connection_handshake client(pair.client, &engine, tp::layered_stream(&engine, false, tp::ws_role::client, 0));
    tls_config cfg;
    protocol::endpoint ep;
    ep.host = "127.0.0.1";
    std::optional<client_handshake_result> result;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> { result = co_await client.connect(&cfg, ep); },
                   [](std::exception_ptr e) {
                       if (e) std::rethrow_exception(e);
                   });
    io.run_for(std::chrono::seconds(2));
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->tls_failed);
    EXPECT_FALSE(result->why.empty());
}

}  // namespace
}  // namespace moraine::net
