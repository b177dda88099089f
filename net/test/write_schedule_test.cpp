// write_schedule: an ice_connection's mark for the turn's flush and its write in flight, the two
// independent, each refusing what the write path never does twice.
#include <moraine/net/write_schedule.hpp>

#include <gtest/gtest.h>

#include <type_traits>

using moraine::net::write_schedule;
using value = write_schedule::value;

static_assert(sizeof(write_schedule) == 1, "one byte beside the connection's other flags");
static_assert(std::is_trivially_copyable_v<write_schedule>);

TEST(write_schedule, starts_idle) {
    const write_schedule s;
    EXPECT_EQ(s.get(), value::idle);
    EXPECT_TRUE(s.idle());
    EXPECT_FALSE(s.marked());
    EXPECT_FALSE(s.in_flight());
}

TEST(write_schedule, a_turn_marks_once_and_its_flush_unmarks) {
    write_schedule s;
    EXPECT_TRUE(s.mark());  // the turn's first frame: the caller puts it on the flusher
    EXPECT_EQ(s.get(), value::marked);
    EXPECT_TRUE(s.marked());
    EXPECT_FALSE(s.in_flight());
    EXPECT_FALSE(s.idle());
    EXPECT_FALSE(s.mark());  // the turn's next frames: on the list already
    EXPECT_EQ(s.get(), value::marked);
    s.unmark();  // flush_turn
    EXPECT_EQ(s.get(), value::idle);
    EXPECT_TRUE(s.idle());
    EXPECT_TRUE(s.mark());  // the next turn marks again
    EXPECT_EQ(s.get(), value::marked);
}

TEST(write_schedule, the_flush_hands_a_full_socket_to_a_write) {
    write_schedule s;
    ASSERT_TRUE(s.mark());
    s.unmark();  // flush_turn: a short writev...
    s.begin_write();  // ...and write_async takes the rest
    EXPECT_EQ(s.get(), value::in_flight);
    EXPECT_TRUE(s.in_flight());
    EXPECT_FALSE(s.marked());
    EXPECT_FALSE(s.idle());
    s.end_write();  // done, with more queued meanwhile...
    EXPECT_EQ(s.get(), value::idle);
    s.begin_write();  // ...so the next write begins at once
    EXPECT_EQ(s.get(), value::in_flight);
    s.end_write();  // the queue is empty
    EXPECT_EQ(s.get(), value::idle);
    EXPECT_TRUE(s.idle());
}

TEST(write_schedule, a_write_may_start_while_marked) {
    write_schedule s;
    ASSERT_TRUE(s.mark());
    s.begin_write();  // a layered read's answer the socket did not take (send_raw)
    EXPECT_EQ(s.get(), value::marked_in_flight);
    EXPECT_TRUE(s.marked());
    EXPECT_TRUE(s.in_flight());
    EXPECT_FALSE(s.idle());
    s.unmark();  // flush_turn finds the write in flight and leaves the frames to it
    EXPECT_EQ(s.get(), value::in_flight);
    s.end_write();
    EXPECT_EQ(s.get(), value::idle);
}

TEST(write_schedule, a_write_may_end_before_the_flush) {
    write_schedule s;
    ASSERT_TRUE(s.mark());
    s.begin_write();
    s.end_write();  // the write completed within the turn
    EXPECT_EQ(s.get(), value::marked);
    EXPECT_TRUE(s.marked());
    EXPECT_FALSE(s.in_flight());
    s.unmark();
    EXPECT_EQ(s.get(), value::idle);
}

TEST(write_schedule, a_flush_without_a_mark_changes_nothing) {
    write_schedule s;
    s.unmark();  // flush_turn from a turn_flusher the connection was put on directly
    EXPECT_EQ(s.get(), value::idle);
    s.begin_write();
    s.unmark();
    EXPECT_EQ(s.get(), value::in_flight);
    s.end_write();
    EXPECT_EQ(s.get(), value::idle);
}

#ifndef NDEBUG
// Only where BOOST_ASSERT is on (a Debug build): the transitions the write path never makes.
TEST(write_schedule_death, illegal_transitions_assert) {
    EXPECT_DEATH(([] {
                     write_schedule s;
                     s.begin_write();
                     s.mark();  // schedule_write wakes the writer instead
                 }()),
                 "in_flight");
    EXPECT_DEATH(([] {
                     write_schedule s;
                     s.begin_write();
                     s.begin_write();  // a second write over the first one's buffers
                 }()),
                 "in_flight");
    EXPECT_DEATH(([] {
                     write_schedule s;
                     s.end_write();  // a completion with no write
                 }()),
                 "in_flight");
}
#endif
