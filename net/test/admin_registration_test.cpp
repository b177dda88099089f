// Registering the admin object's Process proxy with the locator registry, against a fake that
// answers as IceGrid's registry does: Locator::getRegistry, then
// LocatorRegistry::setServerProcessProxy (tests/ops/icegrid_deploy.py runs it against a real one).
#include <moraine/net/admin_registration.hpp>

#include "fake_registry.hpp"

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

using namespace fake_registry;

namespace {

const protocol::proxy process = [] {
    auto p = direct("Glacier2", "admin", 4063);
    p.facet = "Process";
    return p;
}();

}  // namespace

TEST(admin_registration, params_are_the_server_id_and_the_process_proxy) {
    const auto b = net::set_process_proxy_params("router", process);
    protocol::input_stream outer(b);
    const auto encaps = outer.read_encapsulation();
    ASSERT_TRUE(outer.ok());
    EXPECT_EQ(encaps.encoding, protocol::encoding_1_1);
    protocol::input_stream in(encaps.payload(), encaps.encoding);
    EXPECT_EQ(in.read_string(), "router");
    EXPECT_EQ(protocol::read_proxy(in), process);
    EXPECT_TRUE(in.ok());
}

TEST(admin_registration, get_registry_then_set_server_process_proxy) {
    fake_ice ice;
    outcome out;
    net::register_process_proxy(ice.fn(), locator, "router", process, out.handler());
    ASSERT_EQ(ice.calls.size(), 1u);
    EXPECT_EQ(ice.calls[0].target, locator);
    EXPECT_EQ(ice.calls[0].operation, "getRegistry");
    EXPECT_EQ(ice.calls[0].mode, 1);  // ["nonmutating"] idempotent
    EXPECT_EQ(ice.calls[0].params, void_payload());
    ice.answer(protocol::reply_status::ok, proxy_payload(registry));

    ASSERT_EQ(ice.calls.size(), 1u);
    EXPECT_EQ(ice.calls[0].target, registry);
    EXPECT_EQ(ice.calls[0].operation, "setServerProcessProxy");
    EXPECT_EQ(ice.calls[0].mode, 2);  // idempotent
    EXPECT_EQ(ice.calls[0].params, net::set_process_proxy_params("router", process));
    EXPECT_FALSE(out.ok);
    ice.answer(protocol::reply_status::ok, void_payload());
    ASSERT_TRUE(out.ok);
    EXPECT_TRUE(*out.ok);
}

TEST(admin_registration, unknown_server_is_a_failure_naming_it) {
    fake_ice ice;
    outcome out;
    net::register_process_proxy(ice.fn(), locator, "router", process, out.handler());
    ice.answer(protocol::reply_status::ok, proxy_payload(registry));
    ice.answer(protocol::reply_status::user_exception, fake_registry::user_exception_payload("::Ice::ServerNotFoundException"));
    ASSERT_TRUE(out.ok);
    EXPECT_FALSE(*out.ok);
    EXPECT_NE(out.why.find("knows nothing about server `router'"), std::string::npos) << out.why;
}

TEST(admin_registration, unreachable_locator_nil_registry_and_odd_answers_fail) {
    {
        fake_ice ice;
        outcome out;
        net::register_process_proxy(ice.fn(), locator, "router", process, out.handler());
        ice.fail("::Ice::ConnectionRefusedException:\nconnection refused");
        ASSERT_TRUE(out.ok);
        EXPECT_FALSE(*out.ok);
        EXPECT_NE(out.why.find("ConnectionRefusedException"), std::string::npos) << out.why;
        EXPECT_TRUE(ice.calls.empty());
    }
    {
        fake_ice ice;
        outcome out;
        net::register_process_proxy(ice.fn(), locator, "router", process, out.handler());
        ice.answer(protocol::reply_status::ok, proxy_payload(protocol::proxy{}));
        ASSERT_TRUE(out.ok);
        EXPECT_FALSE(*out.ok);
        EXPECT_NE(out.why.find("no registry"), std::string::npos) << out.why;
        EXPECT_TRUE(ice.calls.empty());
    }
    {
        fake_ice ice;
        outcome out;
        net::register_process_proxy(ice.fn(), locator, "router", process, out.handler());
        ice.answer(protocol::reply_status::ok, proxy_payload(registry));
        ice.answer(protocol::reply_status::object_not_exist, {});
        ASSERT_TRUE(out.ok);
        EXPECT_FALSE(*out.ok);
        EXPECT_NE(out.why.find("setServerProcessProxy answered with reply status 2"), std::string::npos) << out.why;
    }
}
