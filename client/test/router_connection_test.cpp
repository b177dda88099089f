// router_connection against peers played in the test: a raw TCP socket (tcp), transport's server
// codec over it (ws), a TLS engine over it (ssl), ws_router (wss): whole messages both ways,
// control answers before messages, TLS records shared, the ends and how they are reported.
#include "../src/router_connection.hpp"

#include "../../transport/test/tls_records.hpp"
#include "tls_session_options.hpp"
#include "ws_router.hpp"

#include <moraine/client/tls_context.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/transport/layered_stream.hpp>
#include <moraine/transport/tls_engine.hpp>

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;
using protocol::byte_buffer;
using protocol::byte_view;
using transport::test::record_count;

/// What the connection reported; `on_each` runs inside on_message (it may send or close).
struct recorder final : connection_events {
    int validated = 0;
    std::vector<byte_buffer> messages;
    std::vector<error_info> ends;
    std::function<void()> on_each;

    void on_validated() override { ++validated; }
    void on_message(const protocol::frame_view& m) override {
        messages.emplace_back(m.bytes.begin(), m.bytes.end());
        if (on_each) on_each();
    }
    void on_end(const error_info& why) override { ends.push_back(why); }
};

byte_buffer validate_message() { return {protocol::validate_connection_message.begin(), protocol::validate_connection_message.end()}; }
byte_buffer close_message() { return {protocol::close_connection_message.begin(), protocol::close_connection_message.end()}; }

/// A request for `operation` on Glacier2/router with request id `id`, no parameters.
byte_buffer request(std::int32_t id, std::string_view operation) {
    protocol::output_stream out;
    out.start_message(protocol::message_type::request);
    out.write_int(id);
    out.write_identity(protocol::identity{"router", "Glacier2"}.view());
    out.write_facet({});
    out.write_string(operation);
    out.write_byte(0);
    out.write_context(protocol::context{});
    out.write_bytes(empty_params());
    out.end_message();
    return out.take();
}

byte_buffer joined(std::initializer_list<byte_view> parts) {
    byte_buffer all;
    for (auto p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
}

/// Waits on the executor until `done()` or about 2 s.
asio::awaitable<bool> eventually(std::function<bool()> done) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    for (int i = 0; i < 400 && !done(); ++i) {
        t.expires_after(5ms);
        co_await t.async_wait(nothrow_awaitable);
    }
    co_return done();
}

