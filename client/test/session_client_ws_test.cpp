// session_client over a `ws` address against an in-process WebSocket router played with
// moraine::transport's server-side codec: the upgrade, masked frames one message each, the
// router's frames read back, ping and close (docs/transports.md §1).
#include "ws_router.hpp"

#include <string>
#include <vector>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;
using protocol::byte_buffer;
using test::ws_router;

TEST(session_client_ws, opens_calls_and_destroys_one_message_per_frame) {
    ws_router wr;
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    });
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient",
                                        "destroySession"};
    EXPECT_EQ(wr.ops, want);
    EXPECT_EQ(wr.frames, 6) << "five requests and the close connection message, each its own frame";
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
