#include <moraine/client/router_address.hpp>

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

TEST(router_address, parses_tcp_endpoints) {
    auto a = router_address::parse("tcp -h 127.0.0.1 -p 4063");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 4063);
    a = router_address::parse("tcp -h router.example -p 4064 -t 60000:tcp -h other -p 1");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "router.example");
    EXPECT_EQ(a->port, 4064);
    EXPECT_FALSE(a->tls);
}

TEST(router_address, ssl_endpoints_select_tls) {
    auto a = router_address::parse("ssl -h 127.0.0.1 -p 4064");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 4064);
    EXPECT_TRUE(a->tls);
    a = router_address::parse("ssl -h router.example -p 4064 -t 60000:tcp -h router.example -p 4063");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->tls) << "the first endpoint of the list decides";
    a = router_address::parse("tcp -h router.example -p 4063:ssl -h router.example -p 4064");
    ASSERT_TRUE(a);
    EXPECT_FALSE(a->tls);
    EXPECT_EQ(a->port, 4063);
    EXPECT_FALSE(router_address::parse("ssl -p 4064"));
    EXPECT_FALSE(router_address::parse("ssl -h 127.0.0.1"));
}

TEST(router_address, ws_endpoints_select_websocket_with_their_resource) {
    auto a = router_address::parse("ws -h 127.0.0.1 -p 4065");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->websocket);
    EXPECT_FALSE(a->tls);
    EXPECT_EQ(a->resource, "/");
    a = router_address::parse("ws -h 127.0.0.1 -p 4065 -r /ice");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->resource, "/ice");
    a = router_address::parse("tcp -h 127.0.0.1 -p 4063");
    ASSERT_TRUE(a);
    EXPECT_FALSE(a->websocket);
}

TEST(router_address, wss_endpoints_select_websocket_over_tls) {
    auto a = router_address::parse("wss -h 127.0.0.1 -p 4066 -r /ice");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 4066);
    EXPECT_TRUE(a->tls);
    EXPECT_TRUE(a->websocket);
    EXPECT_EQ(a->resource, "/ice");
    a = router_address::parse("wss -h router.example -p 4066 -t 60000");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->tls && a->websocket);
    EXPECT_EQ(a->resource, "/");
    EXPECT_FALSE(router_address::parse("wss -p 4066"));
    EXPECT_FALSE(router_address::parse("wss -h 127.0.0.1"));
}

TEST(router_address, rejects_what_it_cannot_connect_to) {
    EXPECT_FALSE(router_address::parse("udp -h 127.0.0.1 -p 4063"));
    EXPECT_FALSE(router_address::parse("tcp -p 4063"));
    EXPECT_FALSE(router_address::parse("tcp -h 127.0.0.1"));
    EXPECT_FALSE(router_address::parse("tcp -h 127.0.0.1 -p 70000"));
    EXPECT_FALSE(router_address::parse("nonsense"));
}

}  // namespace
}  // namespace moraine::client
