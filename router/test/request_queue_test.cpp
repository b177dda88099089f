// The buffered queue: order, byte accounting, overriding in place.
#include <moraine/router/request_queue.hpp>

#include <gtest/gtest.h>

#include <string>

namespace moraine::router {
namespace {

struct entry {
    std::string payload;
    std::string override_key;
    std::size_t size() const noexcept { return payload.size(); }
};

std::string drain(request_queue<entry>& q) {
    std::string all;
    while (!q.empty()) all += q.pop().payload + ",";
    return all;
}

TEST(request_queue, keeps_order_and_counts_bytes) {
    request_queue<entry> q;
    EXPECT_FALSE(q.add({"a", ""}));
    EXPECT_FALSE(q.add({"bb", ""}));
    EXPECT_FALSE(q.add({"ccc", ""}));
    EXPECT_EQ(q.size(), 3u);
    EXPECT_EQ(q.bytes(), 6u);
    EXPECT_EQ(q.front().payload, "a");
    EXPECT_EQ(drain(q), "a,bb,ccc,");
    EXPECT_EQ(q.bytes(), 0u);
}

TEST(request_queue, a_newer_entry_with_the_same_key_replaces_the_queued_one_in_place) {
    request_queue<entry> q;
    q.add({"x1", "x"});
    q.add({"plain", ""});
    q.add({"y1", "y"});
    EXPECT_TRUE(q.add({"x2-longer", "x"}));
    EXPECT_TRUE(q.add({"x3", "x"}));
    EXPECT_TRUE(q.add({"y2", "y"}));
    EXPECT_EQ(q.size(), 3u);
    EXPECT_EQ(q.bytes(), 2u + 5u + 2u);
    EXPECT_EQ(drain(q), "x3,plain,y2,");
}

TEST(request_queue, once_popped_an_entry_is_no_longer_overridden) {
    request_queue<entry> q;
    q.add({"x1", "x"});
    q.add({"y1", "y"});
    EXPECT_EQ(q.pop().payload, "x1");
    EXPECT_FALSE(q.add({"x2", "x"}));  // x1 has left: x2 is queued behind y1
    EXPECT_TRUE(q.add({"y2", "y"}));
    EXPECT_TRUE(q.add({"x3", "x"}));
    EXPECT_EQ(drain(q), "y2,x3,");
    EXPECT_FALSE(q.add({"x4", "x"}));
    EXPECT_EQ(drain(q), "x4,");
}

TEST(request_queue, one_hundred_overriding_updates_leave_one) {
    request_queue<entry> q;
    int overridden = 0;
    for (int i = 1; i <= 100; ++i) overridden += q.add({"put" + std::to_string(i), "k"}) ? 1 : 0;
    EXPECT_EQ(overridden, 99);
    EXPECT_EQ(drain(q), "put100,");
}

}  // namespace
}  // namespace moraine::router
