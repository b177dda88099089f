// shard: one core's share of the runtime. Checked: collect() reports the runtime's counters
// labelled by shard plus every registered collector's samples; the drain steps run the services'
// hooks in order, count their in-flight work and close accepted connections gracefully.
#include "loop_harness.hpp"

#include <moraine/net/metrics.hpp>
#include <moraine/net/shard.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace moraine;

namespace {
constexpr net::metric_family widgets{"test_widgets", "gauge", "Widgets, for the test."};
}

TEST(shard, collect_reports_runtime_counters_and_collectors) {
    auto shards = test::owned_shards(2);
    auto& sh = shards->at(1);
    sh.metrics().connections_accepted = 7;
    sh.metrics().closed[static_cast<std::size_t>(net::close_reason::idle)] = 3;
    sh.add_collector([](net::metric_sink& s) { s.add(widgets, 42); });
    const auto sink = sh.collect();
    EXPECT_EQ(sink.shard(), std::optional<unsigned>(1));
    const std::string text = net::render_metrics({sink});
    EXPECT_NE(text.find("moraine_connections_accepted_total{shard=\"1\"} 7\n"), std::string::npos) << text;
    EXPECT_NE(text.find("moraine_connections_closed_total{shard=\"1\",reason=\"idle\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find("test_widgets{shard=\"1\"} 42\n"), std::string::npos);
}

TEST(shard, drain_runs_the_hooks_in_order_and_sums_in_flight) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    std::vector<std::string> steps;
    std::size_t busy = 2;
    sh.add_drain({[&] { steps.push_back("begin"); }, [&] { return busy; }, [&] { steps.push_back("finish"); }});
    sh.add_drain({[&] { steps.push_back("begin2"); }, nullptr, nullptr});
    sh.begin_drain();
    EXPECT_EQ(steps, (std::vector<std::string>{"begin", "begin2"}));
    EXPECT_EQ(sh.in_flight(), 2u);
    busy = 0;
    EXPECT_EQ(sh.in_flight(), 0u);
    sh.finish_drain();
    EXPECT_EQ(steps.back(), "finish");
}

TEST(shard, finish_drain_closes_accepted_connections_with_close_connection) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::probed p(sh);
    p.conn->start_as_accepted();  // registers with the shard as accepted
    test::settle(*shards);
    sh.finish_drain();
    EXPECT_EQ(sh.close_messages_pending(), 1u);
    ASSERT_TRUE(test::run_until(*shards, [&] { return p.peer().frames().size() == 2; }));
    EXPECT_EQ(test::header_of(p.peer().frames()[0]).type, protocol::message_type::validate_connection);
    EXPECT_EQ(test::header_of(p.peer().frames()[1]).type, protocol::message_type::close_connection);
    EXPECT_EQ(sh.close_messages_pending(), 0u);
    p.conn->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(shard, begin_drain_closes_the_acceptors) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    auto acceptor = std::make_shared<net::tcp::acceptor>(
        sh.io(), net::tcp::endpoint(net::asio::ip::make_address("127.0.0.1"), 0));
    sh.add_acceptor(acceptor);
    ASSERT_TRUE(acceptor->is_open());
    sh.begin_drain();
    EXPECT_FALSE(acceptor->is_open());
}
