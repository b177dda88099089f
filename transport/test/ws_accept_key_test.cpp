// Sec-WebSocket-Accept (RFC 6455 §1.3, §4.2.2) and random keys.
#include <moraine/transport/ws_accept_key.hpp>

#include <gtest/gtest.h>

namespace moraine::transport {
namespace {

TEST(ws_accept_key, matches_the_rfc_example_and_the_captures) {
    EXPECT_EQ(ws_accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");  // RFC 6455 §1.3
    EXPECT_EQ(ws_accept_key("gwa0KJOvl4hRSb3AE1yS7g=="), "VXgua0rvY/ttw2xumPuwUl8aa24=");  // [ws-upgrade-ice37]
    EXPECT_EQ(ws_accept_key("x+09A4SNFs2w7YjDsKsf5w=="), "w/pOMBWQ/JC8nBflUo/5RaX4FnU=");  // [ws-upgrade-variants 1]
}

TEST(ws_accept_key, random_keys_are_24_base64_characters_and_differ) {
    const auto a = ws_random_key(), b = ws_random_key();
    EXPECT_EQ(a.size(), 24u);
    EXPECT_EQ(a.substr(22), "==");  // 16 bytes
    EXPECT_NE(a, b);
}

}  // namespace
}  // namespace moraine::transport
