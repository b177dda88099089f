// The topic service over udp and per-subscriber publishers: a datagram subscriber gets each
// event as one oneway datagram; a publish to a subscriber's own publisher object is delivered
// while the subscriber exists and answered ObjectNotExist once it is gone (docs/icestorm.md).
#include "topics_harness.hpp"

#include <moraine/net/datagram_listener.hpp>

#include <gtest/gtest.h>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

/// A udp endpoint on the test's shards standing for a datagram subscriber's object adapter.
struct udp_sink {
    std::vector<std::string> got;  // "<identity name>:<operation>:<request id>"
    protocol::endpoint at;
    explicit udp_sink(net::shard_set& shards) {
        at = shards.listen_datagrams("test", {*protocol::endpoint_from_string("udp -h 127.0.0.1 -p 0")},
                                     [this](net::shard&, const protocol::request_view& r) {
                                         got.push_back(std::string(r.id.name) + ":" + std::string(r.operation) + ":" +
                                                       std::to_string(r.request_id));
                                     })
                 .at(0);
    }
    std::string proxy(std::string_view name, std::string_view mode) const {
        return std::string(name) + " " + std::string(mode) + ":udp -h 127.0.0.1 -p " + std::to_string(at.port);
    }
};

icestorm_bridge::event_ptr tick(std::string_view text) {
    return icestorm_bridge::make_event("clock", test::request_of(test::publish_message("clock", "tick", text)));
}

}  // namespace

TEST(datagram_subscriber, gets_each_event_as_a_oneway_datagram) {
    test::topics t(2);
    udp_sink sink(t.shards());
    t.create("clock");
    for (const char* mode : {"-d", "-D"}) {
        const std::string name = std::string("sub") + mode;
        ASSERT_EQ(test::reply_of(t.subscribe("clock", sink.proxy(name, mode))).status, protocol::reply_status::ok);
    }
    t.shards().invoke_on(1, [&](net::shard&) { t.svc().publish(1, tick("one")); });
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return sink.got.size() == 2; }, 3s));
    std::sort(sink.got.begin(), sink.got.end());
    EXPECT_EQ(sink.got, (std::vector<std::string>{"sub-D:tick:0", "sub-d:tick:0"}));
}

TEST(per_subscriber_publisher, delivers_while_the_subscriber_exists_then_answers_object_not_exist) {
    test::topics t(2);
    udp_sink sink(t.shards());
    t.create("clock");
    ASSERT_EQ(test::reply_of(t.subscribe("clock", sink.proxy("only", "-d"))).status, protocol::reply_status::ok);
    auto& publisher = t.connect(1, true);
    auto to_own_publisher = [&](std::string_view subscriber, std::int32_t id) {
        publisher.send(test::request_message(id, {"topic.clock.publish." + std::string(subscriber), "IceStorm"}, "tick",
                                             test::empty_encaps()));
    };
    to_own_publisher("only", 7);
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return !publisher.frames().empty() && !sink.got.empty(); }, 3s));
    EXPECT_EQ(test::reply_of(publisher.frames()[0]).status, protocol::reply_status::ok);
    EXPECT_EQ(sink.got, (std::vector<std::string>{"only:tick:0"}));
    to_own_publisher("gone", 8);
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return publisher.frames().size() == 2; }, 3s));
    EXPECT_EQ(test::reply_of(publisher.frames()[1]).status, protocol::reply_status::object_not_exist);
    EXPECT_EQ(sink.got.size(), 1u);
}
