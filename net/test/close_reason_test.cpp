// close_reason: the label values of moraine_connections_closed_total{reason=...}. Dashboards and
// alerts match these strings, so each reason must keep its name and every reason have one.
#include <moraine/net/close_reason.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace moraine;

TEST(close_reason, every_reason_has_its_documented_label) {
    using net::close_reason;
    EXPECT_EQ(to_string(close_reason::peer_closed), "peer_closed");
    EXPECT_EQ(to_string(close_reason::idle), "idle");
    EXPECT_EQ(to_string(close_reason::protocol_error), "protocol_error");
    EXPECT_EQ(to_string(close_reason::policy), "policy");
    EXPECT_EQ(to_string(close_reason::slow_consumer), "slow_consumer");
    EXPECT_EQ(to_string(close_reason::handshake), "handshake");
    EXPECT_EQ(to_string(close_reason::session_ended), "session_ended");
    EXPECT_EQ(to_string(close_reason::shutdown), "shutdown");
    EXPECT_EQ(to_string(close_reason::io_error), "io_error");
    EXPECT_EQ(to_string(close_reason::moved), "moved");
}

TEST(close_reason, labels_are_distinct_and_cover_the_count) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < net::close_reason_count; ++i) {
        const auto label = to_string(static_cast<net::close_reason>(i));
        EXPECT_FALSE(label.empty());
        seen.emplace(label);
    }
    EXPECT_EQ(seen.size(), net::close_reason_count);
    EXPECT_EQ(static_cast<std::size_t>(net::close_reason::moved) + 1, net::close_reason_count);
}

static_assert(net::to_string(net::close_reason::idle) == "idle", "usable at compile time");
