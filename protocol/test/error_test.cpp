#include <moraine/protocol/error.hpp>

#include <gtest/gtest.h>
#include <set>
#include <string>

namespace moraine::protocol {
namespace {

TEST(error, category_name) { EXPECT_STREQ(error_category().name(), "moraine.protocol"); }

TEST(error, every_errc_has_a_distinct_message) {
    std::set<std::string> seen;
    for (int e = static_cast<int>(errc::bad_magic); e <= static_cast<int>(errc::bad_string); ++e) {
        const auto msg = make_error_code(static_cast<errc>(e)).message();
        EXPECT_FALSE(msg.empty());
        EXPECT_EQ(msg.find("unknown moraine.protocol error"), std::string::npos) << e;
        EXPECT_TRUE(seen.insert(msg).second) << msg;
    }
    EXPECT_EQ(make_error_code(static_cast<errc>(999)).message(), "unknown moraine.protocol error");
}

TEST(error, converts_to_error_code_and_compares) {
    boost::system::error_code ec = errc::bad_magic;
    EXPECT_TRUE(ec);
    EXPECT_EQ(ec, errc::bad_magic);
    EXPECT_NE(ec, errc::bad_proxy);
    EXPECT_EQ(&ec.category(), &error_category());
    EXPECT_NE(ec.message().find("BadMagicException"), std::string::npos);
}

}  // namespace
}  // namespace moraine::protocol
