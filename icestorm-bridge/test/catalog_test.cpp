// catalog: the TopicManager and Topic objects (shard 0), called with replies routed to a probe
// connection. Checked: create / retrieve / retrieveAll and their exceptions, getPublisher,
// subscribeAndGetPublisher putting the subscriber on its delivery shard (and BadQoS,
// AlreadySubscribed, InvalidSubscriber), unsubscribe, destroy on every shard, unknown objects.
#include "topics_harness.hpp"

#include <moraine/icestorm_bridge/catalog.hpp>
#include <moraine/net/local_reply.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

std::size_t subscribers(test::topics& t) {
    std::size_t n = 0;
    for (unsigned i = 0; i < t.shards().size(); ++i) n += t.svc().local(i).subscriber_count();
    return n;
}

protocol::byte_buffer name_param(std::string_view name) {
    return test::encaps([&](protocol::output_stream& os) { os.write_string(name); });
}

}  // namespace

TEST(catalog, create_returns_the_topic_proxy_and_a_second_create_raises_topic_exists) {
    test::topics t;
    const auto created = t.create("clock");
    const auto p = test::proxy_result(created);
    EXPECT_EQ(p.id.name, "topic.clock");
    EXPECT_EQ(p.id.category, "IceStorm");
    ASSERT_EQ(p.endpoints.size(), 1u);
    EXPECT_EQ(p.endpoints[0].port, 10000);
    for (unsigned i = 0; i < t.shards().size(); ++i) EXPECT_TRUE(t.svc().local(i).exists("clock")) << "shard " << i;
    EXPECT_EQ(test::user_exception_type(t.create("clock")), "::IceStorm::TopicExists");
}

TEST(catalog, retrieve_finds_created_topics_only) {
    test::topics t;
    t.create("a");
    t.create("b");
    const auto got = t.catalog_call(3, {"TopicManager", "IceStorm"}, "retrieve", name_param("a"));
    EXPECT_EQ(test::proxy_result(got).id.name, "topic.a");
    EXPECT_EQ(test::user_exception_type(t.catalog_call(3, {"TopicManager", "IceStorm"}, "retrieve", name_param("zz"))),
              "::IceStorm::NoSuchTopic");
    const auto all = t.catalog_call(4, {"TopicManager", "IceStorm"}, "retrieveAll", test::empty_encaps());
    const auto r = test::reply_of(all);
    protocol::input_stream in(r.payload);
    auto e = in.read_encapsulation();
    protocol::input_stream body(e.payload(), e.encoding);
    ASSERT_EQ(body.read_size(), 2);
    EXPECT_EQ(body.read_string(), "a");
    protocol::read_proxy(body);
    EXPECT_EQ(body.read_string(), "b");
}

TEST(catalog, get_publisher_names_the_publish_object) {
    test::topics t;
    t.create("clock");
    const auto p = test::proxy_result(t.catalog_call(5, {"topic.clock", "IceStorm"}, "getPublisher", test::empty_encaps()));
    EXPECT_EQ(p.id.name, "clock.publish");
    ASSERT_EQ(p.endpoints.size(), 1u);
    EXPECT_EQ(p.endpoints[0].port, 10001);
}

TEST(catalog, subscribe_adds_the_subscriber_once_and_unsubscribe_removes_it) {
    test::topics t;
    t.create("clock");
    const auto r = t.subscribe("clock", "watcher:tcp -h 127.0.0.1 -p 12000");
    EXPECT_EQ(test::reply_of(r).status, protocol::reply_status::ok);
    EXPECT_EQ(subscribers(t), 1u);
    EXPECT_EQ(test::user_exception_type(t.subscribe("clock", "watcher:tcp -h 127.0.0.1 -p 12000")),
              "::IceStorm::AlreadySubscribed");
    const auto un = t.catalog_call(6, {"topic.clock", "IceStorm"}, "unsubscribe", test::encaps([](protocol::output_stream& os) {
                                       protocol::write_proxy(os, *protocol::proxy_from_string("watcher:tcp -h 127.0.0.1 -p 12000"));
                                   }));
    EXPECT_EQ(test::reply_of(un).status, protocol::reply_status::ok);
    EXPECT_EQ(subscribers(t), 0u);
}

TEST(catalog, bad_qos_and_nil_subscribers_are_refused) {
    test::topics t;
    t.create("clock");
    EXPECT_EQ(test::user_exception_type(t.subscribe("clock", "w:tcp -h 127.0.0.1 -p 12000", {{"reliability", "bogus"}})),
              "::IceStorm::BadQoS");
    EXPECT_EQ(test::user_exception_type(t.subscribe("clock", "w -o:tcp -h 127.0.0.1 -p 12000", {{"reliability", "ordered"}})),
              "::IceStorm::BadQoS")
        << "ordered needs a twoway proxy";
    const auto nil = t.catalog_call(2, {"topic.clock", "IceStorm"}, "subscribeAndGetPublisher",
                                    test::encaps([](protocol::output_stream& os) {
                                        os.write_size(0);
                                        protocol::write_proxy(os, protocol::proxy{});
                                    }));
    EXPECT_EQ(test::user_exception_type(nil), "::IceStorm::InvalidSubscriber");
    EXPECT_EQ(subscribers(t), 0u);
}

