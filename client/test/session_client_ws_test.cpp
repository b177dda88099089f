// session_client over a `ws` address against an in-process WebSocket router played with
// moraine::transport's server-side codec: the upgrade, masked frames one message each, the
// router's frames read back, ping and close (docs/transports.md §1).
#include "fake_router.hpp"

#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/transport/ws_frame_decoder.hpp>
#include <moraine/transport/ws_frame_header.hpp>
#include <moraine/transport/ws_server_upgrade.hpp>

#include <string>
#include <vector>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;
using protocol::byte_buffer;
namespace transport = moraine::transport;

// One unmasked binary frame holding `m` (what a router sends).
byte_buffer server_frame(const byte_buffer& m) {
    const auto h = transport::ws_header(transport::ws_opcode::binary, m.size());
    byte_buffer f(h.view().begin(), h.view().end());
    f.insert(f.end(), m.begin(), m.end());
    return f;
}

struct ws_router {
    asio::io_context ioc{1};
    tcp::acceptor acceptor{ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
    std::vector<std::string> ops;             // operations received
    int frames = 0;                           // binary frames received
    std::vector<std::uint16_t> closes;        // close codes received
    std::function<std::vector<byte_buffer>(const protocol::request_view&)> extra;  // sent after an op's answer

    router_address address() const {
        router_address a{"127.0.0.1", acceptor.local_endpoint().port()};
        a.websocket = true;
        return a;
    }

    asio::awaitable<void> serve() {
        auto [aec, sock] = co_await acceptor.async_accept(nothrow_awaitable);
        if (aec) co_return;
        std::array<std::byte, 4096> buf;
        transport::ws_server_upgrade up;
        for (;;) {
            auto [ec, got] = co_await sock.async_read_some(asio::buffer(buf), nothrow_awaitable);
            if (ec) co_return;
            const auto r = up.put(protocol::byte_view(buf.data(), got));
            if (r.status == transport::ws_upgrade_status::need_more) continue;
            EXPECT_EQ(r.status, transport::ws_upgrade_status::accepted) << r.why;
            EXPECT_EQ(r.consumed, got) << "the client waits for the 101";
            // The 101 and the validate frame in one write, as glacier2router often does.
            std::string first = r.answer;
            const auto v = server_frame({protocol::validate_connection_message.begin(), protocol::validate_connection_message.end()});
            first.append(protocol::as_chars(v));
            co_await asio::async_write(sock, asio::buffer(first), nothrow_awaitable);
            break;
        }
        transport::ws_frame_decoder frames_in(transport::ws_role::server);
        protocol::frame_assembler messages;
        for (;;) {
            auto [ec, got] = co_await sock.async_read_some(asio::buffer(buf), nothrow_awaitable);
            if (ec) co_return;
            std::span<std::byte> data(buf.data(), got);
            std::vector<byte_buffer> out;
            bool closed = false;
            while (!closed) {
                boost::system::error_code dec;
                const auto d = frames_in.decode(data, dec);
                data = data.subspan(d.consumed);
                if (d.what == transport::ws_input::need_more) break;
                if (d.what == transport::ws_input::close) {
                    closes.push_back(d.close_code);
                    closed = true;
                    break;
                }
                if (d.what != transport::ws_input::payload) {
                    ADD_FAILURE() << "unexpected frame: " << dec.message();
                    co_return;
                }
                if (frames_in.done()) break;
                boost::system::error_code perr;
                messages.feed(d.payload, protocol::limits{}, perr, [&](const protocol::frame_view& f) {
                    if (f.header.type != protocol::message_type::request) return true;
                    auto r = protocol::decode_request(f.body());
                    if (!r) return false;
                    ops.emplace_back(r->operation);
                    for (auto& m : test::router_answers(*r)) out.push_back(server_frame(m));
                    if (extra)
                        for (auto& f2 : extra(*r)) out.push_back(std::move(f2));
                    return true;
                });
                ++frames;
            }
            for (auto& m : out) co_await asio::async_write(sock, asio::buffer(m), nothrow_awaitable);
            if (closed) co_return;
        }
    }

    void run(std::function<asio::awaitable<void>(std::shared_ptr<session_client>)> test) {
        asio::co_spawn(ioc, serve(), asio::detached);
        auto s = session_client::create(ioc.get_executor());
        bool finished = false;
        asio::co_spawn(ioc, test(s), [&](std::exception_ptr e) {
            finished = true;
            if (e) std::rethrow_exception(e);
            boost::system::error_code ignored;
            acceptor.close(ignored);
        });
        ioc.run_for(10s);
        EXPECT_TRUE(finished) << "test coroutine did not finish";
    }
};

TEST(session_client_ws, opens_calls_and_destroys_one_message_per_frame) {
    ws_router wr;
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    });
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getCategoryForClient", "destroySession"};
    EXPECT_EQ(wr.ops, want);
    EXPECT_EQ(wr.frames, 5) << "four requests and the close connection message, each its own frame";
}

TEST(session_client_ws, answers_a_ping_with_its_data) {
    ws_router wr;
    wr.extra = [](const protocol::request_view& r) -> std::vector<byte_buffer> {
        if (r.operation != "getACMTimeout") return {};
        return {byte_buffer{std::byte{0x89}, std::byte{0x02}, std::byte{'h'}, std::byte{'i'}}};
    };
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable));
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    });
    EXPECT_EQ(wr.ops.back(), "destroySession") << "the session went on after the ping";
}

TEST(session_client_ws, a_close_frame_is_answered_and_loses_the_connection) {
    ws_router wr;
    wr.extra = [](const protocol::request_view& r) -> std::vector<byte_buffer> {
        if (r.operation != "getCategoryForClient") return {};
        return {byte_buffer{std::byte{0x88}, std::byte{0x02}, std::byte{0x03}, std::byte{0xe8}}};
    };
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        (void)co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable);
        asio::steady_timer t(co_await asio::this_coro::executor, 200ms);
        co_await t.async_wait(asio::use_awaitable);
        auto r = co_await s->async_invoke(call{*protocol::proxy_from_string("x:tcp -h 127.0.0.1 -p 9"), "op", empty_params()},
                                          asio::use_awaitable);
        EXPECT_FALSE(r.ok());
    });
    EXPECT_EQ(wr.closes, std::vector<std::uint16_t>{1000}) << "the client answered the router's close";
}

}  // namespace
}  // namespace moraine::client
