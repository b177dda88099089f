// session_factory: createSession's authentication and session creation, seen by a client over
// its connection, with an external PermissionsVerifier and SessionManager on loopback. Checked:
// refusal without a configured verifier, the verifier's verdict and reason, the SessionManager's
// create call (user id, SessionControl proxy) and the Session* it returns, its refusal, and
// createSessionFromSecureConnection refused on a plain TCP connection.
#include "glacier2_harness.hpp"

#include <moraine/net/local_reply.hpp>
#include <moraine/router/exception_ids.hpp>
#include <moraine/router/session_control.hpp>
#include <moraine/router/session_factory.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

/// A PermissionsVerifier accepting password "secret" only: checkPermissions(user, pw, out reason) -> bool.
protocol::byte_buffer verifier_answer(const protocol::request_view& r) {
    protocol::input_stream in(r.params.payload(), r.params.encoding);
    const std::string user(in.read_string());
    const std::string pw(in.read_string());
    const bool ok = pw == "secret";
    return test::ok_reply(r.request_id, test::encaps([&](protocol::output_stream& os) {
                              os.write_string(ok ? "" : "wrong password for " + user);
                              os.write_bool(ok);
                          }));
}

}  // namespace

TEST(session_factory, without_an_authentication_mode_every_session_is_refused) {
    test::glacier2 g([](router::config& cfg) { cfg.auth = router::auth_mode::none; });
    auto& c = g.connect();
    const auto reply = g.create_session(c);
    EXPECT_EQ(test::user_exception_type(reply), router::permission_denied_id);
    EXPECT_EQ(test::user_exception_reason(reply), "no configured permissions verifier");
    EXPECT_EQ(c.conn->current_session(), nullptr);
    EXPECT_EQ(g.local().metrics().auth_failures, 1u);
    EXPECT_FALSE(c.conn->closed()) << "the client may try again";
}

TEST(session_factory, a_permissions_verifier_decides_and_gives_the_reason) {
    test::loopback_backend verifier;
    verifier.answer_with(verifier_answer);
    test::glacier2 g([&](router::config& cfg) {
        cfg.auth = router::auth_mode::verifier;
        cfg.permissions_verifier = "verifier:" + verifier.endpoint();
    });
    auto& denied = g.connect();
    const auto no = g.create_session(denied, "bob", "guess", [&] { verifier.pump(); });
    EXPECT_EQ(test::user_exception_type(no), router::permission_denied_id);
    EXPECT_EQ(test::user_exception_reason(no), "wrong password for bob");
    EXPECT_EQ(denied.conn->current_session(), nullptr);

    auto& allowed = g.connect();
    const auto yes = g.create_session(allowed, "bob", "secret", [&] { verifier.pump(); });
    EXPECT_EQ(test::reply_of(yes).status, protocol::reply_status::ok);
    ASSERT_NE(allowed.conn->current_session(), nullptr);
    EXPECT_EQ(allowed.conn->current_session()->user_id, "bob");

    ASSERT_EQ(verifier.requests.size(), 2u);
    const auto call = test::request_of(verifier.requests[0]);
    EXPECT_EQ(call.operation, "checkPermissions");
    EXPECT_EQ(call.id.name, "verifier");
}

TEST(session_factory, a_session_manager_creates_the_session_and_its_proxy_goes_to_the_client) {
    test::loopback_backend manager;
    std::string control_category, control_name, user;
    manager.answer_with([&](const protocol::request_view& r) {
        protocol::input_stream in(r.params.payload(), r.params.encoding);
        user = in.read_string();
        const auto control = protocol::read_proxy(in);
        control_category = control.id.category;
        control_name = control.id.name;
        return test::ok_reply(r.request_id, test::encaps([](protocol::output_stream& os) {
                                  protocol::write_proxy(os, *protocol::proxy_from_string("sess/1:tcp -h 10.0.0.9 -p 5000"));
                              }));
    });
    test::glacier2 g([&](router::config& cfg) { cfg.session_manager = "manager:" + manager.endpoint(); });
    auto& c = g.connect();
    const auto reply = g.create_session(c, "carol", "pw", [&] { manager.pump(); });
    auto in = test::results_of(reply);
    const auto session = protocol::read_proxy(in);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(session.id.name, "1");
    EXPECT_EQ(session.id.category, "sess");
    EXPECT_EQ(user, "carol");
    ASSERT_NE(c.conn->current_session(), nullptr);
    EXPECT_EQ(control_category, router::session_control_category(test::glacier2_config()));
    EXPECT_EQ(control_name, c.conn->current_session()->category);
    ASSERT_TRUE(c.conn->current_session()->session_proxy);
    EXPECT_EQ(protocol::proxy_to_string(*c.conn->current_session()->session_proxy), protocol::proxy_to_string(session));
}

TEST(session_factory, a_session_manager_refusal_reaches_the_client_as_cannot_create_session) {
    test::loopback_backend manager;
    manager.answer_with([](const protocol::request_view& r) {
        return net::reply_user_exception(r.request_id, r.params.encoding, router::cannot_create_session_id,
                                         "server full", true);
    });
    test::glacier2 g([&](router::config& cfg) { cfg.session_manager = "manager:" + manager.endpoint(); });
    auto& c = g.connect();
    const auto reply = g.create_session(c, "dave", "pw", [&] { manager.pump(); });
    EXPECT_EQ(test::user_exception_type(reply), router::cannot_create_session_id);
    EXPECT_EQ(test::user_exception_reason(reply), "server full");
    EXPECT_EQ(c.conn->session_state(), nullptr) << "the half-made session is gone";
    EXPECT_EQ(g.local().session_count(), 0u);
    EXPECT_EQ(g.local().metrics().sessions_refused, 1u);
}

TEST(session_factory, create_session_from_secure_connection_needs_tls_and_a_verifier) {
    test::glacier2 g;
    auto& c = g.connect();
    const auto none = g.call(c, test::router_id, "createSessionFromSecureConnection", test::empty_encaps());
    EXPECT_EQ(test::user_exception_type(none), router::permission_denied_id);
    EXPECT_EQ(test::user_exception_reason(none), "no configured ssl permissions verifier");

    test::glacier2 g2([](router::config& cfg) {
        cfg.ssl_permissions_verifier = "Glacier2/NullSSLPermissionsVerifier";
        cfg.ssl_allow_all = true;
    });
    auto& c2 = g2.connect();
    const auto plain = g2.call(c2, test::router_id, "createSessionFromSecureConnection", test::empty_encaps());
    EXPECT_EQ(test::user_exception_type(plain), router::permission_denied_id);
    EXPECT_EQ(test::user_exception_reason(plain), "not ssl connection");
    EXPECT_EQ(c2.conn->current_session(), nullptr);
}
