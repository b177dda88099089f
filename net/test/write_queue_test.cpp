#include <moraine/net/write_queue.hpp>

#include <gtest/gtest.h>

using namespace moraine::net;

namespace {

outbound_frame frame_of(std::size_t n) { return outbound_frame{moraine::protocol::byte_buffer(n), {}}; }

}  // namespace

TEST(write_queue, reports_high_watermark_and_hard_limit) {
    write_queue q(100, 50, 200);
    EXPECT_EQ(q.push(frame_of(60)), enqueue_result::queued);
    EXPECT_EQ(q.push(frame_of(60)), enqueue_result::above_high);
    EXPECT_TRUE(q.above_high());
    EXPECT_EQ(q.push(frame_of(81)), enqueue_result::over_limit);  // 201 > 200: refused, not queued
    EXPECT_EQ(q.bytes(), 120u);
}

TEST(write_queue, gathers_head_and_shared_tail_and_consumes_what_was_gathered) {
    write_queue q(1000, 10, 0);
    auto tail = std::make_shared<const moraine::protocol::byte_buffer>(7);
    q.push(outbound_frame{moraine::protocol::byte_buffer(3), tail});
    q.push(frame_of(5));
    q.push(frame_of(9));
    std::vector<boost::asio::const_buffer> bufs;
    q.gather(bufs, 2);
    ASSERT_EQ(bufs.size(), 3u);  // head + tail, then head
    EXPECT_EQ(boost::asio::buffer_size(bufs), 15u);
    q.consume_gathered();
    EXPECT_EQ(q.bytes(), 9u);
    EXPECT_FALSE(q.empty());
}

TEST(write_queue, falls_below_low_only_after_being_above_high) {
    write_queue q(100, 50, 0);
    std::vector<boost::asio::const_buffer> bufs;
    q.push(frame_of(10));
    q.gather(bufs, 10);
    EXPECT_FALSE(q.consume_gathered());  // never above high: nothing to report
    q.push(frame_of(70));
    q.push(frame_of(40));
    EXPECT_TRUE(q.above_high());
    q.gather(bufs, 1);
    EXPECT_TRUE(q.consume_gathered());  // 40 < 50
    EXPECT_FALSE(q.above_high());
}

TEST(write_queue, consume_after_a_short_write_keeps_the_unwritten_rest_in_order) {
    write_queue q(1000, 10, 0);
    auto tail = std::make_shared<const moraine::protocol::byte_buffer>(
        moraine::protocol::byte_buffer{std::byte{10}, std::byte{11}, std::byte{12}, std::byte{13}});
    q.push(frame_of(5));
    q.push(outbound_frame{moraine::protocol::byte_buffer{std::byte{1}, std::byte{2}}, tail});  // 6 bytes
    q.push(frame_of(4));
    q.consume(5 + 3);  // the first frame, then the second's head and the tail's first byte
    EXPECT_EQ(q.bytes(), 3u + 4u);
    std::vector<boost::asio::const_buffer> bufs;
    q.gather(bufs, 1);
    ASSERT_EQ(bufs.size(), 1u);  // the rest is one owned head: the shared tail was let go
    const auto* rest = static_cast<const std::byte*>(bufs[0].data());
    ASSERT_EQ(bufs[0].size(), 3u);
    EXPECT_EQ(rest[0], std::byte{11});
    EXPECT_EQ(rest[2], std::byte{13});
    EXPECT_EQ(tail.use_count(), 1);
    q.consume(3 + 4);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.bytes(), 0u);
}

TEST(write_queue, consume_reports_falling_below_low) {
    write_queue q(100, 50, 0);
    q.push(frame_of(70));
    q.push(frame_of(40));
    EXPECT_FALSE(q.consume(30));  // 80 left: still above low
    EXPECT_TRUE(q.consume(40));   // 40 < 50
}

TEST(write_queue, coalesces_small_frames_into_the_last_one_not_in_flight) {
    write_queue q(1 << 20, 10, 0);
    q.coalesce(true);
    auto bytes_of = [](std::initializer_list<int> v) {
        moraine::protocol::byte_buffer b;
        for (int x : v) b.push_back(std::byte(x));
        return b;
    };
    q.push(outbound_frame{bytes_of({1, 2}), {}});
    q.push(outbound_frame{bytes_of({3}), {}});
    EXPECT_EQ(q.frames(), 1u);  // appended to the first
    std::vector<boost::asio::const_buffer> bufs;
    q.gather(bufs, 256);  // a write in flight now points at that frame: it must not move
    ASSERT_EQ(bufs.size(), 1u);
    const auto* in_flight = static_cast<const std::byte*>(bufs[0].data());
    q.push(outbound_frame{bytes_of({4}), {}});
    EXPECT_EQ(q.frames(), 2u);  // a new frame, not appended to the gathered one
    EXPECT_EQ(static_cast<const std::byte*>(bufs[0].data()), in_flight);
    auto tail = std::make_shared<const moraine::protocol::byte_buffer>(bytes_of({9, 9}));
    q.push(outbound_frame{bytes_of({5}), tail});  // a shared tail stays a frame of its own
    q.push(outbound_frame{bytes_of({6}), {}});    // nor is anything appended behind a tail
    EXPECT_EQ(q.frames(), 4u);
    EXPECT_EQ(q.bytes(), 8u);
    q.consume_gathered();
    q.gather(bufs, 256);
    std::vector<int> order;
    for (const auto& b : bufs)
        for (std::size_t i = 0; i < b.size(); ++i) order.push_back(int(static_cast<const std::byte*>(b.data())[i]));
    EXPECT_EQ(order, (std::vector<int>{4, 5, 9, 9, 6}));  // bytes in the order pushed
}

TEST(write_queue, coalescing_stops_at_its_maximum_and_is_off_by_default) {
    write_queue q(1 << 30, 10, 0);
    q.push(frame_of(10));
    q.push(frame_of(10));
    EXPECT_EQ(q.frames(), 2u);
    write_queue c(1 << 30, 10, 0);
    c.coalesce(true);
    c.push(frame_of(write_queue::coalesce_max - 10));
    c.push(frame_of(10));
    c.push(frame_of(1));
    EXPECT_EQ(c.frames(), 2u);
    EXPECT_EQ(c.bytes(), write_queue::coalesce_max + 1);
}

TEST(write_queue, footprint_counts_bytes_spare_capacity_and_frames_and_returns_to_zero) {
    write_queue q(1 << 30, 10, 0);
    q.coalesce(true);
    EXPECT_EQ(q.footprint(), 0u);
    for (int i = 0; i < 100; ++i) q.push(frame_of(100));  // coalesced into one growing head
    EXPECT_EQ(q.frames(), 1u);
    EXPECT_GE(q.footprint(), q.bytes() + write_queue::frame_overhead);
    EXPECT_LE(q.footprint(), 2 * q.bytes() + write_queue::frame_overhead);  // geometric growth at most doubles
    std::vector<boost::asio::const_buffer> bufs;
    q.gather(bufs, 256);
    q.push(frame_of(10));
    EXPECT_EQ(q.consume(q.bytes() - 5), false);  // all but 5 bytes: the rest is kept as an exact copy
    EXPECT_EQ(q.footprint(), 5u + write_queue::frame_overhead);
    q.consume(5);
    EXPECT_EQ(q.footprint(), 0u);
}
