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