TEST(catalog, a_session_subscriber_is_delivered_by_its_sessions_shard) {
    test::topics t;
    t.router().owner = 1;
    t.create("clock");
    t.subscribe("clock", "sess/cb:tcp -h 127.0.0.1 -p 4064");
    EXPECT_EQ(t.svc().local(1).subscriber_count(), 1u);
    EXPECT_EQ(t.svc().local(0).subscriber_count(), 0u);
}

TEST(catalog, destroy_removes_the_topic_everywhere) {
    test::topics t;
    t.create("clock");
    t.subscribe("clock", "watcher:tcp -h 127.0.0.1 -p 12000");
    const auto r = t.catalog_call(7, {"topic.clock", "IceStorm"}, "destroy", test::empty_encaps());
    EXPECT_EQ(test::reply_of(r).status, protocol::reply_status::ok);
    for (unsigned i = 0; i < t.shards().size(); ++i) EXPECT_FALSE(t.svc().local(i).exists("clock"));
    EXPECT_EQ(subscribers(t), 0u);
    EXPECT_EQ(test::user_exception_type(t.catalog_call(3, {"TopicManager", "IceStorm"}, "retrieve", name_param("clock"))),
              "::IceStorm::NoSuchTopic");
}

TEST(catalog, unknown_objects_and_operations_are_not_exist) {
    test::topics t;
    EXPECT_EQ(test::reply_of(t.catalog_call(1, {"topic.none", "IceStorm"}, "getName", test::empty_encaps())).status,
              protocol::reply_status::object_not_exist);
    EXPECT_EQ(test::reply_of(t.catalog_call(1, {"TopicManager", "IceStorm"}, "explode", test::empty_encaps())).status,
              protocol::reply_status::operation_not_exist);
}

TEST(catalog, links_to_topics_of_one_name_in_two_services_are_two_links) {
    // Several routers link their own `clock` (each under its own category) from one backbone
    // topic: IceStorm keys links by the linked topic's identity, so each is its own link.
    test::topics t(1);
    t.create("clock");
    test::loopback_backend other;  // the routers' topic services: getPublisher names their publisher
    other.answer_with([&](const protocol::request_view& r) {
        const auto publisher = *protocol::proxy_from_string(std::string(r.id.category) + "/clock.publish:" +
                                                            other.endpoint());
        return net::reply_ok(r.request_id, r.params.encoding,
                             [&](protocol::output_stream& os) { protocol::write_proxy(os, publisher); });
    });
    const auto link = [&](std::string_view category, std::string_view operation) {
        return t.catalog_call(7, {"topic.clock", "IceStorm"}, operation, test::encaps([&](protocol::output_stream& os) {
                                  protocol::write_proxy(os, *protocol::proxy_from_string(std::string(category) +
                                                                                         "/topic.clock:" + other.endpoint()));
                                  if (operation == "link") os.write_int(0);
                              }),
                              [&] { other.pump(); });
    };
    EXPECT_EQ(test::user_exception_type(link("EdgeA", "link")), "");
    EXPECT_EQ(test::user_exception_type(link("EdgeB", "link")), "") << "another identity: another link";
    EXPECT_EQ(test::user_exception_type(link("EdgeA", "link")), "::IceStorm::LinkExists");
    const auto* links = t.svc().local(0).links("clock");
    ASSERT_NE(links, nullptr);
    ASSERT_EQ(links->size(), 2u);
    EXPECT_EQ((*links)[0].key(), "EdgeA/topic.clock");
    EXPECT_EQ((*links)[1].key(), "EdgeB/topic.clock");
    EXPECT_EQ((*links)[1].name, "clock") << "LinkInfo::name stays the bare topic name";
    EXPECT_EQ((*links)[1].link.id.name, "clock.link") << "forwards go to the TopicLink beside its publisher";

    EXPECT_EQ(test::user_exception_type(link("EdgeA", "unlink")), "");
    links = t.svc().local(0).links("clock");
    ASSERT_NE(links, nullptr);
    ASSERT_EQ(links->size(), 1u) << "unlink takes only the link of that identity";
    EXPECT_EQ((*links)[0].key(), "EdgeB/topic.clock");
    EXPECT_EQ(test::user_exception_type(link("EdgeA", "unlink")), "::IceStorm::NoSuchLink");
}
