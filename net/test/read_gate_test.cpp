// read_gate: an ice_connection's one pending read wait, and a stop that never ends.
#include <moraine/net/read_gate.hpp>

#include <gtest/gtest.h>

#include <type_traits>

using moraine::net::read_gate;
using value = read_gate::value;

static_assert(sizeof(read_gate) == 1, "one byte beside the connection's other flags");
static_assert(std::is_trivially_copyable_v<read_gate>);

TEST(read_gate, starts_idle_and_reading) {
    const read_gate g;
    EXPECT_EQ(g.get(), value::idle);
    EXPECT_FALSE(g.waiting());
    EXPECT_FALSE(g.stopped());
}

TEST(read_gate, at_most_one_wait_is_pending) {
    read_gate g;
    EXPECT_TRUE(g.arm());
    EXPECT_EQ(g.get(), value::waiting);
    EXPECT_FALSE(g.arm());  // a resume_reads() during a wait must not start a second one
    EXPECT_EQ(g.get(), value::waiting);
    g.woke();
    EXPECT_EQ(g.get(), value::idle);
    EXPECT_TRUE(g.arm());  // the handler arms the next wait
}

TEST(read_gate, stop_keeps_a_pending_wait_and_never_ends) {
    read_gate g;
    ASSERT_TRUE(g.arm());
    g.stop();  // on_frame returned false while a wait was pending (start_loops' early bytes)
    EXPECT_EQ(g.get(), value::stopped_waiting);
    EXPECT_TRUE(g.waiting());
    EXPECT_TRUE(g.stopped());
    EXPECT_FALSE(g.arm());
    g.woke();
    EXPECT_EQ(g.get(), value::stopped);
    EXPECT_TRUE(g.arm());  // it still waits (for the close), on the pause timer
    EXPECT_TRUE(g.stopped());
    g.woke();
    g.stop();  // a second stop changes nothing
    EXPECT_EQ(g.get(), value::stopped);
}

TEST(read_gate, stop_while_idle) {
    read_gate g;
    g.stop();  // on_readable: the dispatch said stop, then arm_read
    EXPECT_EQ(g.get(), value::stopped);
    EXPECT_FALSE(g.waiting());
}
