// http_head: an HTTP head collected across reads, bounded at 8 KiB.
#include <moraine/transport/http_head.hpp>

#include <gtest/gtest.h>

namespace moraine::transport {
namespace {

TEST(http_head, completes_at_the_blank_line_split_anywhere) {
    const std::string text = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    for (std::size_t split = 0; split <= text.size(); ++split) {
        http_head h;
        std::size_t used = 0;
        const auto first = h.add(protocol::as_bytes(std::string_view(text).substr(0, split)), used);
        EXPECT_EQ(used, split);
        if (split == text.size()) {
            EXPECT_EQ(first, http_head::state::complete);
            continue;
        }
        ASSERT_EQ(first, http_head::state::need_more) << split;
        EXPECT_EQ(h.add(protocol::as_bytes(std::string_view(text).substr(split) ), used), http_head::state::complete);
        EXPECT_EQ(used, text.size() - split);
        EXPECT_EQ(h.text(), text);
    }
}

TEST(http_head, leaves_the_bytes_after_the_head) {
    http_head h;
    std::size_t used = 0;
    EXPECT_EQ(h.add(protocol::as_bytes("HTTP/1.1 101 x\r\n\r\n\x82\x0e"), used), http_head::state::complete);
    EXPECT_EQ(used, 18u);
}

TEST(http_head, is_too_long_after_8_kib_without_a_blank_line) {
    http_head h;
    std::size_t used = 0;
    const std::string line(1000, 'a');
    for (int i = 0; i < 8; ++i) EXPECT_EQ(h.add(protocol::as_bytes(line), used), http_head::state::need_more);
    EXPECT_EQ(h.add(protocol::as_bytes(line), used), http_head::state::too_long);
    EXPECT_EQ(used, 192u);  // up to 8 KiB, no further
}

}  // namespace
}  // namespace moraine::transport
