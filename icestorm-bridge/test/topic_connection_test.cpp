// topic_connection: a connection accepted on a Publish or TopicManager endpoint, over a
// socketpair. Checked: validate connection first, a publisher's oneway and twoway publishes
// reaching a subscriber (the twoway answered), ObjectNotExist for an unknown topic, and the
// TopicManager served on the manager side only.
#include "topics_harness.hpp"

#include <moraine/icestorm_bridge/topic_connection.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(topic_connection, a_publisher_reaches_subscribers_and_a_twoway_publish_is_answered) {
    test::topics t;
    test::loopback_backend subscriber;
    t.create("clock");
    t.subscribe("clock", "watcher -o:" + subscriber.endpoint());
    auto& pub = t.connect(1, /*publish_side=*/true);
    pub.send(test::publish_message("clock", "tick", "oneway"));
    auto twoway = test::request_message(9, {"clock.publish", "IceStorm"}, "tick",
                                        test::encaps([](protocol::output_stream& os) { os.write_string("twoway"); }));
    pub.send(twoway);
    ASSERT_TRUE(test::run_until(t.shards(), [&] {
        subscriber.pump();
        return subscriber.requests.size() == 2 && !pub.frames().empty();
    }));
    const auto reply = test::reply_of(pub.frames()[0]);
    EXPECT_EQ(reply.request_id, 9);
    EXPECT_EQ(reply.status, protocol::reply_status::ok);
    EXPECT_EQ(test::request_of(subscriber.requests[0]).operation, "tick");
    EXPECT_EQ(test::request_of(subscriber.requests[1]).request_id, 0) << "delivered per the subscriber's proxy mode, not the publisher's";
}

TEST(topic_connection, publishing_to_an_unknown_topic_is_object_not_exist) {
    test::topics t;
    auto& pub = t.connect(0, true);
    pub.send(test::request_message(4, {"nothing.publish", "IceStorm"}, "tick", test::empty_encaps()));
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return !pub.frames().empty(); }));
    EXPECT_EQ(test::reply_of(pub.frames()[0]).status, protocol::reply_status::object_not_exist);
    EXPECT_FALSE(t.connections()[0]->closed());
}

TEST(topic_connection, the_topic_manager_is_served_on_the_manager_side_only) {
    test::topics t;
    auto& mgr = t.connect(1, /*publish_side=*/false);
    mgr.send(test::request_message(2, {"TopicManager", "IceStorm"}, "create",
                                   test::encaps([](protocol::output_stream& os) { os.write_string("news"); })));
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return !mgr.frames().empty(); }));
    EXPECT_EQ(test::reply_of(mgr.frames()[0]).request_id, 2);
    EXPECT_EQ(test::proxy_result(mgr.frames()[0]).id.name, "topic.news");
    EXPECT_TRUE(t.svc().local(1).exists("news"));

    auto& pub = t.connect(0, true);
    pub.send(test::request_message(3, {"TopicManager", "IceStorm"}, "create",
                                   test::encaps([](protocol::output_stream& os) { os.write_string("other"); })));
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return !pub.frames().empty(); }));
    EXPECT_EQ(test::reply_of(pub.frames()[0]).status, protocol::reply_status::object_not_exist);
    EXPECT_FALSE(t.svc().local(0).exists("other"));
}
