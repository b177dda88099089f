// published_aliases: which published topic-service endpoints are redirected to a bound one.
#include <moraine/icestorm_bridge/published_aliases.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

std::vector<protocol::endpoint> eps(const std::string& s) { return *protocol::endpoints_from_string(s); }

icestorm_bridge::topics_config topics(const std::string& tm, const std::string& tm_published, const std::string& pub = "",
                                      const std::string& pub_published = "") {
    icestorm_bridge::topics_config c;
    c.enabled = true;
    c.topic_manager_endpoints = eps(tm);
    if (!tm_published.empty()) c.topic_manager_published_endpoints = eps(tm_published);
    if (!pub.empty()) c.publish_endpoints = eps(pub);
    if (!pub_published.empty()) c.publish_published_endpoints = eps(pub_published);
    return c;
}

}  // namespace

TEST(published_aliases, a_published_address_nobody_binds_reaches_the_loopback_binding) {
    const auto a = icestorm_bridge::published_aliases(
        topics("tcp -h 198.18.1.1 -p 10002:tcp -h 127.0.0.1 -p 10002", "tcp -h 127.0.0.1 -p 10000"));
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].published.port, 10000);
    EXPECT_EQ(a[0].bound.host, "127.0.0.1") << "loopback preferred over the first listed";
    EXPECT_EQ(a[0].bound.port, 10002);
}

TEST(published_aliases, none_where_the_published_endpoint_is_bound_or_publishing_is_off) {
    EXPECT_TRUE(icestorm_bridge::published_aliases(
                    topics("tcp -h 127.0.0.1 -p 10000:tcp -h 198.18.1.1 -p 10000", "tcp -h 127.0.0.1 -p 10000"))
                    .empty())
        << "published = one of the bound endpoints";
    EXPECT_TRUE(icestorm_bridge::published_aliases(topics("tcp -h 127.0.0.1 -p 10000", "")).empty())
        << "no published endpoints";
    auto off = topics("tcp -h 127.0.0.1 -p 10002", "tcp -h 127.0.0.1 -p 10000");
    off.enabled = false;
    EXPECT_TRUE(icestorm_bridge::published_aliases(off).empty()) << "topic service disabled";
}

TEST(published_aliases, same_transport_fixed_port_and_an_unspecified_host_becomes_loopback) {
    const auto a = icestorm_bridge::published_aliases(topics(
        "ws -h 127.0.0.1 -p 10005:tcp -h 0.0.0.0 -p 10006:tcp -h 127.0.0.1 -p 0",
        "tcp -h tm.example.com -p 10000:ssl -h tm.example.com -p 10001", "tcp -h * -p 10007",
        "tcp -h pub.example.com -p 10001"));
    ASSERT_EQ(a.size(), 2u) << "the ssl endpoint has no bound ssl endpoint: no alias";
    EXPECT_EQ(a[0].published.host, "tm.example.com");
    EXPECT_EQ(a[0].bound.host, "127.0.0.1") << "0.0.0.0 is reached on loopback";
    EXPECT_EQ(a[0].bound.port, 10006) << "tcp, not ws; not the port-0 one";
    EXPECT_EQ(a[1].published.host, "pub.example.com");
    EXPECT_EQ(a[1].bound.host, "127.0.0.1");
    EXPECT_EQ(a[1].bound.port, 10007);
}

TEST(published_aliases, a_bound_host_in_other_letters_is_the_same_address) {
    // backend_pool matches aliases ignoring case; an alias for a bound address in other letters
    // would send a client's call for the bound address elsewhere.
    EXPECT_TRUE(icestorm_bridge::published_aliases(
                    topics("tcp -h TM.example.com -p 10000:tcp -h 127.0.0.1 -p 10002", "tcp -h tm.EXAMPLE.com -p 10000"))
                    .empty());
}
