// listener_manifest: the endpoints a configuration listens on, named as a takeover names them
// (the adapter names shard_set::listen is given, repeats counted by ordinal), the topic service,
// the admin object and /metrics only when enabled.
#include <moraine/app/listener_manifest.hpp>

#include <moraine/protocol/endpoint.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {
std::vector<protocol::endpoint> eps(std::string_view s) { return *protocol::endpoints_from_string(s); }
}  // namespace

TEST(listener_manifest, names_every_endpoint_by_its_list) {
    app::app_config cfg;
    cfg.router.client_endpoints = eps("tcp -h 127.0.0.1 -p 0:tcp -h 127.0.0.1 -p 0:ws -h 127.0.0.1 -p 4065");
    cfg.router.server_endpoints = eps("tcp -h 127.0.0.1 -p 4064:udp -h 127.0.0.1 -p 4064");
    const auto base = app::listener_manifest(cfg);
    ASSERT_EQ(base.size(), 5u) << "no topics, admin or metrics unless enabled";
    EXPECT_EQ(base[0].adapter, "Glacier2.Client");
    EXPECT_EQ(base[0].endpoint, protocol::endpoint_to_string(cfg.router.client_endpoints[0]));
    EXPECT_EQ(base[0].ordinal, 0u);
    EXPECT_EQ(base[1].ordinal, 1u) << "the same endpoint twice: told apart by ordinal";
    EXPECT_EQ(base[2].ordinal, 0u);
    EXPECT_EQ(base[4].adapter, "Glacier2.Server");
    EXPECT_EQ(base[4].endpoint, protocol::endpoint_to_string(cfg.router.server_endpoints[1]));

    cfg.topics.enabled = true;
    cfg.topics.topic_manager_endpoints = eps("tcp -h 127.0.0.1 -p 10000");
    cfg.topics.publish_endpoints = eps("tcp -h 127.0.0.1 -p 10001");
    cfg.admin.enabled = true;
    cfg.admin.endpoints = eps("tcp -h 127.0.0.1 -p 10002");
    cfg.runtime.metrics.enabled = true;
    cfg.runtime.metrics.port = 9464;
    const auto all = app::listener_manifest(cfg);
    ASSERT_EQ(all.size(), 9u);
    EXPECT_EQ(all[5].adapter, "IceStorm.TopicManager");
    EXPECT_EQ(all[6].adapter, "IceStorm.Publish");
    EXPECT_EQ(all[7].adapter, "Ice.Admin");
    EXPECT_EQ(all[8].adapter, "Moraine.Metrics");
    EXPECT_NE(all[8].endpoint.find("-h 127.0.0.1 -p 9464"), std::string::npos) << all[8].endpoint;
}
