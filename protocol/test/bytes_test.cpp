#include <moraine/protocol/bytes.hpp>

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

TEST(bytes, views_share_storage_both_ways) {
    const std::string s = "IceP";
    const byte_view b = as_bytes(s);
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[0], std::byte{'I'});
    EXPECT_EQ(static_cast<const void*>(b.data()), static_cast<const void*>(s.data()));
    EXPECT_EQ(as_chars(b), "IceP");
    EXPECT_TRUE(as_chars(byte_view{}).empty());
}

}  // namespace
}  // namespace moraine::protocol
