// Frame headers out: the smallest length form, FIN, binary, masked or not (docs/transports.md §1.4).
#include <moraine/transport/ws_frame_header.hpp>

#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

namespace moraine::transport {
namespace {

TEST(ws_frame_header, server_headers_match_the_captures) {
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 14).view()), "820e");  // validate connection
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 336).view()), "827e0150");
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 70036).view()), "827f0000000000011194");
}

TEST(ws_frame_header, lengths_switch_form_at_126_and_65536) {
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 125).view()), "827d");
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 126).view()), "827e007e");
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 65535).view()), "827effff");
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 65536).view()), "827f0000000000010000");
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 0).view()), "8200");
    for (std::uint64_t n : {0u, 125u, 126u, 65535u, 65536u}) {
        EXPECT_EQ(ws_header_size(n, false), ws_header(ws_opcode::binary, n).size) << n;
        EXPECT_EQ(ws_header_size(n, true), ws_header(ws_opcode::binary, n, ws_mask_key{}).size) << n;
    }
}

TEST(ws_frame_header, client_headers_carry_the_mask_bit_and_key) {
    // [ws-session-ice37]: the 70-byte ice_isA and the 70046-byte request of an Ice 3.7 client.
    const ws_mask_key k1{std::byte{0x64}, std::byte{0x56}, std::byte{0x64}, std::byte{0xdf}};
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 70, k1).view()), "82c6645664df");
    const ws_mask_key k2{std::byte{0x8b}, std::byte{0x82}, std::byte{0x58}, std::byte{0x8d}};
    EXPECT_EQ(test::to_hex(ws_header(ws_opcode::binary, 70046, k2).view()), "82ff000000000001119e8b82588d");
}

}  // namespace
}  // namespace moraine::transport
