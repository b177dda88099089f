// startup_state: an ice_connection's start-up (handshakes, a back end's validate connection, the
// loops), each path a connection takes through it and what each state allows.
#include <moraine/net/startup_state.hpp>

#include <gtest/gtest.h>

#include <type_traits>

using moraine::net::startup_state;
using value = startup_state::value;

static_assert(sizeof(startup_state) == 1, "one byte beside the connection's other flags");
static_assert(std::is_trivially_copyable_v<startup_state>);

TEST(startup_state, starts_with_writes_allowed_and_no_loops) {
    const startup_state s;
    EXPECT_EQ(s.get(), value::starting);
    EXPECT_TRUE(s.writes_enabled());  // an accepted tcp connection queues validate connection now
    EXPECT_FALSE(s.loops_started());
}

TEST(startup_state, accepted_plain_connection_runs_at_once) {
    startup_state s;
    s.start_loops();
    EXPECT_EQ(s.get(), value::running);
    EXPECT_TRUE(s.loops_started());
    EXPECT_TRUE(s.writes_enabled());
}

TEST(startup_state, accepted_layered_connection_holds_writes_while_it_handshakes) {
    startup_state s;
    s.hold_writes();
    EXPECT_EQ(s.get(), value::handshaking);
    EXPECT_FALSE(s.writes_enabled());  // the handshake owns the codec
    EXPECT_FALSE(s.loops_started());   // a drain closes it forcefully, its deadline may close it
    s.release_writes();                // the handshake ended: validate connection is queued next
    EXPECT_EQ(s.get(), value::starting);
    EXPECT_TRUE(s.writes_enabled());
    EXPECT_FALSE(s.loops_started());
    s.start_loops();
    EXPECT_EQ(s.get(), value::running);
}

TEST(startup_state, back_end_writes_nothing_before_its_validate_connection) {
    startup_state s;
    s.hold_writes();  // constructed: connect and handshakes come first
    s.start_loops();  // reading starts, for the validate connection
    EXPECT_EQ(s.get(), value::validating);
    EXPECT_TRUE(s.loops_started());
    EXPECT_FALSE(s.writes_enabled());  // docs/ice-wire.md §3.1: the connecting side waits
    s.release_writes();                // it arrived
    EXPECT_EQ(s.get(), value::running);
    EXPECT_TRUE(s.loops_started());
    EXPECT_TRUE(s.writes_enabled());
}
