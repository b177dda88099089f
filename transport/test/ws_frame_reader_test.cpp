// read_ws_frames: one read of client frames through the loop both ends share: payload in
// order, a ping answered in place, a close ending it, a callback stopping it, an error.
#include <moraine/transport/ws_frame_reader.hpp>

#include <moraine/transport/ws_masked_frame.hpp>

#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moraine::transport {
namespace {

using test::to_hex;
const ws_mask_key key{std::byte{0x12}, std::byte{0x34}, std::byte{0x56}, std::byte{0x78}};

void add_frame(protocol::byte_buffer& out, ws_opcode op, std::string_view text) {
    append_masked_frame(out, op, protocol::as_bytes(text), key);
}

struct seen {
    std::string payload;
    std::vector<std::string> control;  // hex of each frame to send
};

ws_read_end read_all(protocol::byte_buffer& input, seen& s, boost::system::error_code& ec, int payload_calls_allowed = -1) {
    ws_frame_decoder decoder(ws_role::server);
    return read_ws_frames(
        decoder, std::span(input), ec,
        [&](std::span<const std::byte> p) {
            s.payload.append(reinterpret_cast<const char*>(p.data()), p.size());
            return payload_calls_allowed < 0 || --payload_calls_allowed > 0;
        },
        [&](const ws_control_frame& f) {
            s.control.push_back(to_hex(f.view()));
            return true;
        });
}

TEST(ws_frame_reader, payload_in_order_and_a_ping_answered_between_messages) {
    protocol::byte_buffer in;
    add_frame(in, ws_opcode::binary, "abc");
    add_frame(in, ws_opcode::ping, "hi");
    add_frame(in, ws_opcode::binary, "def");
    seen s;
    boost::system::error_code ec;
    EXPECT_EQ(read_all(in, s, ec), ws_read_end::need_more);
    EXPECT_FALSE(ec);
    EXPECT_EQ(s.payload, "abcdef");
    ASSERT_EQ(s.control.size(), 1u);
    EXPECT_EQ(s.control[0], "8a026869") << "an unmasked pong carrying the ping's data";
}

TEST(ws_frame_reader, a_close_frame_is_answered_and_ends_the_read) {
    protocol::byte_buffer in;
    add_frame(in, ws_opcode::binary, "x");
    add_frame(in, ws_opcode::close, "");
    add_frame(in, ws_opcode::binary, "after the close");
    seen s;
    boost::system::error_code ec;
    EXPECT_EQ(read_all(in, s, ec), ws_read_end::closed);
    EXPECT_EQ(s.payload, "x") << "nothing after the close frame is handed out";
    ASSERT_EQ(s.control.size(), 1u);
    EXPECT_EQ(s.control[0], "880203e8") << "close 1000";
}

TEST(ws_frame_reader, a_payload_callback_returning_false_stops) {
    protocol::byte_buffer in;
    add_frame(in, ws_opcode::binary, "one");
    add_frame(in, ws_opcode::binary, "two");
    seen s;
    boost::system::error_code ec;
    EXPECT_EQ(read_all(in, s, ec, 1), ws_read_end::stopped);
    EXPECT_EQ(s.payload, "one");
}

TEST(ws_frame_reader, a_text_frame_is_a_protocol_error) {
    protocol::byte_buffer in;
    add_frame(in, ws_opcode::binary, "ok");
    add_frame(in, ws_opcode::text, "no");
    seen s;
    boost::system::error_code ec;
    EXPECT_EQ(read_all(in, s, ec), ws_read_end::error);
    EXPECT_EQ(ec, ws_errc::text_frame);
    EXPECT_EQ(s.payload, "ok");
}

}  // namespace
}  // namespace moraine::transport
