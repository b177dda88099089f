// runtime_config: the runtime's settings when nothing is configured. These are Ice's defaults
// (Ice.MessageSizeMax 1 MiB, a 10 s connect timeout, random endpoint selection, locator answers
// cached forever) and the queue watermarks the write queues rely on (low < high < max), so a
// change here changes the router's behaviour for every deployment that sets nothing.
#include <moraine/net/runtime_config.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(runtime_config, defaults_are_ices) {
    const net::runtime_config c;
    EXPECT_EQ(c.threads, 0u) << "one shard per usable CPU";
    EXPECT_EQ(c.message_size_max, 1024u * 1024u);
    EXPECT_EQ(c.backend_connect_timeout_ms, 10000);
    EXPECT_FALSE(c.endpoints_ordered);
    EXPECT_EQ(c.connections_per_address, 0u) << "no per-address limit";
    EXPECT_FALSE(c.locator.has_value());
    EXPECT_EQ(c.locator_cache_timeout_s, -1);
    EXPECT_EQ(c.drain_timeout_ms, 30000);
    EXPECT_TRUE(c.log_level.empty());
}

TEST(runtime_config, queue_watermarks_are_ordered) {
    const net::runtime_config c;
    EXPECT_LT(c.connection_queue_low, c.connection_queue_high);
    EXPECT_LT(c.connection_queue_high, c.connection_queue_max);
    EXPECT_GT(c.memory_budget_bytes, c.connection_queue_max) << "one slow queue cannot spend the whole budget";
}

TEST(runtime_config, metrics_are_off_and_loopback_by_default) {
    const net::metrics_config m;
    EXPECT_FALSE(m.enabled);
    EXPECT_EQ(m.host, "127.0.0.1");
    EXPECT_EQ(m.port, 0);
}
