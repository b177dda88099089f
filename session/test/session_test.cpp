// session: a Glacier2 session's state. Checked: the constructor wires the user id and category,
// bounds the routing table by Glacier2.RoutingTable.MaxSize (the oldest proxy is evicted), and
// builds the filters for this user (Glacier2.Filter.Category.AcceptUser adds the user's own
// category), with no SessionManager proxy until one is set.
#include <moraine/session/session.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {
protocol::proxy proxy(const std::string& s) { return *protocol::proxy_from_string(s); }
}  // namespace

TEST(session, holds_its_user_and_category_and_no_manager_session) {
    session::session s("alice", "0123456789abcdefghij", 10, {});
    EXPECT_EQ(s.user_id, "alice");
    EXPECT_EQ(s.category, "0123456789abcdefghij");
    EXPECT_EQ(s.session_proxy, nullptr);
    EXPECT_TRUE(s.control_name.empty());
    EXPECT_EQ(s.routes.size(), 0u);
}

TEST(session, the_routing_table_is_bounded_by_its_max_size) {
    session::session s("alice", "cat", 2, {});
    EXPECT_EQ(s.routes.max_size(), 2u);
    EXPECT_TRUE(s.routes.add({proxy("a:tcp -h 127.0.0.1 -p 1"), proxy("b:tcp -h 127.0.0.1 -p 2")}).empty());
    const auto evicted = s.routes.add({proxy("c:tcp -h 127.0.0.1 -p 3")});
    ASSERT_EQ(evicted.size(), 1u);
    EXPECT_EQ(evicted[0].id.name, "a") << "the least recently used goes";
    EXPECT_EQ(s.routes.size(), 2u);
    EXPECT_NE(s.routes.find({"c", ""}), nullptr);
}

TEST(session, filters_are_made_for_this_user) {
    session::filter_config cfg;
    cfg.category_accept_user = 2;
    session::session s("bob", "cat", 10, cfg);
    EXPECT_EQ(s.filters.categories(), (std::vector<std::string>{"_bob"}));
    EXPECT_TRUE(s.filters.accepts_request({"obj", "_bob"}, ""));
    EXPECT_FALSE(s.filters.accepts_request({"obj", "_alice"}, ""));
    session::session open("carol", "cat", 10, {});
    EXPECT_TRUE(open.filters.accepts_request({"anything", "any"}, "")) << "no filter: everything";
}
