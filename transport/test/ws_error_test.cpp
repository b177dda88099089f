// ws_errc: messages and the close code each error calls for (RFC 6455 §7.4.1).
#include <moraine/transport/ws_error.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace moraine::transport {
namespace {

TEST(ws_error, every_code_has_its_own_message) {
    std::set<std::string> seen;
    for (int e = static_cast<int>(ws_errc::bad_http); e <= static_cast<int>(ws_errc::closed); ++e) {
        const auto msg = make_error_code(static_cast<ws_errc>(e)).message();
        EXPECT_NE(msg, "unknown WebSocket error") << e;
        EXPECT_TRUE(seen.insert(msg).second) << "duplicate message: " << msg;
    }
    EXPECT_EQ(std::string(ws_category().name()), "moraine.ws");
    EXPECT_EQ(make_error_code(ws_errc::text_frame).message(), "text frames not supported");
}

TEST(ws_error, close_codes_follow_rfc6455) {
    EXPECT_EQ(ws_close_code(ws_errc::message_too_big), 1009);
    EXPECT_EQ(ws_close_code(ws_errc::text_frame), 1003);
    EXPECT_EQ(ws_close_code(ws_errc::unmasked_frame), 1002);
    EXPECT_EQ(ws_close_code(ws_errc::bad_control_frame), 1002);
    EXPECT_EQ(ws_close_code(ws_errc::reserved_bits), 1002);
    EXPECT_EQ(ws_close_code(ws_errc::closed), 0) << "a peer's close was answered already";
    EXPECT_EQ(ws_close_code(ws_errc::unsupported_protocol), 0) << "no frames before the upgrade";
    EXPECT_EQ(ws_close_code(make_error_code(boost::system::errc::io_error)), 0);
}

}  // namespace
}  // namespace moraine::transport