/// Reads from `sock` until `want` bytes came (or the peer closed). @return what came.
asio::awaitable<byte_buffer> read_bytes(tcp::socket& sock, std::size_t want) {
    byte_buffer got;
    std::array<std::byte, 4096> buf;
    while (got.size() < want) {
        auto [ec, n] = co_await sock.async_read_some(asio::buffer(buf), nothrow_awaitable);
        if (ec) break;
        got.insert(got.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    }
    co_return got;
}

/// A peer on loopback and a connection to it on one thread; run() runs `test` to its end.
struct loopback {
    asio::io_context ioc{1};
    tcp::acceptor acceptor{ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
    tcp::socket peer{ioc};
    std::shared_ptr<recorder> events = std::make_shared<recorder>();
    std::shared_ptr<router_connection> conn;

    explicit loopback(router_connection::limits lim = {}) { conn = router_connection::create(ioc.get_executor(), lim, events); }

    router_address address(bool tls = false, bool websocket = false) const {
        router_address a{"127.0.0.1", acceptor.local_endpoint().port(), tls};
        a.websocket = websocket;
        return a;
    }

    /** Opens the connection to `a` with `tls`, while the peer accepts it, then runs
        `peer_side` (its handshakes) alongside. @return open()'s result, once both are done. */
    asio::awaitable<error_info> open(router_address a, const tls_context* tls = nullptr,
                                     std::function<asio::awaitable<void>()> peer_side = {}) {
        bool peer_done = false;
        asio::co_spawn(ioc, [&]() -> asio::awaitable<void> {
            co_await acceptor.async_accept(peer, nothrow_awaitable);
            if (peer_side) co_await peer_side();
        }, [&](std::exception_ptr) { peer_done = true; });
        const error_info err = co_await conn->open(a, tls);
        co_await eventually([&] { return peer_done; });
        co_return err;
    }
    /// open() over plain tcp.
    asio::awaitable<error_info> open() { return open(address()); }

    void run(std::function<asio::awaitable<void>()> test) {
        bool done = false;
        asio::co_spawn(ioc, test(), [&](std::exception_ptr e) {
            done = true;
            if (e) std::rethrow_exception(e);
        });
        ioc.run_for(10s);
        EXPECT_TRUE(done) << "test coroutine did not finish";
    }
};

TEST(router_connection, tcp_reports_whole_messages_however_they_are_cut_and_sends_in_order) {
    loopback lb;
    lb.run([&]() -> asio::awaitable<void> {
        const auto opened = co_await lb.open();
        EXPECT_FALSE(opened) << opened.message();
        const byte_buffer reply = request(7, "a reply stands for any message");
        const byte_buffer in = joined({validate_message(), reply, validate_message()});
        const std::size_t cut = protocol::header_size + 5;  // inside the second message's header
        co_await asio::async_write(lb.peer, asio::buffer(in.data(), cut), nothrow_awaitable);
        EXPECT_TRUE(co_await eventually([&] { return lb.events->validated == 1; }));
        EXPECT_TRUE(lb.events->messages.empty()) << "a part of a message is kept, not reported";
        co_await asio::async_write(lb.peer, asio::buffer(in.data() + cut, in.size() - cut), nothrow_awaitable);
        EXPECT_TRUE(co_await eventually([&] { return lb.events->messages.size() == 2; }));
        EXPECT_EQ(lb.events->messages.at(0), reply);
        EXPECT_EQ(lb.events->messages.at(1), validate_message()) << "a heartbeat is a message";

        const byte_buffer a = request(1, "a"), b = request(2, "bb"), c = request(3, "ccc");
        for (const auto* m : {&a, &b, &c}) EXPECT_FALSE(lb.conn->send(*m));
        const auto three = co_await read_bytes(lb.peer, a.size() + b.size() + c.size());
        EXPECT_EQ(three, joined({a, b, c}));

        // The graceful end: what is queued leaves, then the socket closes and on_end says nothing went wrong.
        EXPECT_FALSE(lb.conn->send(close_message()));
        lb.conn->close_after_flush();
        const auto last = co_await read_bytes(lb.peer, SIZE_MAX);
        EXPECT_EQ(last, close_message()) << "then EOF";
        EXPECT_EQ(lb.events->ends.size(), 1u);
        EXPECT_FALSE(lb.events->ends.at(0)) << lb.events->ends.at(0).message();
        EXPECT_TRUE(lb.conn->closed());
    });
}

TEST(router_connection, the_write_queue_is_bounded_in_bytes) {
    loopback lb({.max_message_bytes = 0, .write_queue_limit = 100});
    EXPECT_FALSE(lb.conn->send(byte_buffer(80)));
    const auto err = lb.conn->send(byte_buffer(30));
    EXPECT_EQ(err.code, errc::queue_full) << err.message();
    EXPECT_EQ(err.detail, "80 bytes queued");
    lb.conn->close();
    EXPECT_EQ(lb.conn->send(byte_buffer(1)).code, errc::connection_lost);
    EXPECT_TRUE(lb.events->ends.empty()) << "close() reports nothing";
}

/// The end a connection reports after the router sent `bytes` (and, with `hang_up`, closed).
error_info end_after(const byte_buffer& bytes, bool hang_up = false) {
    loopback lb;
    lb.run([&]() -> asio::awaitable<void> {
        const auto opened = co_await lb.open();
        EXPECT_FALSE(opened) << opened.message();
        co_await asio::async_write(lb.peer, asio::buffer(bytes), nothrow_awaitable);
        if (hang_up) lb.peer.close();
        EXPECT_TRUE(co_await eventually([&] { return !lb.events->ends.empty(); }));
    });
    EXPECT_EQ(lb.events->ends.size(), 1u);
    return lb.events->ends.empty() ? error_info{} : lb.events->ends.front();
}

TEST(router_connection, ends_are_reported_with_their_cause) {
    auto e = end_after(request(1, "x"));
    EXPECT_EQ(e.code, errc::protocol_error);
    EXPECT_EQ(e.detail, "the router did not validate the connection");
    e = end_after(joined({validate_message(), close_message()}));
    EXPECT_EQ(e.code, errc::connection_lost);
    EXPECT_EQ(e.detail, "the router closed the connection gracefully");
    e = end_after(validate_message(), true);
    EXPECT_EQ(e.code, errc::connection_lost);
    EXPECT_EQ(e.detail, "the router closed the connection");
    byte_buffer garbage = validate_message();
    garbage.front() = std::byte{'X'};
    e = end_after(garbage);
    EXPECT_EQ(e.code, errc::protocol_error);
}

/// A sink for transport's server codec: what it decodes and what it answers.
struct codec_sink {
    byte_buffer stream_bytes, sent;
    bool stream(std::span<const std::byte> b) { return stream_bytes.insert(stream_bytes.end(), b.begin(), b.end()), true; }
    bool send(byte_view w) { return sent.insert(sent.end(), w.begin(), w.end()), true; }
    bool upgraded() { return true; }
};

/// The peer's side of a ws upgrade: reads the request, answers 101 and `then` in one write.
asio::awaitable<void> accept_upgrade(tcp::socket& peer, transport::layered_stream& server, byte_buffer then) {
    codec_sink sink;
    std::array<std::byte, 4096> buf;
    while (server.upgrading()) {
        auto [ec, n] = co_await peer.async_read_some(asio::buffer(buf), nothrow_awaitable);
        if (ec) co_return;
        EXPECT_EQ(server.feed(std::span<std::byte>(buf.data(), n), sink), transport::layered_end::need_more);
    }
    byte_buffer out = sink.sent;  // the 101
    const auto r = server.encode(1, [&](std::size_t) { return transport::message_pieces{then, {}}; }, out);
    EXPECT_TRUE(r.ok);
    co_await asio::async_write(peer, asio::buffer(out), nothrow_awaitable);
}

/// The opcodes of the (masked) frames in `wire`, in order.
std::vector<unsigned> opcodes(byte_view wire) {
    std::vector<unsigned> ops;
    for (std::size_t at = 0; at + 6 <= wire.size();) {
        ops.push_back(std::to_integer<unsigned>(wire[at]) & 0x0f);
        const std::size_t len = std::to_integer<unsigned>(wire[at + 1]) & 0x7f;  // short frames only here
        at += 2 + 4 + len;
    }
    return ops;
}

TEST(router_connection, ws_answers_a_ping_before_the_messages_queued_after_it) {
    loopback lb;
    lb.run([&]() -> asio::awaitable<void> {
        transport::layered_stream server(nullptr, true, transport::ws_role::server, 0);
        server.expect_upgrade();
        const auto opened = co_await lb.open(lb.address(false, true), nullptr, [&] {
            return accept_upgrade(lb.peer, server, validate_message());
        });
        EXPECT_FALSE(opened) << opened.message();
        EXPECT_TRUE(co_await eventually([&] { return lb.events->validated == 1; })) << "the frame behind the 101";
        // A ping then a message in one write; the message's handler sends an answer at once.
        const byte_buffer answer = request(9, "answer");
        lb.events->on_each = [&] { EXPECT_FALSE(lb.conn->send(answer)); };
        byte_buffer in{std::byte{0x89}, std::byte{0x02}, std::byte{'h'}, std::byte{'i'}};
        const byte_buffer msg = request(1, "x");
        (void)server.encode(1, [&](std::size_t) { return transport::message_pieces{msg, {}}; }, in);
        co_await asio::async_write(lb.peer, asio::buffer(in), nothrow_awaitable);
        const byte_buffer wire = co_await read_bytes(lb.peer, (2 + 4 + 2) + (2 + 4 + answer.size()));
        EXPECT_EQ(opcodes(wire), (std::vector<unsigned>{0xa, 0x2})) << "the pong first, then the binary frame";
        codec_sink sink;
        byte_buffer copy = wire;
        EXPECT_EQ(server.feed(copy, sink), transport::layered_end::need_more);
        EXPECT_EQ(sink.stream_bytes, answer);

        // The router's close frame: answered with close 1000, then the end.
        const byte_buffer close_frame{std::byte{0x88}, std::byte{0x02}, std::byte{0x03}, std::byte{0xe8}};
        co_await asio::async_write(lb.peer, asio::buffer(close_frame), nothrow_awaitable);
        const byte_buffer closing = co_await read_bytes(lb.peer, SIZE_MAX);
        EXPECT_EQ(opcodes(closing), std::vector<unsigned>{0x8}) << "only the close answer, then EOF";
        EXPECT_TRUE(co_await eventually([&] { return !lb.events->ends.empty(); }));
        EXPECT_EQ(lb.events->ends.at(0).detail, "the router closed the connection");
    });
}

/// A server SSL_CTX with the test PKI's router certificate.
std::unique_ptr<asio::ssl::context> server_tls() {
    const auto& pki = test::test_pki::get();
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    ctx->use_certificate_chain_file(pki.server_cert());
    ctx->use_private_key_file(pki.server_key(), asio::ssl::context::pem);
    return ctx;
}

TEST(router_connection, ssl_small_messages_queued_together_share_one_record) {
    loopback lb;
    const auto so = test::tls_session_options(test::test_pki::get().ca());
    const auto ctx = server_tls();
    lb.run([&]() -> asio::awaitable<void> {
        transport::tls_engine server(ctx->native_handle(), true);
        byte_buffer raw;  // the client's bytes after its handshake
        const auto opened = co_await lb.open(lb.address(true), so.tls.get(), [&]() -> asio::awaitable<void> {
            std::array<std::byte, 16 * 1024> buf;
            for (;;) {
                auto [ec, n] = co_await lb.peer.async_read_some(asio::buffer(buf), nothrow_awaitable);
                if (ec) co_return;
                byte_buffer out;
                const auto step = server.handshake(byte_view(buf.data(), n), out);
                if (step.status == transport::tls_status::ok) {  // the validate connection behind the last flight
                    EXPECT_TRUE(server.write(validate_message(), out));
                }
                co_await asio::async_write(lb.peer, asio::buffer(out), nothrow_awaitable);
                if (step.status == transport::tls_status::ok) {
                    raw.assign(buf.begin() + static_cast<std::ptrdiff_t>(step.consumed), buf.begin() + static_cast<std::ptrdiff_t>(n));
                    co_return;
                }
                EXPECT_EQ(step.status, transport::tls_status::want_read) << server.error();
            }
        });
        EXPECT_FALSE(opened) << opened.message();
        EXPECT_TRUE(co_await eventually([&] { return lb.events->validated == 1; }));

        byte_buffer all;
        for (int i = 0; i < 10; ++i) {
            const byte_buffer m = request(i + 1, "tick");
            all.insert(all.end(), m.begin(), m.end());
            EXPECT_FALSE(lb.conn->send(m));
        }
        while (record_count(raw) <= 0) {  // read until the bytes end on a record boundary
            const byte_buffer more = co_await read_bytes(lb.peer, 1);
            if (more.empty()) break;
            raw.insert(raw.end(), more.begin(), more.end());
        }
        byte_buffer plain, ignored;
        const auto step = server.read(raw, ignored, transport::thread_plain_buffer(), [&](std::span<std::byte> p) {
            plain.insert(plain.end(), p.begin(), p.end());
            return true;
        });
        EXPECT_EQ(step.status, transport::tls_status::want_read) << server.error();
        EXPECT_EQ(plain, all);
        EXPECT_EQ(record_count(raw), 1) << "ten small messages, one SSL_write";
        lb.conn->close();
    });
}

TEST(router_connection, wss_carries_messages_inside_tls_and_websocket) {
    test::ws_router wr;
    wr.use_tls();
    auto events = std::make_shared<recorder>();
    const auto so = test::tls_session_options(test::test_pki::get().ca());
    auto conn = router_connection::create(wr.ioc.get_executor(), {}, events);
    asio::co_spawn(wr.ioc, wr.accept_loop(), asio::detached);
    bool done = false;
    asio::co_spawn(wr.ioc, [&]() -> asio::awaitable<void> {
        const auto opened = co_await conn->open(wr.address(), so.tls.get());
        EXPECT_FALSE(opened) << opened.message();
        EXPECT_TRUE(co_await eventually([&] { return events->validated == 1; }));
        EXPECT_FALSE(conn->send(request(5, "createSession")));
        EXPECT_TRUE(co_await eventually([&] { return events->messages.size() == 1; }));
        conn->close();
        wr.acceptor.close();
        done = true;
    }, asio::detached);
    wr.ioc.run_for(10s);
    EXPECT_TRUE(done);
    EXPECT_EQ(wr.ops, std::vector<std::string>{"createSession"});
    ASSERT_EQ(events->messages.size(), 1u);
    EXPECT_EQ(static_cast<protocol::message_type>(events->messages[0][8]), protocol::message_type::reply);
}

TEST(router_connection, a_wss_router_refusing_our_certificate_fails_the_open_and_reports_no_end) {
    test::ws_router wr;
    wr.use_tls(true);  // requires a client certificate, which we do not send
    auto events = std::make_shared<recorder>();
    const auto so = test::tls_session_options(test::test_pki::get().ca());
    auto conn = router_connection::create(wr.ioc.get_executor(), {}, events);
    asio::co_spawn(wr.ioc, wr.accept_loop(), asio::detached);
    error_info err;
    asio::co_spawn(wr.ioc, [&]() -> asio::awaitable<void> {
        err = co_await conn->open(wr.address(), so.tls.get());
        conn->close();
        wr.acceptor.close();
    }, asio::detached);
    wr.ioc.run_for(10s);
    EXPECT_EQ(err.code, errc::tls_handshake_failed) << err.message();
    EXPECT_NE(err.detail.find("the router refused the connection: "), std::string::npos) << err.detail;
    EXPECT_TRUE(events->ends.empty()) << "open() returned it";
    EXPECT_EQ(events->validated, 0);
}

}  // namespace
}  // namespace moraine::client
