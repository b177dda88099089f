#include <moraine/icestorm_bridge/qos.hpp>

#include <gtest/gtest.h>

using moraine::icestorm_bridge::parse_qos;
using moraine::icestorm_bridge::qos;

TEST(qos, defaults_and_valid_settings) {
    auto q = parse_qos({}, false);
    ASSERT_TRUE(std::holds_alternative<qos>(q));
    EXPECT_FALSE(std::get<qos>(q).ordered);
    EXPECT_EQ(std::get<qos>(q).retry_count, 0);

    q = parse_qos({{"reliability", "ordered"}, {"retryCount", "-1"}}, true);
    ASSERT_TRUE(std::holds_alternative<qos>(q));
    EXPECT_TRUE(std::get<qos>(q).ordered);
    EXPECT_EQ(std::get<qos>(q).retry_count, -1);
}

TEST(qos, bad_values_give_the_reason) {
    auto q = parse_qos({{"reliability", "ordered"}}, false);
    ASSERT_TRUE(std::holds_alternative<std::string>(q));
    EXPECT_EQ(std::get<std::string>(q), "ordered reliability requires a twoway proxy");
    EXPECT_EQ(std::get<std::string>(parse_qos({{"reliability", "Ordered"}}, true)), "invalid reliability: Ordered");
    EXPECT_EQ(std::get<std::string>(parse_qos({{"locatorCacheTimeout", "abc"}}, true)),
              "invalid locator cache timeout (numeric value required): abc");
    EXPECT_EQ(std::get<std::string>(parse_qos({{"connectionCached", "x"}}, true)),
              "invalid connection cached setting (numeric value required): x");
    // IceStorm accepts any retryCount; a non-number counts as 0.
    auto lenient = parse_qos({{"retryCount", "abc"}}, true);
    ASSERT_TRUE(std::holds_alternative<qos>(lenient));
    EXPECT_EQ(std::get<qos>(lenient).retry_count, 0);
}

TEST(qos, entries_read_back_as_the_same_qos) {
    using moraine::icestorm_bridge::qos_entries;
    EXPECT_TRUE(qos_entries(qos{}).empty());  // the defaults need no entry
    for (const qos& q : {qos{true, 3, true}, qos{false, -1, false}, qos{true, 0, false}}) {
        const auto back = parse_qos(qos_entries(q), true);
        ASSERT_TRUE(std::holds_alternative<qos>(back));
        EXPECT_EQ(std::get<qos>(back).ordered, q.ordered);
        EXPECT_EQ(std::get<qos>(back).retry_count, q.retry_count);
        EXPECT_EQ(std::get<qos>(back).connection_cached, q.connection_cached);
    }
}
