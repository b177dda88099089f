// Close and pong frames (RFC 6455 §5.5; docs/transports.md §1.4-1.5).
#include <moraine/transport/ws_control_frame.hpp>

#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

namespace moraine::transport {
namespace {

// Unmasks a client's control frame (2-byte header + key): its payload.
std::string client_payload_hex(const ws_control_frame& f) {
    auto bytes = protocol::byte_buffer(f.view().begin(), f.view().end());
    const ws_mask_key key{bytes[2], bytes[3], bytes[4], bytes[5]};
    auto payload = std::span(bytes).subspan(6);
    apply_mask(payload, key, 0);
    return test::to_hex(payload);
}

TEST(ws_control_frame, server_close_1000_is_the_routers_bytes) {
    EXPECT_EQ(test::to_hex(ws_close_frame(ws_role::server, 1000).view()), "880203e8");
    EXPECT_EQ(test::to_hex(ws_close_frame(ws_role::server, 1009).view()), "880203f1");
}

TEST(ws_control_frame, client_close_is_masked) {
    const auto f = ws_close_frame(ws_role::client, 1001);
    ASSERT_EQ(f.size, 8u);
    EXPECT_EQ(test::to_hex(f.view().first(2)), "8882");
    EXPECT_EQ(client_payload_hex(f), "03e9");
}

TEST(ws_control_frame, pong_echoes_the_ping_data_unmasked) {
    // glacier2router echoes the payload still masked (`8a02da97`); the right answer is 6869.
    const auto hi = test::hex("6869");
    EXPECT_EQ(test::to_hex(ws_pong_frame(ws_role::server, hi).view()), "8a026869");
    const auto f = ws_pong_frame(ws_role::client, hi);
    EXPECT_EQ(test::to_hex(f.view().first(2)), "8a82");
    EXPECT_EQ(client_payload_hex(f), "6869");
    EXPECT_EQ(ws_pong_frame(ws_role::server, {}).size, 2u);
    EXPECT_EQ(ws_pong_frame(ws_role::server, test::pattern(200)).size, 2u + 125u) << "cut to a control frame's limit";
}

}  // namespace
}  // namespace moraine::transport
