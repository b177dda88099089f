#include <moraine/client/router_endpoints.hpp>

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

TEST(router_endpoints, parses_every_endpoint_of_a_list_in_order) {
    auto list = parse_router_endpoints(
        "tcp -h 10.0.0.1 -p 4063 -t 60000:ssl -h b.example -p 4064:ws -h c -p 4065 -r /ice:wss -h d -p 4066");
    ASSERT_TRUE(list);
    ASSERT_EQ(list->size(), 4u);
    EXPECT_EQ((*list)[0].host, "10.0.0.1");
    EXPECT_EQ((*list)[0].port, 4063);
    EXPECT_FALSE((*list)[0].tls);
    EXPECT_EQ((*list)[1].host, "b.example");
    EXPECT_TRUE((*list)[1].tls);
    EXPECT_TRUE((*list)[2].websocket);
    EXPECT_FALSE((*list)[2].tls);
    EXPECT_EQ((*list)[2].resource, "/ice");
    EXPECT_TRUE((*list)[3].websocket && (*list)[3].tls) << "wss: WebSocket over TLS";
    EXPECT_EQ((*list)[3].resource, "/");
}

TEST(router_endpoints, one_endpoint_is_a_list_of_one) {
    auto list = parse_router_endpoints("tcp -h 127.0.0.1 -p 4063");
    ASSERT_TRUE(list);
    ASSERT_EQ(list->size(), 1u);
    EXPECT_EQ(list->front().port, 4063);
}

TEST(router_endpoints, a_quoted_ipv6_host_does_not_split_the_list) {
    auto list = parse_router_endpoints("tcp -h \"::1\" -p 4063:tcp -h \"fe80::1\" -p 4163");
    ASSERT_TRUE(list);
    ASSERT_EQ(list->size(), 2u);
    EXPECT_EQ((*list)[0].host, "::1");
    EXPECT_EQ((*list)[1].host, "fe80::1");
    EXPECT_EQ((*list)[1].port, 4163);
}

TEST(router_endpoints, one_bad_endpoint_fails_the_whole_list) {
    EXPECT_FALSE(parse_router_endpoints("tcp -h a -p 4063:udp -h b -p 4063"));
    EXPECT_FALSE(parse_router_endpoints("tcp -h a -p 4063:wss -h b")) << "a wss endpoint without a port";
    EXPECT_FALSE(parse_router_endpoints("tcp -h a -p 4063:tcp -h b"));
    EXPECT_FALSE(parse_router_endpoints("tcp -p 4063:tcp -h b -p 4063"));
    EXPECT_FALSE(parse_router_endpoints("tcp -h a -p 4063:tcp -h b -p 70000"));
    EXPECT_FALSE(parse_router_endpoints("tcp -h a -p 4063:"));
    EXPECT_FALSE(parse_router_endpoints(""));
    EXPECT_FALSE(parse_router_endpoints("nonsense"));
}

}  // namespace
}  // namespace moraine::client
