// session_event: what a reconnecting session reports. Checked: the printable name of every
// kind (used in logs and by applications) and a default event being a plain loss with no error.
#include <moraine/client/session_event.hpp>

#include <gtest/gtest.h>

#include <string>

namespace moraine::client {
namespace {

TEST(session_event, every_kind_has_a_name) {
    EXPECT_STREQ(to_string(session_event_kind::lost), "lost");
    EXPECT_STREQ(to_string(session_event_kind::reconnecting), "reconnecting");
    EXPECT_STREQ(to_string(session_event_kind::restored), "restored");
    EXPECT_STREQ(to_string(session_event_kind::gave_up), "gave_up");
    EXPECT_STREQ(to_string(static_cast<session_event_kind>(200)), "unknown");
}

TEST(session_event, a_default_event_is_a_loss_without_error) {
    session_event e;
    EXPECT_EQ(e.kind, session_event_kind::lost);
    EXPECT_EQ(e.attempt, 0u);
    EXPECT_EQ(e.delay.count(), 0);
    EXPECT_TRUE(e.category.empty());
    EXPECT_FALSE(e.error);
}

}  // namespace
}  // namespace moraine::client
