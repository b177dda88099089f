// ws_stream against itself and against hand-made bytes on loopback: the upgrade as IceWS 3.7
// answers it, one Ice message per binary frame, and the refusals (docs/transports.md §1).
#include <moraine/net/ws_stream.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/beast/websocket/error.hpp>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace moraine::net {
namespace {

using boost::system::error_code;

const std::string upgrade_head =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";

std::vector<std::byte> bytes_of(std::size_t n, unsigned seed = 1) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
    return v;
}

// A client frame: FIN as given, RSV 0, masked with a fixed key, minimal length field.
std::vector<std::uint8_t> client_frame(std::uint8_t opcode, bool fin, const std::vector<std::byte>& payload) {
    const std::array<std::uint8_t, 4> key{0x12, 0x34, 0x56, 0x78};
    std::vector<std::uint8_t> f{static_cast<std::uint8_t>((fin ? 0x80 : 0) | opcode)};
    const std::size_t n = payload.size();
    if (n < 126) {
        f.push_back(static_cast<std::uint8_t>(0x80 | n));
    } else {
        f.push_back(0x80 | 126);
        f.push_back(static_cast<std::uint8_t>(n >> 8));
        f.push_back(static_cast<std::uint8_t>(n & 0xff));
    }
    for (const auto k : key) f.push_back(k);  // not insert(): g++ 12 with -fsanitize=thread warns a bogus -Wstringop-overflow
    for (std::size_t i = 0; i < n; ++i) f.push_back(static_cast<std::uint8_t>(payload[i]) ^ key[i % 4]);
    return f;
}

// One loopback pair per test: `server` gets the accepted socket, `client` the connecting one,
// both on `io`, which runs until the test's coroutines end (at most 10 s).
struct ws_pair : ::testing::Test {
    asio::io_context io{1};
    tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
    tcp::socket server_socket{io};
    tcp::socket client{io};

    void SetUp() override {
        acceptor.async_accept(server_socket, [](error_code ec) { ASSERT_FALSE(ec) << ec.message(); });
        client.connect(acceptor.local_endpoint());
        io.run_one();  // the accept
        ASSERT_TRUE(server_socket.is_open());
    }

    template <class Coroutine>
    void spawn(Coroutine&& c) {
        asio::co_spawn(io, std::forward<Coroutine>(c), [](std::exception_ptr e) {
            if (e) std::rethrow_exception(e);
        });
    }
    void run() {
        io.restart();
        io.run_for(std::chrono::seconds(10));
        ASSERT_TRUE(io.stopped()) << "timed out";
    }

    // The upgrade succeeds.
    static asio::awaitable<void> accept_ok(ws_stream& server) {
        std::string why;
        const error_code ec = co_await server.accept(why);
        EXPECT_FALSE(ec) << why;
    }

    // A raw client sends upgrade_head + `extra_headers`; the server must accept. @return the
    // answer's head as the client read it.
    std::string accepted_answer(ws_stream& server, const std::string& extra_headers) {
        spawn([&]() -> asio::awaitable<void> { co_await accept_ok(server); });
        std::string head;
        std::thread raw([&] { head = raw_upgrade(upgrade_head + extra_headers + "\r\n"); });
        run();
        raw.join();
        return head;
    }

    // A raw client upgrades, then does `client_side` (on its own thread), while the server
    // accepts and reads one message. @return the read's error and the message.
    std::pair<error_code, std::vector<std::byte>> read_once(ws_stream& server, const std::function<void()>& client_side) {
        error_code ec;
        std::vector<std::byte> got;
        spawn([&]() -> asio::awaitable<void> {
            co_await accept_ok(server);
            auto [rec, data] = co_await server.read();
            ec = rec;
            got.assign(data.begin(), data.end());
        });
        std::thread raw([&] {
            raw_upgrade(upgrade_head + "\r\n");
            client_side();
        });
        run();
        raw.join();
        return {ec, std::move(got)};
    }

    // The client sends `bytes` and hangs up (Beast's close handshake after a bad frame waits
    // for the peer's EOF). @return the error of the server's read.
    error_code read_error_after(ws_stream& server, const std::vector<std::uint8_t>& bytes) {
        return read_once(server, [&] {
                   asio::write(client, asio::buffer(bytes));
                   client.shutdown(tcp::socket::shutdown_send);
               }).first;
    }

