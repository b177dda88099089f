// The topic service's side of a takeover (docs/takeover.md "The topic service moves"): the
// catalog leaves as a snapshot and arrives by install; held connections read nothing and leave
// with their descriptor and any partial message. The blocking calls run on a thread of their
// own while the test thread runs the shards, as the takeover thread does beside shard threads.
#include "topics_harness.hpp"

#include <moraine/icestorm_bridge/catalog_image.hpp>
#include <moraine/icestorm_bridge/topic_store.hpp>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <filesystem>
#include <future>
#include <unistd.h>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

/// Runs `fn` on its own thread while the test thread runs `t`'s shards, and returns its result.
template <class Fn>
auto blocking(test::topics& t, Fn fn) {
    auto f = std::async(std::launch::async, std::move(fn));
    EXPECT_TRUE(test::run_until(t.shards(), [&] { return f.wait_for(0s) == std::future_status::ready; }));
    return f.get();
}

const icestorm_bridge::stored_subscriber* find(const icestorm_bridge::stored_catalog& c, std::string_view name) {
    for (const auto& s : c.subscribers)
        if (s.proxy.id.name == name) return &s;
    return nullptr;
}

/// A fresh directory for one test's topic database, removed after it.
struct database_dir {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("moraine-handover-" + std::to_string(::getpid()) + "-" +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    database_dir() {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~database_dir() { std::filesystem::remove_all(path); }
    /// A persistent topic service on this directory.
    std::function<void(icestorm_bridge::topics_config&)> config() const {
        return [dir = path.string()](icestorm_bridge::topics_config& c) {
            c.transient = false;
            c.store_dir = dir;
        };
    }
    /// The topics stored, sorted, read by a store of its own (no service holds the file then).
    std::vector<std::string> stored_topics() const {
        boost::asio::io_context io;
        auto topics = icestorm_bridge::topic_store(path.string(), io.get_executor()).load().topics;
        std::sort(topics.begin(), topics.end());
        return topics;
    }
};

std::vector<std::string> sorted_topics(test::topics& t) {
    auto topics = blocking(t, [&] { return t.svc().snapshot(); }).topics;
    std::sort(topics.begin(), topics.end());
    return topics;
}

}  // namespace

TEST(topic_handover, the_database_opens_on_the_new_side_once_the_old_side_lets_go) {
    database_dir dir;
    auto old_side = std::make_unique<test::topics>(2, dir.config());
    ASSERT_EQ(test::reply_of(old_side->create("clock")).status, protocol::reply_status::ok);
    // The new process starts while the old one holds the file: pending, not refused.
    EXPECT_THROW(test::topics(2, dir.config()), icestorm_bridge::store_held);
    auto owned_new_side = std::make_unique<test::topics>(2, dir.config(), nullptr, icestorm_bridge::store_opening::when_released);
    auto& new_side = *owned_new_side;
    EXPECT_TRUE(new_side.svc().store_pending());
    EXPECT_FALSE(blocking(new_side, [&] { return new_side.svc().open_pending_store(false); })) << "still held";

    // The takeover's order: the catalog goes, the old side closes the file, the new side opens it.
    const auto snap = blocking(*old_side, [&] { return old_side->svc().snapshot(); });
    blocking(new_side, [&] { return new_side.svc().install(snap); });
    EXPECT_TRUE(blocking(*old_side, [&] { return old_side->svc().release_store(); }));
    EXPECT_FALSE(blocking(*old_side, [&] { return old_side->svc().release_store(); })) << "released once";
    ASSERT_TRUE(blocking(new_side, [&] { return new_side.svc().open_pending_store(false); }));
    EXPECT_FALSE(new_side.svc().store_pending());
    EXPECT_EQ(sorted_topics(new_side), (std::vector<std::string>{"clock"}));

    // The old side stores nothing any more; the new side's changes are stored.
    ASSERT_EQ(test::reply_of(old_side->create("old-only")).status, protocol::reply_status::ok);
    ASSERT_EQ(test::reply_of(new_side.create("after")).status, protocol::reply_status::ok);
    old_side.reset();
    owned_new_side.reset();
    EXPECT_EQ(dir.stored_topics(), (std::vector<std::string>{"after", "clock"}));
}

TEST(topic_handover, a_database_the_old_side_kept_is_restored_once_it_ends) {
    database_dir dir;
    auto old_side = std::make_unique<test::topics>(2, dir.config());
    ASSERT_EQ(test::reply_of(old_side->create("clock")).status, protocol::reply_status::ok);
    test::loopback_backend external;
    ASSERT_EQ(test::reply_of(old_side->subscribe("clock", "reader -o:" + external.endpoint())).status,
              protocol::reply_status::ok);
    auto owned_new_side = std::make_unique<test::topics>(2, dir.config(), nullptr, icestorm_bridge::store_opening::when_released);
    auto& new_side = *owned_new_side;
    ASSERT_TRUE(new_side.svc().store_pending());
    // No catalog came (the old side kept its topic service); it ends, and its file is free.
    ASSERT_EQ(test::reply_of(old_side->create("late")).status, protocol::reply_status::ok);
    old_side.reset();
    ASSERT_TRUE(blocking(new_side, [&] { return new_side.svc().open_pending_store(true); }));
    EXPECT_EQ(sorted_topics(new_side), (std::vector<std::string>{"clock", "late"}));
    const auto snap = blocking(new_side, [&] { return new_side.svc().snapshot(); });
    ASSERT_EQ(snap.subscribers.size(), 1u);
    EXPECT_EQ(snap.subscribers[0].proxy.id.name, "reader");
    ASSERT_EQ(test::reply_of(new_side.create("next")).status, protocol::reply_status::ok);
    owned_new_side.reset();
    EXPECT_EQ(dir.stored_topics(), (std::vector<std::string>{"clock", "late", "next"}));
}

TEST(topic_handover, a_snapshot_installs_elsewhere_with_topics_subscribers_and_qos) {
    test::topics old_side(2);
    test::loopback_backend external;
    old_side.create("clock");
    old_side.create("news");
    ASSERT_EQ(test::reply_of(old_side.subscribe("clock", "sess/tick:tcp -h 127.0.0.1 -p 4064", {{"reliability", "ordered"}}))
                  .status,
              protocol::reply_status::ok);
    ASSERT_EQ(test::reply_of(old_side.subscribe("news", "reader -o:" + external.endpoint(), {{"retryCount", "-1"}})).status,
              protocol::reply_status::ok);

    const auto snap = blocking(old_side, [&] { return old_side.svc().snapshot(); });
    auto topics = snap.topics;
    std::sort(topics.begin(), topics.end());
    EXPECT_EQ(topics, (std::vector<std::string>{"clock", "news"}));
    ASSERT_EQ(snap.subscribers.size(), 2u);
    const auto* session = find(snap, "tick");
    ASSERT_NE(session, nullptr);
    EXPECT_TRUE(session->session_local);
    EXPECT_TRUE(session->proxy.endpoints.empty()) << "a session's servant travels without endpoints";
    EXPECT_EQ(session->qos, (std::vector<std::pair<std::string, std::string>>{{"reliability", "ordered"}}));
    const auto* reader = find(snap, "reader");
    ASSERT_NE(reader, nullptr);
    EXPECT_FALSE(reader->session_local);
    EXPECT_FALSE(reader->proxy.endpoints.empty());

    // Through the bytes the channel carries, into a service with another shard count.
    std::vector<std::byte> image;
    for (const auto& part : icestorm_bridge::encode_catalog_image(snap, 64))
        image.insert(image.end(), part.begin(), part.end());
    test::topics new_side(3);
    auto& sink = new_side.session_sink(2);
    const auto added = blocking(new_side, [&] { return new_side.svc().install(icestorm_bridge::decode_catalog_image(image)); });
    EXPECT_EQ(added, 2u);
    EXPECT_EQ(blocking(new_side, [&] { return new_side.svc().install(icestorm_bridge::decode_catalog_image(image)); }), 0u)
        << "a subscriber already here is not added twice";
    const auto again = blocking(new_side, [&] { return new_side.svc().snapshot(); });
    EXPECT_EQ(again.subscribers.size(), 2u);

    // The session's servant is written to its session's connection, on the session's shard.
    new_side.shards().invoke_on(0, [&new_side](net::shard&) {
        const auto msg = test::publish_message("clock", "tick", "after");
        new_side.svc().publish(0, icestorm_bridge::make_event("clock", test::request_of(msg)));
    });
    ASSERT_TRUE(test::run_until(new_side.shards(), [&] { return !new_side.sink_peer().frames().empty(); }));
    EXPECT_EQ(new_side.router().delivered_on, (std::vector<unsigned>{2}));
    EXPECT_EQ(test::request_of(new_side.sink_peer().frames()[0]).id.name, "tick");
    (void)sink;
}

TEST(topic_handover, servants_of_sessions_that_stay_are_written_at_the_stay_endpoint) {
    test::topics old_side(2);
    old_side.create("clock");
    for (const char* who : {"stays/tick", "moved/tick"})
        ASSERT_EQ(test::reply_of(old_side.subscribe("clock", std::string(who) + ":tcp -h 127.0.0.1 -p 4064",
                                                    {{"reliability", "ordered"}}))
                      .status,
                  protocol::reply_status::ok);
    old_side.router().moved_away.insert("moved");
    const auto stay = *protocol::endpoint_from_string("tcp -h 127.0.0.1 -p 45000");
    const auto snap = blocking(old_side, [&] { return old_side.svc().snapshot(stay); });
    ASSERT_EQ(snap.subscribers.size(), 2u);
    for (const auto& s : snap.subscribers) {
        EXPECT_EQ(s.qos, (std::vector<std::pair<std::string, std::string>>{{"reliability", "ordered"}}));
        if (s.proxy.id.category == "stays") {
            EXPECT_FALSE(s.session_local) << "its session stays here: the new process delivers to the stay endpoint";
            ASSERT_EQ(s.proxy.endpoints.size(), 1u);
            EXPECT_EQ(s.proxy.endpoints[0].port, 45000);
        } else {
            EXPECT_TRUE(s.session_local) << "its session moved: it is the new process's servant";
            EXPECT_TRUE(s.proxy.endpoints.empty());
        }
    }
    // Without a stay endpoint, both travel as session servants.
    const auto plain = blocking(old_side, [&] { return old_side.svc().snapshot(); });
    EXPECT_TRUE(std::all_of(plain.subscribers.begin(), plain.subscribers.end(), [](const auto& s) { return s.session_local; }));

    // The new process takes the rewritten one as a subscriber like any other, reached by its proxy.
    test::topics new_side(2);
    EXPECT_EQ(blocking(new_side, [&] { return new_side.svc().install(snap); }), 2u);
    const auto again = blocking(new_side, [&] { return new_side.svc().snapshot(); });
    const auto* stays = find(again, "tick");
    ASSERT_NE(stays, nullptr);
    std::size_t external = 0;
    for (const auto& s : again.subscribers) external += s.session_local ? 0 : 1;
    EXPECT_EQ(external, 1u);
}

TEST(topic_handover, a_held_publisher_is_not_read_until_released) {
    test::topics t(2);
    auto& sink = t.session_sink(1);
    t.create("clock");
    t.subscribe("clock", "sess/cb:tcp -h 127.0.0.1 -p 4064");
    auto& publisher = t.connect(0, true);
    t.svc().hold_intake(true);
    const auto m = test::publish_message("clock", "tick", "held");
    publisher.send(protocol::byte_view(m.data(), m.size()));
    EXPECT_FALSE(test::run_until(t.shards(), [&] { return !t.sink_peer().frames().empty(); }, 200ms))
        << "nothing is read while the intake is held";
    EXPECT_EQ(blocking(t, [&] { return t.svc().deliveries_in_flight(); }), 0u);
    t.svc().hold_intake(false);
    ASSERT_TRUE(test::run_until(t.shards(), [&] { return !t.sink_peer().frames().empty(); }));
    EXPECT_EQ(test::request_of(t.sink_peer().frames()[0]).id.name, "cb");
    (void)sink;
}

TEST(topic_handover, held_connections_leave_with_their_partial_message) {
    test::topics t(2);
    t.create("clock");
    auto& publisher = t.connect(1, true);
    t.connect(0, false);
    // Half a message before the hold: it is read and kept as a partial message.
    const auto m = test::publish_message("clock", "tick", "split");
    publisher.send(protocol::byte_view(m.data(), 20));
    test::settle(t.shards());
    t.svc().hold_intake(true);
    std::size_t left = 99;
    auto taken = blocking(t, [&] { return t.svc().take_connections(false, left); });
    EXPECT_EQ(left, 0u);
    ASSERT_EQ(taken.size(), 2u);
    std::sort(taken.begin(), taken.end(), [](const auto& a, const auto& b) { return a.first.publish_side > b.first.publish_side; });
    EXPECT_TRUE(taken[0].first.publish_side);
    EXPECT_EQ(taken[0].first.pending, std::vector<std::byte>(m.begin(), m.begin() + 20));
    EXPECT_FALSE(taken[1].first.publish_side);
    EXPECT_TRUE(taken[1].first.pending.empty());
    for (const auto& [state, fd] : taken) EXPECT_TRUE(fd);
    EXPECT_TRUE(std::all_of(t.connections().begin(), t.connections().end(), [](const auto& c) { return c->closed(); }))
        << "closed here once handed over";
    EXPECT_TRUE(t.svc().local(0).connections().empty());
    EXPECT_TRUE(t.svc().local(1).connections().empty());
    t.svc().hold_intake(false);
}
