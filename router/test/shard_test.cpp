#include <moraine/router/shard_set.hpp>

#include <gtest/gtest.h>

#include <set>

using namespace moraine::router;

namespace {

std::shared_ptr<const config> config_with_threads(unsigned n) {
    auto cfg = std::make_shared<config>();
    cfg->threads = n;
    cfg->auth = auth_mode::allow_all;
    return cfg;
}

}  // namespace

TEST(shard, categories_are_printable_random_and_name_their_shard) {
    for (unsigned n : {1u, 2u, 3u, 7u, 94u}) {
        shard_set shards(config_with_threads(n));
        for (unsigned i = 0; i < n; ++i) {
            std::set<std::string> seen;
            for (int k = 0; k < 50; ++k) {
                const auto category = shards.at(i).new_category();
                ASSERT_EQ(category.size(), 20u);
                for (char c : category) {
                    ASSERT_GE(c, 33);
                    ASSERT_LE(c, 126);
                }
                EXPECT_EQ(shards.owner_of_category(category), i) << "n=" << n;
                seen.insert(category);
            }
            EXPECT_EQ(seen.size(), 50u);  // 20 random characters: no repeats in practice
        }
    }
}

TEST(shard, foreign_categories_map_to_a_valid_shard) {
    shard_set shards(config_with_threads(4));
    EXPECT_LT(shards.owner_of_category(""), 4u);
    EXPECT_LT(shards.owner_of_category("\x01"), 4u);
    EXPECT_LT(shards.owner_of_category("\xff" "abc"), 4u);
}
