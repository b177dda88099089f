// upstream_link: making and keeping the links upstream -> here, against an upstream IceStorm on
// a loopback back end. Checked: retrieve, then create on NoSuchTopic, then Topic::link with our
// topic's proxy (link category, endpoints) and the cost; LinkExists counts as linked; an
// failed check is retried at the next interval; our own topic is created here first. A
// replicated upstream: a TopicManager proxy with one endpoint per replica, whose link is made
// again through another replica when the one it used dies, or an indirect TopicManager (a
// replicated IceStorm's well-known object under IceGrid) found through the locator. A federated
// upstream: separate topic services, each linking the topic here (upstream_members, and the
// topic service making one link per member).
#include "topics_harness.hpp"

#include <moraine/icestorm_bridge/upstream_link.hpp>
#include <moraine/net/local_reply.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

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

namespace {

/// Runs the shards, pumping the back ends, until `done` (bounded by run_until).
template <class Done>
bool run_pumping(test::topics& t, std::initializer_list<test::loopback_backend*> backends, Done done) {
    return test::run_until(t.shards(), [&] {
        for (auto* b : backends)
            if (b) b->pump();
        return done();
    });
}

}  // namespace

TEST(upstream_link, links_again_through_another_replica_when_its_replica_dies) {
    // Ordered endpoint selection: replica A first, so the first link is made through A.
    test::topics t(1, {}, [](net::runtime_config& rt) { rt.endpoints_ordered = true; });
    auto a = std::make_unique<upstream_icestorm>();
    upstream_icestorm b;
    auto cfg = upstream_at(a->backend.endpoint() + ":" + b.backend.endpoint());
    cfg.check_interval_ms = 20;
    auto link = std::make_shared<icestorm_bridge::upstream_link>(t.svc(), t.shards().at(0), cfg);
    link->start();
    ASSERT_TRUE(run_pumping(t, {&a->backend, &b.backend}, [&] { return link->linked() == 1; }));
    // The next check (every 20 ms) may already have asked A again: the first three are the link.
    ASSERT_GE(a->ops.size(), 3u);
    EXPECT_EQ(std::vector<std::string>(a->ops.begin(), a->ops.begin() + 3),
              (std::vector<std::string>{"retrieve", "create", "link"}));
    EXPECT_TRUE(b.ops.empty()) << "one replica at a time";

    a.reset();  // replica A is killed: its connections close, its port refuses
    ASSERT_TRUE(run_pumping(t, {&b.backend}, [&] {
        return std::find(b.ops.begin(), b.ops.end(), "link") != b.ops.end() && link->linked() == 1;
    })) << "the next checks reach replica B, which links the topic here";
    EXPECT_EQ(b.linked_to.id.name, "topic.clock");
    EXPECT_EQ(b.linked_to.id.category, "Edge");
    link.reset();
}

TEST(upstream_link, an_indirect_upstream_is_found_through_the_locator) {
    upstream_icestorm up;
    // IceGrid's locator: the replicated IceStorm's well-known TopicManager at the replica's endpoint.
    test::loopback_backend locator;
    std::vector<std::string> asked;
    locator.answer_with([&](const protocol::request_view& r) {
        asked.emplace_back(r.operation);
        protocol::input_stream in(r.params.payload(), r.params.encoding);
        const auto id = in.read_identity();
        EXPECT_EQ(id.category, "Up");
        EXPECT_EQ(id.name, "TopicManager");
        const auto at = *protocol::proxy_from_string("Up/TopicManager:" + up.backend.endpoint());
        return net::reply_ok(r.request_id, r.params.encoding, [&](protocol::output_stream& os) { protocol::write_proxy(os, at); });
    });
    test::topics t(1, {}, [&](net::runtime_config& rt) {
        rt.locator = *protocol::proxy_from_string("IceGrid/Locator:" + locator.endpoint());
    });
    auto cfg = upstream_at(up.backend.endpoint());
    cfg.topic_manager = *protocol::proxy_from_string("Up/TopicManager");  // well-known: no endpoints
    ASSERT_TRUE(cfg.topic_manager->endpoints.empty());
    auto link = std::make_shared<icestorm_bridge::upstream_link>(t.svc(), t.shards().at(0), cfg);
    link->start();
    ASSERT_TRUE(run_pumping(t, {&locator, &up.backend}, [&] { return link->linked() == 1; }));
    EXPECT_EQ(asked, (std::vector<std::string>{"findObjectById"}));
    EXPECT_EQ(up.ops, (std::vector<std::string>{"retrieve", "create", "link"}));
    link.reset();
}

TEST(upstream_members, a_federation_is_one_upstream_per_endpoint) {
    auto u = upstream_at("tcp -h 192.0.2.1 -p 10000:tcp -h 192.0.2.2 -p 10000");
    ASSERT_EQ(icestorm_bridge::upstream_members(u).size(), 1u) << "replicas of one IceStorm: one link";
    EXPECT_EQ(icestorm_bridge::upstream_members(u)[0].topic_manager->endpoints.size(), 2u);
    u.federated = true;
    const auto members = icestorm_bridge::upstream_members(u);
    ASSERT_EQ(members.size(), 2u);
    EXPECT_EQ(members[0].topic_manager->endpoints.size(), 1u);
    EXPECT_EQ(members[0].topic_manager->endpoints[0].host, "192.0.2.1");
    EXPECT_EQ(members[1].topic_manager->endpoints[0].host, "192.0.2.2");
    EXPECT_EQ(members[1].topic_manager->id.name, "TopicManager");
    EXPECT_EQ(members[1].link_category, "Edge") << "the rest as configured";
    EXPECT_TRUE(icestorm_bridge::upstream_members({}).empty()) << "no upstream";
}

TEST(upstream_link, a_federated_upstream_links_the_topic_from_every_member) {
    upstream_icestorm a, b;
    test::topics t(1, [&](icestorm_bridge::topics_config& c) {
        c.upstream = upstream_at(a.backend.endpoint() + ":" + b.backend.endpoint());
        c.upstream.federated = true;
    });
    const auto linked = [](const upstream_icestorm& up) {
        return std::find(up.ops.begin(), up.ops.end(), "link") != up.ops.end();
    };
    ASSERT_TRUE(run_pumping(t, {&a.backend, &b.backend}, [&] { return linked(a) && linked(b); }))
        << "both members are asked to link";
    for (const auto* up : {&a, &b}) {
        EXPECT_EQ(up->linked_to.id.name, "topic.clock");
        EXPECT_EQ(up->linked_to.id.category, "Edge");
        EXPECT_EQ(up->link_cost, 5);
    }
}
