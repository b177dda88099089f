// udp endpoints: datagram_listener receiving on a shard and datagram_pool sending to a proxy's
// udp endpoint, over loopback, driven by the test thread (loop_harness.hpp). Asserted: what the
// handler sees, what is dropped and counted, what a send refuses.
#include "loop_harness.hpp"

#include <moraine/net/datagram_listener.hpp>
#include <moraine/net/datagram_pool.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/proxy.hpp>

#include <gtest/gtest.h>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

struct datagrams : ::testing::Test {
    std::unique_ptr<net::shard_set> shards = test::owned_shards(1);
    std::vector<std::string> received;  // "<operation>/<request id>" per request handed over
    protocol::proxy to;                  // a datagram proxy to the bound udp endpoint

    void SetUp() override {
        auto bound = shards->listen_datagrams("test",
            {*protocol::endpoint_from_string("udp -h 127.0.0.1 -p 0")},
            [this](net::shard&, const protocol::request_view& r) {
                received.push_back(std::string(r.operation) + "/" + std::to_string(r.request_id));
            });
        ASSERT_EQ(bound.size(), 1u);
        ASSERT_NE(bound[0].port, 0);
        to.id = {"subscriber", "cat"};
        to.mode = static_cast<std::uint8_t>(protocol::proxy_mode::datagram);
        to.endpoints = bound;
    }
    void TearDown() override { test::finish(*shards); }

    net::shard& sh() { return shards->at(0); }
    bool send(const protocol::byte_buffer& message) {
        std::string failure;
        return sh().datagrams().send(to, message, failure);
    }
    protocol::byte_buffer oneway(std::string_view op, std::int32_t id = 0) {
        return test::request_message(id, to.id.view(), op, test::empty_encaps());
    }
};

}  // namespace

TEST_F(datagrams, a_oneway_request_reaches_the_handler) {
    ASSERT_TRUE(send(oneway("tick")));
    ASSERT_TRUE(test::run_until(*shards, [&] { return received.size() == 1; }, 2s));
    EXPECT_EQ(received[0], "tick/0");
    EXPECT_EQ(sh().datagrams().sent(), 1u);
    EXPECT_EQ(sh().metrics().datagrams_dropped, 0u);
}

TEST_F(datagrams, each_request_of_a_batch_reaches_the_handler) {
    protocol::batch_builder batch;
    batch.add(oneway("a"));
    batch.add(oneway("b"));
    ASSERT_TRUE(send(batch.finish()));
    ASSERT_TRUE(test::run_until(*shards, [&] { return received.size() == 2; }, 2s));
    EXPECT_EQ(received, (std::vector<std::string>{"a/0", "b/0"}));
}

TEST_F(datagrams, twoway_truncated_and_foreign_datagrams_are_dropped_and_counted) {
    auto truncated = oneway("cut");
    truncated.pop_back();  // the size field now says one byte more
    ASSERT_TRUE(send(oneway("twoway", 5)));  // no reply can go back over udp
    ASSERT_TRUE(send(truncated));
    ASSERT_TRUE(send(protocol::byte_buffer{std::byte{'G'}, std::byte{'E'}, std::byte{'T'}}));
    ASSERT_TRUE(send(oneway("after")));  // the endpoint still serves
    ASSERT_TRUE(test::run_until(*shards, [&] { return !received.empty(); }, 2s));
    EXPECT_EQ(received, (std::vector<std::string>{"after/0"}));
    EXPECT_EQ(sh().metrics().datagrams_dropped, 3u);
}

TEST_F(datagrams, a_proxy_without_udp_or_a_message_over_a_datagram_is_refused) {
    std::string failure;
    auto tcp_only = to;
    tcp_only.endpoints = {*protocol::endpoint_from_string("tcp -h 127.0.0.1 -p 1")};
    EXPECT_FALSE(sh().datagrams().send(tcp_only, oneway("x"), failure));
    EXPECT_NE(failure.find("NoEndpointException"), std::string::npos);
    protocol::byte_buffer huge(net::max_datagram_bytes + 1);
    EXPECT_FALSE(sh().datagrams().send(to, huge, failure));
    EXPECT_NE(failure.find("DatagramLimitException"), std::string::npos);
    EXPECT_EQ(sh().datagrams().sent(), 0u);
}

TEST_F(datagrams, a_host_name_is_looked_up_and_the_waiting_message_sent) {
    auto named = to;
    named.endpoints[0].host = "localhost";
    std::string failure;
    ASSERT_TRUE(sh().datagrams().send(named, oneway("by-name"), failure));
    ASSERT_TRUE(test::run_until(*shards, [&] { return !received.empty(); }, 3s));
    EXPECT_EQ(received, (std::vector<std::string>{"by-name/0"}));
}

TEST(datagram_mode, only_datagram_and_batch_datagram_proxies) {
    protocol::proxy p;
    for (auto m : {protocol::proxy_mode::twoway, protocol::proxy_mode::oneway, protocol::proxy_mode::batch_oneway}) {
        p.mode = static_cast<std::uint8_t>(m);
        EXPECT_FALSE(net::datagram_mode(p));
    }
    for (auto m : {protocol::proxy_mode::datagram, protocol::proxy_mode::batch_datagram}) {
        p.mode = static_cast<std::uint8_t>(m);
        EXPECT_TRUE(net::datagram_mode(p));
    }
}
