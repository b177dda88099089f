// close_state: an ice_connection's close lifecycle (open, close message queued / written, closed),
// and what each step tells the caller to count in close_messages_pending.
#include <moraine/net/close_state.hpp>

#include <gtest/gtest.h>

#include <type_traits>

using moraine::net::close_state;
using value = close_state::value;

static_assert(sizeof(close_state) == 1, "one byte beside the connection's other flags");
static_assert(std::is_trivially_copyable_v<close_state>);

TEST(close_state, starts_open) {
    const close_state s;
    EXPECT_EQ(s.get(), value::open);
    EXPECT_TRUE(s.open());
    EXPECT_FALSE(s.closing());
    EXPECT_FALSE(s.closed());
    EXPECT_FALSE(s.message_pending());
}

TEST(close_state, graceful_close_queues_then_writes_the_message) {
    close_state s;
    EXPECT_TRUE(s.queue_close_message(true));  // pending: the caller counts it
    EXPECT_EQ(s.get(), value::close_queued);
    EXPECT_FALSE(s.open());
    EXPECT_TRUE(s.closing());
    EXPECT_TRUE(s.message_pending());
    EXPECT_TRUE(s.message_written());  // the caller uncounts it, once
    EXPECT_EQ(s.get(), value::close_written);
    EXPECT_TRUE(s.closing());
    EXPECT_FALSE(s.message_pending());
    EXPECT_FALSE(s.message_written());  // a second write of the queue changes nothing
    EXPECT_EQ(s.get(), value::close_written);
    EXPECT_EQ(s.close(), value::close_written);
    EXPECT_TRUE(s.closed());
    EXPECT_FALSE(s.closing());
}

TEST(close_state, a_message_already_written_is_never_pending) {
    close_state s;
    EXPECT_FALSE(s.queue_close_message(false));  // the enqueue wrote it at once: nothing to count
    EXPECT_EQ(s.get(), value::close_written);
    EXPECT_FALSE(s.message_written());
}

TEST(close_state, message_written_while_open_changes_nothing) {
    close_state s;  // every write of an open connection's queue reports to it
    EXPECT_FALSE(s.message_written());
    EXPECT_TRUE(s.open());
}

TEST(close_state, close_reports_what_it_left_for_the_caller_to_undo) {
    close_state open;
    EXPECT_EQ(open.close(), value::open);
    close_state queued;
    queued.queue_close_message(true);
    EXPECT_EQ(queued.close(), value::close_queued);  // abandoned: the caller uncounts it
    EXPECT_FALSE(queued.message_pending());
    EXPECT_FALSE(queued.message_written());  // never counted down twice
}

TEST(close_state, close_is_idempotent) {
    close_state s;
    EXPECT_EQ(s.close(), value::open);
    EXPECT_EQ(s.close(), value::closed);  // the caller returns: on_closed ran once
    EXPECT_TRUE(s.closed());
    EXPECT_FALSE(s.open());
    EXPECT_FALSE(s.closing());
}
