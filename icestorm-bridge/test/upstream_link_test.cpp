// upstream_link: making and keeping the links upstream -> here, against an upstream IceStorm on
// a loopback back end. Checked: retrieve, then create on NoSuchTopic, then Topic::link with our
// topic's proxy (link category, endpoints) and the cost; LinkExists counts as linked; an
// failed check is retried at the next interval; our own topic is created here first.
#include "topics_harness.hpp"

#include <moraine/icestorm_bridge/upstream_link.hpp>
#include <moraine/net/local_reply.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

icestorm_bridge::upstream_config upstream_at(const std::string& endpoint) {
    icestorm_bridge::upstream_config c;
    c.topic_manager = *protocol::proxy_from_string("Up/TopicManager:" + endpoint);
    c.topics = {"clock"};
    c.link_category = "Edge";
    c.endpoints = *protocol::endpoints_from_string("tcp -h 192.0.2.7 -p 11000");
    c.cost = 5;
    c.check_interval_ms = 60'000;  // one check in the test's lifetime
    return c;
}

/// An upstream IceStorm that knows no topic until created, then links whatever asks.
struct upstream_icestorm {
    test::loopback_backend backend;
    std::vector<std::string> ops;
    protocol::proxy linked_to;
    int link_cost = -1;
    bool link_exists = false;

    upstream_icestorm() {
        backend.answer_with([this](const protocol::request_view& r) {
            ops.emplace_back(r.operation);
            protocol::input_stream in(r.params.payload(), r.params.encoding);
            if (r.operation == "retrieve")
                return net::reply_user_exception(r.request_id, r.params.encoding, "::IceStorm::NoSuchTopic",
                                                 std::string(in.read_string()), false);
            if (r.operation == "create") {
                const auto topic = *protocol::proxy_from_string("Up/topic." + std::string(in.read_string()) + ":" +
                                                                backend.endpoint());
                return net::reply_ok(r.request_id, r.params.encoding,
                                     [&](protocol::output_stream& os) { protocol::write_proxy(os, topic); });
            }
            if (r.operation == "link") {
                linked_to = protocol::read_proxy(in);
                link_cost = in.read_int();
                if (link_exists)
                    return net::reply_user_exception(r.request_id, r.params.encoding, "::IceStorm::LinkExists",
                                                     "already", false);
                return net::reply_void(r.request_id, r.params.encoding);
            }
            return net::reply_not_exist(r, protocol::reply_status::operation_not_exist);
        });
    }
};

}  // namespace

TEST(upstream_link, creates_the_topic_upstream_and_links_it_here) {
    test::topics t(1);
    upstream_icestorm up;
    auto link = std::make_shared<icestorm_bridge::upstream_link>(t.svc(), t.shards().at(0), upstream_at(up.backend.endpoint()));
    link->start();
    ASSERT_TRUE(test::run_until(t.shards(), [&] {
        up.backend.pump();
        return link->linked() == 1;
    }));
    EXPECT_EQ(up.ops, (std::vector<std::string>{"retrieve", "create", "link"}));
    EXPECT_EQ(up.linked_to.id.name, "topic.clock");
    EXPECT_EQ(up.linked_to.id.category, "Edge") << "the link category";
    ASSERT_EQ(up.linked_to.endpoints.size(), 1u);
    EXPECT_EQ(up.linked_to.endpoints[0].host, "192.0.2.7");
    EXPECT_EQ(up.link_cost, 5);
    EXPECT_TRUE(t.svc().local(0).exists("clock")) << "our topic is made before the upstream links to it";
    link.reset();
}

TEST(upstream_link, link_exists_counts_as_linked) {
    test::topics t(1);
    upstream_icestorm up;
    up.link_exists = true;
    auto link = std::make_shared<icestorm_bridge::upstream_link>(t.svc(), t.shards().at(0), upstream_at(up.backend.endpoint()));
    link->start();
    ASSERT_TRUE(test::run_until(t.shards(), [&] {
        up.backend.pump();
        return link->linked() == 1;
    }));
    link.reset();
}

TEST(upstream_link, a_failed_check_is_retried_at_the_next_interval) {
    test::topics t(1);
    upstream_icestorm up;
    bool failed_once = false;
    auto normal = [&up](const protocol::request_view& r) {
        // What upstream_icestorm's own handler answers, re-dispatched by operation.
        protocol::input_stream in(r.params.payload(), r.params.encoding);
        up.ops.emplace_back(r.operation);
        if (r.operation == "retrieve")
            return net::reply_user_exception(r.request_id, r.params.encoding, "::IceStorm::NoSuchTopic", "clock", false);
        if (r.operation == "create") {
            const auto topic = *protocol::proxy_from_string("Up/topic.clock:" + up.backend.endpoint());
            return net::reply_ok(r.request_id, r.params.encoding,
                                 [&](protocol::output_stream& os) { protocol::write_proxy(os, topic); });
        }
        return net::reply_void(r.request_id, r.params.encoding);
    };
    up.backend.answer_with([&](const protocol::request_view& r) {
        if (!failed_once) {  // the first retrieve: the upstream is not ready
            failed_once = true;
            up.ops.emplace_back("failed " + std::string(r.operation));
            return net::reply_unknown_local(r.request_id, "::Ice::ObjectAdapterDeactivatedException");
        }
        return normal(r);
    });
    auto cfg = upstream_at(up.backend.endpoint());
    cfg.check_interval_ms = 20;
    auto link = std::make_shared<icestorm_bridge::upstream_link>(t.svc(), t.shards().at(0), cfg);
    link->start();
    ASSERT_TRUE(test::run_until(t.shards(), [&] {
        up.backend.pump();
        return link->linked() == 1;
    }));
    ASSERT_GE(up.ops.size(), 4u);
    EXPECT_EQ(up.ops[0], "failed retrieve");
    EXPECT_EQ(up.ops[1], "retrieve");
    EXPECT_EQ(up.ops[2], "create");
    EXPECT_EQ(up.ops[3], "link");
    link.reset();
}