    // Raw client: writes `text`, then reads the HTTP answer head.
    std::string raw_upgrade(const std::string& text) {
        asio::write(client, asio::buffer(text));
        std::string head;
        char c;
        while (head.find("\r\n\r\n") == std::string::npos && asio::read(client, asio::buffer(&c, 1)) == 1) head += c;
        return head;
    }
};

TEST_F(ws_pair, ice_peers_exchange_messages_one_frame_each) {
    ws_stream server(std::move(server_socket));
    ws_stream peer(std::move(client));
    const auto head = bytes_of(14, 3), tail = bytes_of(70'000, 5), answer = bytes_of(300, 7);
    std::vector<std::byte> got_by_server, got_by_client;
    spawn([&]() -> asio::awaitable<void> {
        co_await accept_ok(server);
        auto [ec, data] = co_await server.read();
        EXPECT_FALSE(ec) << ec.message();
        got_by_server.assign(data.begin(), data.end());
        EXPECT_FALSE(co_await server.write(asio::buffer(answer), asio::const_buffer()));
    });
    spawn([&]() -> asio::awaitable<void> {
        EXPECT_FALSE(co_await peer.handshake("127.0.0.1", acceptor.local_endpoint().port(), ""));
        EXPECT_FALSE(co_await peer.write(asio::buffer(head), asio::buffer(tail)));
        auto [ec, data] = co_await peer.read();
        EXPECT_FALSE(ec) << ec.message();
        got_by_client.assign(data.begin(), data.end());
    });
    run();
    std::vector<std::byte> sent(head);
    sent.insert(sent.end(), tail.begin(), tail.end());
    EXPECT_EQ(got_by_server, sent);
    EXPECT_EQ(got_by_client, answer);
}

TEST_F(ws_pair, answer_names_the_ice_protocol_only_when_asked) {
    ws_stream server(std::move(server_socket));
    const std::string head = accepted_answer(server, "Sec-WebSocket-Protocol: ice.zeroc.com\r\n");
    EXPECT_EQ(head.rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u) << head;
    EXPECT_NE(head.find("Sec-WebSocket-Protocol: ice.zeroc.com\r\n"), std::string::npos) << head;
    // RFC 6455's example key and its accept value.
    EXPECT_NE(head.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string::npos) << head;
    EXPECT_NE(head.find("Server: Moraine\r\n"), std::string::npos) << head;  // no library version
    EXPECT_EQ(head.find("Sec-WebSocket-Extensions"), std::string::npos) << head;
}

TEST_F(ws_pair, request_without_protocol_is_accepted_without_protocol_line) {
    ws_stream server(std::move(server_socket));
    const std::string head = accepted_answer(server, "Sec-WebSocket-Extensions: permessage-deflate\r\n");
    EXPECT_EQ(head.rfind("HTTP/1.1 101", 0), 0u) << head;
    EXPECT_EQ(head.find("Sec-WebSocket-Protocol"), std::string::npos) << head;
    EXPECT_EQ(head.find("Sec-WebSocket-Extensions"), std::string::npos) << head;  // deflate never accepted
}

TEST_F(ws_pair, another_protocol_is_refused_with_a_reason) {
    ws_stream server(std::move(server_socket));
    std::string why;
    error_code ec;
    spawn([&]() -> asio::awaitable<void> { ec = co_await server.accept(why); });
    asio::write(client, asio::buffer(upgrade_head + "Sec-WebSocket-Protocol: foo, ice.zeroc.com\r\n\r\n"));
    run();
    EXPECT_TRUE(ec);
    EXPECT_NE(why.find("'foo, ice.zeroc.com', not ice.zeroc.com"), std::string::npos) << why;
}

TEST_F(ws_pair, a_request_that_is_not_an_upgrade_is_refused) {
    ws_stream server(std::move(server_socket));
    std::string why;
    error_code ec;
    spawn([&]() -> asio::awaitable<void> { ec = co_await server.accept(why); });
    std::string head;
    std::thread raw([&] {
        head = raw_upgrade("GET / HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
                           "dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
        client.shutdown(tcp::socket::shutdown_send);  // Beast's teardown waits for the peer's EOF
    });
    run();
    raw.join();
    EXPECT_TRUE(ec);
    EXPECT_NE(why.find("WebSocket upgrade refused"), std::string::npos) << why;
    EXPECT_EQ(head.rfind("HTTP/1.1 400", 0), 0u) << head;  // Beast answers, then the caller closes
}

// Reads the server's frames raw: unmasked, binary, FIN, minimal length (§1.4: 336 → 7e 0150,
// 70036 → 7f 0000000000011194).
TEST_F(ws_pair, server_frames_are_unmasked_binary_with_minimal_length) {
    ws_stream server(std::move(server_socket));
    spawn([&]() -> asio::awaitable<void> {
        co_await accept_ok(server);
        const auto a = bytes_of(336), b = bytes_of(70'036);
        EXPECT_FALSE(co_await server.write(asio::buffer(a), asio::const_buffer()));
        EXPECT_FALSE(co_await server.write(asio::buffer(b.data(), 36), asio::buffer(b.data() + 36, b.size() - 36)));
    });
    std::vector<std::uint8_t> first(4 + 336), second(10 + 70'036);
    std::thread raw([&] {
        raw_upgrade(upgrade_head + "\r\n");
        asio::read(client, asio::buffer(first));
        asio::read(client, asio::buffer(second));
    });
    run();
    raw.join();
    EXPECT_EQ((std::vector<std::uint8_t>(first.begin(), first.begin() + 4)), (std::vector<std::uint8_t>{0x82, 0x7e, 0x01, 0x50}));
    EXPECT_EQ((std::vector<std::uint8_t>(second.begin(), second.begin() + 10)),
              (std::vector<std::uint8_t>{0x82, 0x7f, 0, 0, 0, 0, 0, 0x01, 0x11, 0x94}));
    EXPECT_EQ(second[10 + 70'035], static_cast<std::uint8_t>(bytes_of(70'036)[70'035]));
}

TEST_F(ws_pair, a_message_split_over_a_continuation_frame_is_read_whole) {
    ws_stream server(std::move(server_socket));
    const auto message = bytes_of(61, 9);
    const auto [ec, got] = read_once(server, [&] {
        asio::write(client, asio::buffer(client_frame(0x2, false, {message.begin(), message.begin() + 20})));
        asio::write(client, asio::buffer(client_frame(0x0, true, {message.begin() + 20, message.end()})));
    });
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(got, message);
}

// A ping is answered with a pong carrying the ping's payload unmasked (glacier2router echoes it
// still masked), and the message after it is read as usual.
TEST_F(ws_pair, a_ping_gets_its_pong_and_the_next_message_is_read) {
    ws_stream server(std::move(server_socket));
    const auto message = bytes_of(14, 2);
    std::array<std::uint8_t, 4> pong{};
    const auto [ec, got] = read_once(server, [&] {
        asio::write(client, asio::buffer(client_frame(0x9, true, {std::byte{'h'}, std::byte{'i'}})));
        asio::write(client, asio::buffer(client_frame(0x2, true, message)));
        asio::read(client, asio::buffer(pong));
    });
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(got, message);
    EXPECT_EQ(pong, (std::array<std::uint8_t, 4>{0x8a, 0x02, 'h', 'i'}));
}

TEST_F(ws_pair, a_text_frame_fails_the_read) {
    ws_stream server(std::move(server_socket));
    const std::string text = "IceP but text";
    const std::vector<std::byte> payload(reinterpret_cast<const std::byte*>(text.data()),
                                         reinterpret_cast<const std::byte*>(text.data()) + text.size());
    EXPECT_EQ(read_error_after(server, client_frame(0x1, true, payload)), boost::system::errc::protocol_error);
}

TEST_F(ws_pair, a_message_over_the_limit_fails_the_read) {
    ws_stream server(std::move(server_socket));
    server.read_limit(100);
    EXPECT_EQ(read_error_after(server, client_frame(0x2, true, bytes_of(200))),
              boost::beast::websocket::error::message_too_big);
}

TEST_F(ws_pair, an_unmasked_client_frame_fails_the_read) {
    ws_stream server(std::move(server_socket));
    EXPECT_TRUE(read_error_after(server, {0x82, 0x02, 0x49, 0x63}));
}

}  // namespace
}  // namespace moraine::net
