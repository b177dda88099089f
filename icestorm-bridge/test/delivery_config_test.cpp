// The delivery keys of the topic service: IceStorm.Send.* / IceStorm.Discard.Interval and the YAML names.
#include <moraine/icestorm_bridge/config.hpp>
#include <moraine/net/config_error.hpp>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

using namespace moraine;
using icestorm_bridge::queue_policy;

namespace {

icestorm_bridge::topics_config from_properties(const std::string& text) {
    std::vector<std::string> warnings;
    net::property_file p("test.cfg", net::parse_properties(text, "test.cfg", warnings));
    return icestorm_bridge::read_topics_config(p, warnings);
}

icestorm_bridge::topics_config from_yaml(const std::string& text) {
    const YAML::Node node = YAML::Load(text);
    static const std::string file = "test.yaml";  // yaml_section keeps a reference to it
    net::yaml_section root(node, "", file);
    return icestorm_bridge::read_topics_config(root);
}

}  // namespace

TEST(delivery_config, defaults_are_icestorms) {
    const auto t = from_properties("");
    EXPECT_EQ(t.send_timeout_ms, 60000);
    EXPECT_EQ(t.discard_interval_s, 60);
    EXPECT_EQ(t.send_queue_size_max, -1);
    EXPECT_EQ(t.send_queue_policy, queue_policy::remove_subscriber);
}

TEST(delivery_config, property_file_keys) {
    const auto t = from_properties("IceStorm.Send.Timeout=2500\nIceStorm.Discard.Interval=3\n"
                                   "IceStorm.Send.QueueSizeMax=100\nIceStorm.Send.QueueSizeMaxPolicy=DropEvents\n");
    EXPECT_EQ(t.send_timeout_ms, 2500);
    EXPECT_EQ(t.discard_interval_s, 3);
    EXPECT_EQ(t.send_queue_size_max, 100);
    EXPECT_EQ(t.send_queue_policy, queue_policy::drop_events);
    const auto lim = icestorm_bridge::delivery_limits_of(t);
    EXPECT_EQ(lim.queue_size_max, 100);
    EXPECT_EQ(lim.policy, queue_policy::drop_events);
    EXPECT_EQ(lim.send_timeout_ms, 2500);
    EXPECT_EQ(lim.discard_interval_s, 3);
    EXPECT_EQ(lim.queue_bytes, t.subscriber_queue_bytes);
    EXPECT_EQ(from_properties("IceStorm.Send.Timeout=-1\n").send_timeout_ms, -1);
}

TEST(delivery_config, bad_property_values_stop_startup) {
    EXPECT_THROW(from_properties("IceStorm.Send.QueueSizeMaxPolicy=Drop\n"), net::config_error);
    EXPECT_THROW(from_properties("IceStorm.Send.Timeout=0\n"), net::config_error);
    EXPECT_THROW(from_properties("IceStorm.Send.Timeout=-2\n"), net::config_error);
    EXPECT_THROW(from_properties("IceStorm.Send.QueueSizeMax=0\n"), net::config_error);
    EXPECT_THROW(from_properties("IceStorm.Discard.Interval=-1\n"), net::config_error);
    EXPECT_THROW(from_properties("IceStorm.Discard.Interval=soon\n"), net::config_error);
}

TEST(delivery_config, yaml_keys) {
    const auto t = from_yaml("topics:\n  send_timeout_ms: 1500\n  discard_interval_s: 2\n"
                             "  send_queue_size_max: 7\n  send_queue_size_max_policy: DropEvents\n");
    EXPECT_EQ(t.send_timeout_ms, 1500);
    EXPECT_EQ(t.discard_interval_s, 2);
    EXPECT_EQ(t.send_queue_size_max, 7);
    EXPECT_EQ(t.send_queue_policy, queue_policy::drop_events);
    EXPECT_THROW(from_yaml("topics:\n  send_queue_size_max_policy: remove\n"), net::config_error);
    EXPECT_THROW(from_yaml("topics:\n  send_queue_size_max: 0\n"), net::config_error);
}

TEST(delivery_config, moraine_bounds_of_the_topic_service_in_a_property_file) {
    EXPECT_EQ(from_properties("").subscriber_queue_bytes, 1u << 20);
    const auto t = from_properties("Moraine.Topics.SubscriberQueueBytes=8388608\nMoraine.Topics.MemoryBudget=0\n");
    EXPECT_EQ(t.subscriber_queue_bytes, 8u << 20);
    EXPECT_EQ(icestorm_bridge::delivery_limits_of(t).queue_bytes, 8u << 20);
    EXPECT_EQ(t.memory_budget_bytes, 0u);
    EXPECT_THROW(from_properties("Moraine.Topics.SubscriberQueueBytes=0\n"), net::config_error);
}
