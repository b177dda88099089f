// A client's masked frame written whole into a buffer (RFC 6455 §5.3).
#include <moraine/transport/ws_masked_frame.hpp>

#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

namespace moraine::transport {
namespace {

TEST(ws_masked_frame, reproduces_the_ice_client_frame) {
    const auto message = test::hex(test::ice_isa_message_hex);
    const ws_mask_key key{std::byte{0x64}, std::byte{0x56}, std::byte{0x64}, std::byte{0xdf}};
    protocol::byte_buffer out = test::hex("aa");  // appended after what the buffer held
    EXPECT_EQ(append_masked_frame(out, ws_opcode::binary, message, key), 76u);
    EXPECT_EQ(test::to_hex(out), "aa" + std::string(test::ice_isa_frame_hex));
    EXPECT_EQ(test::to_hex(message), test::ice_isa_message_hex) << "the caller's message stays intact";
}

TEST(ws_masked_frame, pieces_are_masked_as_one_payload) {
    const auto message = test::pattern(70046);  // 64-bit length
    const ws_mask_key key{std::byte{0x8b}, std::byte{0x82}, std::byte{0x58}, std::byte{0x8d}};
    protocol::byte_buffer whole, pieced;
    append_masked_frame(whole, ws_opcode::binary, message, key);
    const protocol::byte_view all(message);
    const std::array<protocol::byte_view, 3> pieces{all.first(13), protocol::byte_view{}, all.subspan(13)};
    append_masked_frame(pieced, ws_opcode::binary, pieces, key);
    EXPECT_EQ(pieced, whole);
    ASSERT_EQ(whole.size(), 14u + 70046u);
    EXPECT_EQ(test::to_hex(protocol::byte_view(whole).first(14)), "82ff000000000001119e8b82588d");
    auto payload = std::span(whole).subspan(14);
    apply_mask(payload, key, 0);
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), message.begin()));
}

}  // namespace
}  // namespace moraine::transport
