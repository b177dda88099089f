#include <moraine/protocol/header.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;
using test::to_hex;

TEST(header, write_header_layout) {
    std::array<std::byte, header_size> h{};
    write_header(h.data(), message_type::reply, compression_status::accepted, 0x12345678);
    EXPECT_EQ(to_hex(h), "49636550010001000201" "78563412");
}

TEST(header, patch_message_size) {
    std::array<std::byte, header_size> h{};
    write_header(h.data(), message_type::request, compression_status::none, 0);
    patch_message_size(h.data(), 47);
    EXPECT_EQ(to_hex(h), "496365500100010000002f000000");  // routed-twoway sayHello header
    patch_message_size(h.data(), -1);
    EXPECT_EQ(to_hex(h).substr(20), "ffffffff");
}

TEST(header, constant_messages_match_captures) {
    const auto validate = test::find_record("connection-validation", [](auto& r) { return test::is_type(r, "validateConnection"); });
    EXPECT_EQ(to_hex(validate_connection_message), test::str(validate, "hex"));
    const auto heartbeat = test::find_record("heartbeat", [](auto& r) { return test::is_type(r, "validateConnection"); });
    EXPECT_EQ(to_hex(validate_connection_message), test::str(heartbeat, "hex"));
    const auto close = test::find_record("close-connection", [](auto& r) { return test::is_type(r, "closeConnection"); });
    EXPECT_EQ(to_hex(close_connection_message), test::str(close, "hex"));
    EXPECT_EQ(to_hex(close_connection_message), "496365500100010004010e000000");
}

}  // namespace
}  // namespace moraine::protocol
