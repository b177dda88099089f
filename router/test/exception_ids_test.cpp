// exception_ids: the Glacier2 user exception type ids the router raises must be Slice's exactly,
// or Ice clients cannot unmarshal them; checked as a client sees one in a refusal.
#include "glacier2_harness.hpp"

#include <moraine/router/exception_ids.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(exception_ids, match_the_slice_type_ids) {
    EXPECT_EQ(router::permission_denied_id, "::Glacier2::PermissionDeniedException");
    EXPECT_EQ(router::cannot_create_session_id, "::Glacier2::CannotCreateSessionException");
    EXPECT_EQ(router::session_not_exist_id, "::Glacier2::SessionNotExistException");
}

TEST(exception_ids, a_refused_create_session_carries_permission_denied) {
    test::glacier2 g([](router::config& cfg) { cfg.auth = router::auth_mode::none; });
    auto& c = g.connect();
    EXPECT_EQ(test::user_exception_type(g.create_session(c)), router::permission_denied_id);
}
