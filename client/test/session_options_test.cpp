// session_options: the documented defaults a session runs with when the application sets
// nothing (the values Glacier2.SessionHelper and an Ice client use), and that reconnection and
// TLS are off unless asked for.
#include <moraine/client/session_options.hpp>

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;

TEST(session_options, defaults_match_the_documentation) {
    const session_options o;
    EXPECT_EQ(o.instance_name, "Glacier2");
    EXPECT_EQ(o.call_timeout, 60s);
    EXPECT_EQ(o.connect_timeout, 10s);
    EXPECT_TRUE(o.keep_alive);
    EXPECT_EQ(o.fallback_heartbeat, 15s);
    EXPECT_EQ(o.write_queue_limit, 1024u * 1024u);
    EXPECT_EQ(o.max_message_bytes, 1024u * 1024u) << "Ice.MessageSizeMax's default, 1024 KiB";
    EXPECT_EQ(o.tls, nullptr) << "an ssl address fails rather than falling back to tcp";
    EXPECT_FALSE(o.reconnect.has_value()) << "a lost connection closes the session unless asked";
}

TEST(session_options, reconnect_options_never_give_up_by_default) {
    const reconnect_options r;
    EXPECT_EQ(r.max_attempts, 0u);
}

}  // namespace
}  // namespace moraine::client
