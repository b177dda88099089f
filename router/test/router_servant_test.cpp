// router_servant: the router object <InstanceName>/router and Ice/RouterFinder, as a client sees
// them over its connection. Checked: which identities are the router's, the Ice::Object
// operations, getCategoryForClient, getServerProxy, addProxies (and a filter refusing a proxy),
// getSessionTimeout / getACMTimeout, destroySession and refreshSession without a session, a
// second createSession, session-only operations before a session, unknown operations and
// RouterFinder::getRouter.
#include "glacier2_harness.hpp"

#include <moraine/router/exception_ids.hpp>
#include <moraine/router/router_servant.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(router_servant, router_identities) {
    auto cfg = test::glacier2_config();
    cfg.instance_name = "Edge";
    EXPECT_TRUE(router::is_router_identity(cfg, {"router", "Edge"}));
    EXPECT_TRUE(router::is_router_identity(cfg, {"RouterFinder", "Ice"}));
    EXPECT_FALSE(router::is_router_identity(cfg, {"router", "Glacier2"}));
    EXPECT_FALSE(router::is_router_identity(cfg, {"other", "Edge"}));
}

TEST(router_servant, answers_ice_isA_and_ice_id_as_a_glacier2_router) {
    test::glacier2 g;
    auto& c = g.connect();
    const auto isa = g.call(c, test::router_id, "ice_isA", test::encaps([](protocol::output_stream& os) {
                                os.write_string("::Glacier2::Router");
                            }));
    auto in = test::results_of(isa);
    EXPECT_TRUE(in.read_bool());
    const auto id = g.call(c, test::router_id, "ice_id", test::empty_encaps());
    EXPECT_EQ(test::results_of(id).read_string(), "::Glacier2::Router");
}

TEST(router_servant, get_category_for_client_is_the_sessions_category) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const auto reply = g.call(c, test::router_id, "getCategoryForClient", test::empty_encaps());
    const std::string category(test::results_of(reply).read_string());
    EXPECT_EQ(category.size(), 20u);
    EXPECT_EQ(category, c.conn->current_session()->category);
    EXPECT_EQ(g.router().owner_of(category), 0u);
}

TEST(router_servant, get_category_for_client_without_server_endpoints_is_empty_even_without_a_session) {
    test::glacier2 g([](router::config& cfg) { cfg.server_endpoints.clear(); });
    auto& c = g.connect();
    const auto reply = g.call(c, test::router_id, "getCategoryForClient", test::empty_encaps());
    EXPECT_EQ(test::results_of(reply).read_string(), "");
    EXPECT_FALSE(c.conn->closed());
}

TEST(router_servant, session_only_operations_before_a_session_close_the_connection) {
    test::glacier2 g;
    auto& c = g.connect();
    EXPECT_TRUE(g.call(c, test::router_id, "getClientProxy", test::empty_encaps()).empty());
    EXPECT_TRUE(c.conn->closed());
}

TEST(router_servant, add_proxies_fills_the_routing_table_and_returns_no_evicted_proxy) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const auto reply = g.add_proxy(c, "hello:tcp -h 127.0.0.1 -p 10000");
    EXPECT_EQ(test::results_of(reply).read_size(), 0);
    ASSERT_NE(c.conn->current_session(), nullptr);
    EXPECT_EQ(c.conn->current_session()->routes.size(), 1u);
}

TEST(router_servant, add_proxies_with_a_filtered_address_drops_the_connection) {
    test::glacier2 g([](router::config& cfg) { cfg.filters.address_reject = "10.*"; });
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    EXPECT_TRUE(g.add_proxy(c, "hello:tcp -h 10.1.2.3 -p 10000").empty());
    EXPECT_TRUE(c.conn->closed());
}

TEST(router_servant, get_server_proxy_names_the_sessions_category_at_the_server_endpoints) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const auto reply = g.call(c, test::router_id, "getServerProxy", test::empty_encaps());
    auto in = test::results_of(reply);
    const auto p = protocol::read_proxy(in);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(p.id.category, c.conn->current_session()->category);
}

TEST(router_servant, timeouts_come_from_the_configuration) {
    test::glacier2 g([](router::config& cfg) {
        cfg.session_timeout_s = 42;
        cfg.acm_timeout_s = 17;
    });
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    EXPECT_EQ(test::results_of(g.call(c, test::router_id, "getSessionTimeout", test::empty_encaps())).read_long(), 42);
    EXPECT_EQ(test::results_of(g.call(c, test::router_id, "getACMTimeout", test::empty_encaps())).read_int(), 17);
}

TEST(router_servant, destroy_and_refresh_without_a_session_raise_session_not_exist_and_keep_the_connection) {
    test::glacier2 g;
    auto& c = g.connect();
    EXPECT_EQ(test::user_exception_type(g.call(c, test::router_id, "destroySession", test::empty_encaps())),
              router::session_not_exist_id);
    EXPECT_EQ(test::user_exception_type(g.call(c, test::router_id, "refreshSession", test::empty_encaps())),
              router::session_not_exist_id);
    EXPECT_FALSE(c.conn->closed());
}

TEST(router_servant, destroy_session_ends_the_session_and_keeps_the_connection) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const auto reply = g.call(c, test::router_id, "destroySession", test::empty_encaps());
    EXPECT_EQ(test::reply_of(reply).status, protocol::reply_status::ok);
    EXPECT_EQ(c.conn->current_session(), nullptr);
    EXPECT_EQ(g.local().session_count(), 0u);
    EXPECT_FALSE(c.conn->closed());
    EXPECT_EQ(test::reply_of(g.create_session(c)).status, protocol::reply_status::ok) << "a new session on it";
}

TEST(router_servant, a_second_create_session_is_refused_as_session_exists) {
    test::glacier2 g;
    auto& c = g.connect();
    ASSERT_FALSE(g.create_session(c).empty());
    const auto again = g.create_session(c);
    EXPECT_EQ(test::user_exception_type(again), router::cannot_create_session_id);
    EXPECT_EQ(test::user_exception_reason(again), "session exists");
}

TEST(router_servant, an_unknown_operation_is_operation_not_exist) {
    test::glacier2 g;
    auto& c = g.connect();
    const auto reply = g.call(c, test::router_id, "frobnicate", test::empty_encaps());
    EXPECT_EQ(test::reply_of(reply).status, protocol::reply_status::operation_not_exist);
}

TEST(router_servant, router_finder_returns_the_router_proxy_at_the_client_endpoints) {
    test::glacier2 g;
    auto& c = g.connect();
    const auto reply = g.call(c, {"RouterFinder", "Ice"}, "getRouter", test::empty_encaps());
    auto in = test::results_of(reply);
    const auto p = protocol::read_proxy(in);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(p.id.name, "router");
    EXPECT_EQ(p.id.category, "Glacier2");
    ASSERT_EQ(p.endpoints.size(), 1u);
    EXPECT_EQ(p.endpoints[0].port, 4063);
}
