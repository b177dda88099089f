// subscriber: one subscription as its delivery shard keeps it. Checked: a fresh subscriber's
// counters, and that its QoS and proxy mode decide how it is delivered to once added to a
// shard (oneway: request id 0; twoway: an id, and each event counted in `delivered`).
#include "topics_harness.hpp"

#include <moraine/icestorm_bridge/event.hpp>
#include <moraine/icestorm_bridge/subscriber.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

icestorm_bridge::subscriber external(const std::string& endpoint, bool twoway, bool ordered) {
    icestorm_bridge::subscriber s;
    s.id = protocol::identity{"w", ""};
    s.key = "w";
    s.target = icestorm_bridge::encode_target(s.id, "");
    s.proxy = std::make_shared<const protocol::proxy>(*protocol::proxy_from_string("w:" + endpoint));
    s.twoway = twoway;
    s.qos.ordered = ordered;
    return s;
}

}  // namespace

TEST(subscriber, starts_with_nothing_delivered_or_dropped) {
    icestorm_bridge::subscriber s;
    EXPECT_EQ(s.delivered, 0u);
    EXPECT_EQ(s.dropped, 0u);
    EXPECT_FALSE(s.session_local);
    EXPECT_FALSE(s.twoway);
    EXPECT_FALSE(s.qos.ordered);
    EXPECT_EQ(s.qos.retry_count, 0);
    s.prefetch();  // a hint: no effect on the state
    EXPECT_EQ(s.delivered, 0u);
}

TEST(subscriber, its_mode_decides_oneway_or_twoway_delivery) {
    for (bool twoway : {false, true}) {
        test::topics t(1);
        test::loopback_backend backend;
        auto& l = t.svc().local(0);
        l.topic_created("clock");
        l.add("clock", external(backend.endpoint(), twoway, twoway));
        l.deliver(icestorm_bridge::make_event("clock", test::request_of(test::publish_message("clock", "tick", "x"))));
        ASSERT_TRUE(test::run_until(t.shards(), [&] {
            backend.pump();
            return !backend.requests.empty();
        }));
        const auto r = test::request_of(backend.requests[0]);
        EXPECT_EQ(r.request_id != 0, twoway) << "twoway=" << twoway;
        EXPECT_EQ(r.id.name, "w");
        EXPECT_EQ(l.events_delivered(), 1u);
    }
}
