// call: one invocation through the router. Checked: the constructor's defaults, and against the
// fake router that the operation, the params and an idempotent mode reach the wire as given.
#include "fake_router.hpp"

#include <moraine/client/call.hpp>

namespace moraine::client {
namespace {

using protocol::byte_buffer;
using test::fake_router;
using test::ok_reply;

TEST(call, constructor_defaults) {
    const call c{*protocol::proxy_from_string("hello:tcp -h 127.0.0.1 -p 9"), "sayHello", encode_string_params("x")};
    EXPECT_EQ(c.operation, "sayHello");
    EXPECT_EQ(c.mode, protocol::operation_mode::normal);
    EXPECT_TRUE(c.context.empty());
    EXPECT_FALSE(c.compress);
    EXPECT_FALSE(c.params.empty());
}

TEST(call, mode_operation_and_params_reach_the_wire) {
    fake_router fr;
    std::vector<std::uint8_t> modes;
    std::string param;
    fr.answer = [&](const protocol::request_view& r, int) -> std::vector<byte_buffer> {
        if (r.operation != "get" && r.operation != "set") return {};
        modes.push_back(r.mode);
        protocol::input_stream in(r.params.payload(), r.params.encoding);
        param = in.read_string();
        return {ok_reply(r.request_id, empty_params())};
    };
    const auto target = *protocol::proxy_from_string("obj:tcp -h 127.0.0.1 -p 9");
    const call get{target, "get", encode_string_params("k1"), protocol::operation_mode::idempotent};
    const call set{target, "set", encode_string_params("k2")};
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
        EXPECT_TRUE((co_await s->async_invoke(get, asio::use_awaitable)).ok());
        EXPECT_TRUE((co_await s->async_invoke(set, asio::use_awaitable)).ok());
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    });
    EXPECT_EQ(modes, (std::vector<std::uint8_t>{2, 0})) << "idempotent, then normal";
    EXPECT_EQ(param, "k2");
}

}  // namespace
}  // namespace moraine::client
