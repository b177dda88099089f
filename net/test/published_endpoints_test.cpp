#include <moraine/net/published_endpoints.hpp>

#include <gtest/gtest.h>

namespace net = moraine::net;
using moraine::protocol::endpoint;

namespace {

endpoint tcp(std::string host, int port) {
    endpoint e;
    e.host = std::move(host);
    e.port = port;
    return e;
}

std::vector<std::string> hosts(const std::vector<endpoint>& eps) {
    std::vector<std::string> out;
    for (const auto& e : eps) out.push_back(e.host);
    return out;
}

}  // namespace

TEST(published_endpoints, wildcards_become_the_machines_addresses) {
    const std::vector<std::string> machine{"127.0.0.1", "192.0.2.2", "10.1.2.3", "::1", "fe80::1", "2001:db8::5"};
    EXPECT_EQ(hosts(net::published_endpoints({tcp("0.0.0.0", 4064)}, machine)),
              (std::vector<std::string>{"192.0.2.2", "10.1.2.3"}));
    EXPECT_EQ(hosts(net::published_endpoints({tcp("*", 4064)}, machine)),
              (std::vector<std::string>{"192.0.2.2", "10.1.2.3", "2001:db8::5"}));
    const auto eps = net::published_endpoints({tcp("", 5000), tcp("127.0.0.1", 6000)}, machine);
    ASSERT_EQ(eps.size(), 4u);
    EXPECT_EQ(eps.back().host, "127.0.0.1");  // a named host is kept as it is
    for (const auto& e : eps) EXPECT_NE(e.port, 0);
    EXPECT_EQ(eps.front().port, 5000);
}

TEST(published_endpoints, loopback_only_machine_publishes_loopback) {
    EXPECT_EQ(hosts(net::published_endpoints({tcp("0.0.0.0", 1)}, {"127.0.0.1", "::1"})),
              (std::vector<std::string>{"127.0.0.1"}));
}

TEST(published_endpoints, this_machine_has_addresses) {
    const auto all = net::local_addresses();
    EXPECT_NE(std::find(all.begin(), all.end(), "127.0.0.1"), all.end());
    const auto eps = net::published_endpoints({tcp("0.0.0.0", 7)});
    ASSERT_FALSE(eps.empty());
    for (const auto& e : eps) EXPECT_FALSE(net::is_wildcard_host(e.host));
}
