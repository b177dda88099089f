// metrics: the latency histogram and the Prometheus text exposition. Checked: bucket placement
// (a bound is inclusive, above the last only +Inf), cumulative counts, sum; rendering of HELP /
// TYPE once per family, shard and extra labels, integer and fractional values, histograms.
#include <moraine/net/metrics.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace moraine;

namespace {
constexpr net::metric_family requests{"test_requests_total", "counter", "Requests."};
constexpr net::metric_family temperature{"test_temperature", "gauge", "Degrees."};
constexpr net::metric_family latency{"test_latency_seconds", "histogram", "Latency."};

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
    return n;
}
}  // namespace

TEST(metrics, histogram_buckets_are_inclusive_and_cumulative) {
    net::latency_histogram h;
    h.observe(0.0001);  // exactly the first bound
    h.observe(0.0003);  // in (0.00025, 0.0005]
    h.observe(10.0);    // above the last bound: +Inf only
    EXPECT_EQ(h.count(), 3u);
    EXPECT_DOUBLE_EQ(h.sum(), 10.0004);
    EXPECT_EQ(h.cumulative(0), 1u);
    EXPECT_EQ(h.cumulative(1), 1u);
    EXPECT_EQ(h.cumulative(2), 2u);
    EXPECT_EQ(h.cumulative(net::latency_histogram::bounds.size() - 1), 2u);
}

TEST(metrics, render_writes_each_family_once_with_shard_labels) {
    net::metric_sink s0(0), s1(1), process;
    s0.add(requests, 3);
    s1.add(requests, 4, "kind=\"x\"");
    s0.add(temperature, 21.5);
    process.add(temperature, 7);
    const std::string text = net::render_metrics({s0, s1, process});
    EXPECT_EQ(count_of(text, "# HELP test_requests_total Requests.\n"), 1u);
    EXPECT_EQ(count_of(text, "# TYPE test_requests_total counter\n"), 1u);
    EXPECT_NE(text.find("test_requests_total{shard=\"0\"} 3\n"), std::string::npos) << text;
    EXPECT_NE(text.find("test_requests_total{shard=\"1\",kind=\"x\"} 4\n"), std::string::npos);
    EXPECT_NE(text.find("test_temperature{shard=\"0\"} 21.5\n"), std::string::npos);
    EXPECT_NE(text.find("test_temperature 7\n"), std::string::npos) << "process-wide: no shard label";
    // A family's samples are contiguous: both requests lines come before the temperature family.
    EXPECT_LT(text.find("test_requests_total{shard=\"1\""), text.find("# HELP test_temperature"));
}

TEST(metrics, render_writes_histogram_buckets_sum_and_count) {
    net::latency_histogram h;
    h.observe(0.002);
    h.observe(0.2);
    net::metric_sink s(2);
    s.add(latency, h);
    const std::string text = net::render_metrics({s});
    EXPECT_NE(text.find("# TYPE test_latency_seconds histogram\n"), std::string::npos);
    EXPECT_NE(text.find("test_latency_seconds_bucket{shard=\"2\",le=\"0.0025\"} 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("test_latency_seconds_bucket{shard=\"2\",le=\"0.25\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("test_latency_seconds_bucket{shard=\"2\",le=\"+Inf\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("test_latency_seconds_count{shard=\"2\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("test_latency_seconds_sum{shard=\"2\"} 0.202\n"), std::string::npos);
}

TEST(metrics, process_metrics_reports_this_process) {
    const auto sink = net::process_metrics();
    EXPECT_FALSE(sink.shard().has_value());
    double rss = -1, fds = -1;
    for (const auto& m : sink.samples()) {
        if (m.family->name == "process_resident_memory_bytes") rss = m.value;
        if (m.family->name == "process_open_fds") fds = m.value;
    }
    EXPECT_GT(rss, 0) << "Linux has /proc/self";
    EXPECT_GE(fds, 3) << "stdin, stdout and stderr at least";
}
