#include <moraine/net/shard_set.hpp>
#include <moraine/router/session_router.hpp>
#include <moraine/router/session_shard.hpp>

#include "glacier2_harness.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace moraine;

namespace {

std::shared_ptr<const net::runtime_config> threads(unsigned n) {
    net::runtime_config cfg;
    cfg.threads = n;
    return std::make_shared<const net::runtime_config>(cfg);
}

/// A router on `n` shards (not started: categories need no I/O).
struct router_on_shards {
    explicit router_on_shards(unsigned n)
        : shards(threads(n)),
          glacier2(shards, std::make_shared<const router::config>(allow_all())) {}

    static router::config allow_all() {
        router::config cfg;
        cfg.auth = router::auth_mode::allow_all;
        return cfg;
    }

    net::shard_set shards;
    router::session_router glacier2;
};

}  // namespace

TEST(session_shard, categories_are_printable_random_and_name_their_shard) {
    for (unsigned n : {1u, 2u, 3u, 7u, 94u}) {
        router_on_shards r(n);
        for (unsigned i = 0; i < n; ++i) {
            std::set<std::string> seen;
            for (int k = 0; k < 50; ++k) {
                const auto category = r.glacier2.local(i).new_category();
                ASSERT_EQ(category.size(), 20u);
                for (char c : category) {
                    ASSERT_GE(c, 33);
                    ASSERT_LE(c, 126);
                }
                EXPECT_EQ(r.glacier2.owner_of(category), i) << "n=" << n;
                seen.insert(category);
            }
            EXPECT_EQ(seen.size(), 50u);  // 20 random characters: no repeats in practice
        }
    }
}

TEST(session_shard, foreign_categories_map_to_a_valid_shard) {
    router_on_shards r(4);
    EXPECT_LT(r.glacier2.owner_of(""), 4u);
    EXPECT_LT(r.glacier2.owner_of("\x01"), 4u);
    EXPECT_LT(r.glacier2.owner_of("\xff" "abc"), 4u);
}

TEST(session_shard, session_servants_are_recognised_by_the_server_endpoints) {
    router_on_shards r(1);
    EXPECT_FALSE(r.glacier2.hosts(*protocol::proxy_from_string("cb:tcp -h 127.0.0.1 -p 4064")));
    router::config cfg = router_on_shards::allow_all();
    cfg.server_published_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 4064");
    net::shard_set shards(threads(1));
    router::session_router glacier2(shards, std::make_shared<const router::config>(cfg));
    EXPECT_TRUE(glacier2.hosts(*protocol::proxy_from_string("cat/cb -t:tcp -h 127.0.0.1 -p 4064")));
    EXPECT_FALSE(glacier2.hosts(*protocol::proxy_from_string("cat/cb -t:tcp -h 127.0.0.1 -p 4065")));
}

TEST(session_shard, the_session_table_finds_registers_and_forgets_by_category) {
    test::glacier2 g;
    auto& c = g.connect();
    auto& local = g.local();
    EXPECT_EQ(local.session_count(), 0u);
    EXPECT_EQ(local.find_session("abc"), nullptr);
    local.add_session("abc", c.conn.get());
    EXPECT_EQ(local.session_count(), 1u);
    EXPECT_EQ(local.find_session("abc"), c.conn.get());
    EXPECT_EQ(local.find_session(std::string_view("abcd").substr(0, 3)), c.conn.get()) << "looked up by view";
    local.remove_session("abc");
    EXPECT_EQ(local.find_session("abc"), nullptr);
    local.remove_session("abc");  // already gone: no effect
    EXPECT_EQ(local.session_count(), 0u);
    EXPECT_THROW(local.add_session(std::string(25, 'x'), c.conn.get()), std::length_error)
        << "longer than a category_key holds";
}

TEST(session_shard, reconfigure_replaces_the_configuration_this_shard_sees) {
    test::glacier2 g;
    auto& local = g.local();
    EXPECT_EQ(local.cfg().routing_table_max, 1000u);
    EXPECT_FALSE(local.draining());
    auto fresh = test::glacier2_config();
    fresh.routing_table_max = 3;
    local.reconfigure(std::make_shared<const router::config>(fresh), nullptr);
    EXPECT_EQ(local.cfg().routing_table_max, 3u);
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    EXPECT_EQ(c.conn->current_session()->routes.max_size(), 3u) << "sessions created after a reload use it";
}
