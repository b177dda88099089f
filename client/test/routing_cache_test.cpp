#include <moraine/client/routing_cache.hpp>

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

using state = routing_cache::state;
const protocol::identity hello{"hello", ""};
const protocol::identity cat_hello{"hello", "cat"};

TEST(routing_cache, absent_until_added) {
    routing_cache c;
    EXPECT_EQ(c.find(hello.view()), state::absent);
    EXPECT_TRUE(c.begin_add(hello));
    EXPECT_EQ(c.find(hello.view()), state::adding);
    EXPECT_FALSE(c.begin_add(hello)) << "a second caller waits instead of sending addProxies again";
    c.add_done(hello.view(), true);
    EXPECT_EQ(c.find(hello.view()), state::added);
    EXPECT_FALSE(c.begin_add(hello));
}

TEST(routing_cache, keyed_by_identity_only) {
    routing_cache c;
    ASSERT_TRUE(c.begin_add(hello));
    c.add_done(hello.view(), true);
    // Category is part of the identity; endpoints are not (docs/ice-wire.md §10).
    EXPECT_EQ(c.find(cat_hello.view()), state::absent);
    EXPECT_EQ(c.find(protocol::identity_view{"hello", ""}), state::added);
}

TEST(routing_cache, failed_add_is_absent_again) {
    routing_cache c;
    ASSERT_TRUE(c.begin_add(hello));
    c.add_done(hello.view(), false);
    EXPECT_EQ(c.find(hello.view()), state::absent);
    EXPECT_TRUE(c.begin_add(hello));
}

TEST(routing_cache, forget_after_ice_add_proxy) {
    routing_cache c;
    ASSERT_TRUE(c.begin_add(hello));
    c.add_done(hello.view(), true);
    c.forget(hello.view());
    EXPECT_EQ(c.find(hello.view()), state::absent);
    EXPECT_EQ(c.size(), 0u);
    c.forget(hello.view());  // harmless twice
}

TEST(routing_cache, forget_while_adding_keeps_it_absent) {
    routing_cache c;
    ASSERT_TRUE(c.begin_add(hello));
    c.forget(hello.view());
    c.add_done(hello.view(), true);
    EXPECT_EQ(c.find(hello.view()), state::absent);
}

TEST(routing_cache, evicted_proxies_are_forgotten) {
    routing_cache c;
    for (const auto& id : {hello, cat_hello}) {
        ASSERT_TRUE(c.begin_add(id));
        c.add_done(id.view(), true);
    }
    protocol::proxy evicted;
    evicted.id = hello;
    c.evict(std::span(&evicted, 1));
    EXPECT_EQ(c.find(hello.view()), state::absent);
    EXPECT_EQ(c.find(cat_hello.view()), state::added);
}

}  // namespace
}  // namespace moraine::client
