// local_topics: one shard's topics, links and subscribers. Checked: topic and link replicas,
// deliver() writing an event to a session subscriber with its identity as the target and
// counting it, a subscriber whose connection queue is full missing the event (counted as
// dropped, the publisher never held up), and remove().
#include "topics_harness.hpp"

#include <moraine/icestorm_bridge/event.hpp>
#include <moraine/icestorm_bridge/local_topics.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

icestorm_bridge::subscriber session_subscriber(const std::string& name) {
    icestorm_bridge::subscriber s;
    s.id = protocol::identity{name, "sess"};
    s.key = protocol::identity_to_string(s.id.view());
    s.target = icestorm_bridge::encode_target(s.id, "");
    s.session_local = true;
    return s;
}

icestorm_bridge::event_ptr tick(std::string_view text) {
    return icestorm_bridge::make_event("clock", test::request_of(test::publish_message("clock", "tick", text)));
}

}  // namespace

TEST(local_topics, keeps_topics_and_links) {
    test::topics t(1);
    auto& l = t.svc().local(0);
    l.topic_created("a");
    EXPECT_TRUE(l.exists("a"));
    EXPECT_EQ(l.links("a"), nullptr);
    icestorm_bridge::link_info link;
    link.name = "b";
    link.cost = 3;
    l.set_links("a", {link});
    ASSERT_NE(l.links("a"), nullptr);
    EXPECT_EQ(l.links("a")->at(0).cost, 3);
    EXPECT_EQ(&l.link_health("a", "b"), &l.link_health("a", "b")) << "one health record per link";
    l.count_link_loss(4);
    EXPECT_EQ(l.link_events_lost(), 4u);
    l.topic_destroyed("a");
    EXPECT_FALSE(l.exists("a"));
}

TEST(local_topics, deliver_writes_the_event_to_a_session_subscriber) {
    test::topics t(1);
    t.session_sink(0);
    auto& l = t.svc().local(0);
    l.topic_created("clock");
    l.add("clock", session_subscriber("cb"));
    EXPECT_EQ(l.subscriber_count(), 1u);
    l.deliver(tick("now"));
    EXPECT_EQ(l.events_delivered(), 1u);
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return !t.sink_peer().frames().empty(); }));
    const auto got = test::request_of(t.sink_peer().frames()[0]);
    EXPECT_EQ(got.id.name, "cb");
    EXPECT_EQ(got.id.category, "sess");
    EXPECT_EQ(got.operation, "tick");
    EXPECT_EQ(got.request_id, 0);
}

TEST(local_topics, a_subscriber_with_a_full_queue_misses_the_event) {
    test::topics t(1, [](icestorm_bridge::topics_config& c) { c.subscriber_queue_bytes = 64; });
    auto& sink = t.session_sink(0);
    auto& l = t.svc().local(0);
    l.topic_created("clock");
    l.add("clock", session_subscriber("cb"));
    sink.enqueue(protocol::byte_buffer(128));  // the session's connection already holds 128 bytes
    l.deliver(tick("late"));
    EXPECT_EQ(l.events_dropped(), 1u);
    EXPECT_EQ(l.events_delivered(), 0u);
    EXPECT_EQ(l.subscriber_count(), 1u) << "a slow subscriber stays subscribed";
}

TEST(local_topics, remove_stops_delivery) {
    test::topics t(1);
    t.session_sink(0);
    auto& l = t.svc().local(0);
    l.topic_created("clock");
    l.add("clock", session_subscriber("cb"));
    l.remove("clock", "sess/cb");
    EXPECT_EQ(l.subscriber_count(), 0u);
    l.deliver(tick("gone"));
    EXPECT_EQ(l.events_delivered(), 0u);
    EXPECT_TRUE(t.router().delivered_on.empty());
}
