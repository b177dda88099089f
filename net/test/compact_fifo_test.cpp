#include <moraine/net/compact_fifo.hpp>

#include <gtest/gtest.h>

#include <memory>

using moraine::net::compact_fifo;

TEST(compact_fifo, keeps_order_across_growth_and_compaction) {
    compact_fifo<int> q;
    int next_in = 0, next_out = 0;
    // Interleave pushes and pops so the front index moves and the vector both grows and compacts.
    for (int round = 0; round < 50; ++round) {
        for (int i = 0; i < 7; ++i) q.push_back(next_in++);
        for (int i = 0; i < 5; ++i) {
            ASSERT_EQ(q.front(), next_out++);
            q.pop_front();
        }
    }
    EXPECT_EQ(q.size(), static_cast<std::size_t>(next_in - next_out));
    for (std::size_t i = 0; i < q.size(); ++i) EXPECT_EQ(q[i], next_out + static_cast<int>(i));
    int expect = next_out;
    for (int v : q) EXPECT_EQ(v, expect++);
}

TEST(compact_fifo, owns_no_memory_until_used_nor_after_a_burst_drains) {
    compact_fifo<int> q;
    EXPECT_EQ(q.capacity(), 0u);
    for (int i = 0; i < 100; ++i) q.push_back(i);
    while (!q.empty()) q.pop_front();
    EXPECT_EQ(q.capacity(), 0u);  // more than keep_capacity slots: given back
    q.push_back(1);
    q.pop_front();
    EXPECT_LE(q.capacity(), compact_fifo<int>::keep_capacity);  // a small queue keeps its slot for reuse
    q.push_back(2);
    q.clear();
    EXPECT_TRUE(q.empty());
}

TEST(compact_fifo, pop_front_releases_the_item_at_once) {
    compact_fifo<std::shared_ptr<int>> q;
    auto item = std::make_shared<int>(7);
    q.push_back(item);
    q.push_back(std::make_shared<int>(8));
    EXPECT_EQ(item.use_count(), 2);
    q.pop_front();
    EXPECT_EQ(item.use_count(), 1);  // not kept alive by the popped slot
    EXPECT_EQ(*q.front(), 8);
}
