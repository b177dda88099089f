// Registering the router's client endpoints under an adapter id with the locator registry,
// against a fake that answers as IceGrid's registry does: Locator::getRegistry, then
// LocatorRegistry::setReplicatedAdapterDirectProxy or setAdapterDirectProxy
// (tests/interop/router_replica_group.py runs it against a real one).
#include <moraine/net/adapter_registration.hpp>

#include "fake_registry.hpp"

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

using namespace fake_registry;

namespace {

const net::adapter_names replicated{"R1", "RouterGroup"};
const net::adapter_names alone{"R1", ""};

std::vector<protocol::endpoint> client_endpoints() {
    return {direct("", "x", 4063).endpoints[0], direct("", "x", 4064).endpoints[0]};
}

/// The strings, then the proxy, of a request's parameters.
struct decoded {
    std::vector<std::string> strings;
    protocol::proxy proxy;
};
decoded decode(const protocol::byte_buffer& params, int strings) {
    protocol::input_stream outer(params);
    const auto encaps = outer.read_encapsulation();
    EXPECT_TRUE(outer.ok());
    EXPECT_EQ(encaps.encoding, protocol::encoding_1_1);
    protocol::input_stream in(encaps.payload(), encaps.encoding);
    decoded d;
    for (int i = 0; i < strings; ++i) d.strings.emplace_back(in.read_string());
    d.proxy = protocol::read_proxy(in);
    EXPECT_TRUE(in.ok());
    EXPECT_EQ(in.remaining(), 0u);
    return d;
}

}  // namespace

TEST(adapter_registration, the_proxy_is_dummy_at_the_client_endpoints) {
    const auto p = net::adapter_proxy(client_endpoints());
    EXPECT_EQ(p.id.name, "dummy");
    EXPECT_EQ(p.id.category, "");
    EXPECT_EQ(p.endpoints, client_endpoints());
    EXPECT_TRUE(p.adapter_id.empty());
}

TEST(adapter_registration, replicated_request_is_adapter_group_then_proxy) {
    const auto proxy = net::adapter_proxy(client_endpoints());
    const auto r = net::adapter_proxy_request(replicated, proxy);
    EXPECT_EQ(r.operation, "setReplicatedAdapterDirectProxy");
    EXPECT_EQ(r.mode, 2);  // idempotent
    const auto d = decode(r.params, 2);
    EXPECT_EQ(d.strings, (std::vector<std::string>{"R1", "RouterGroup"}));
    EXPECT_EQ(d.proxy, proxy);
}

TEST(adapter_registration, without_a_group_the_request_is_set_adapter_direct_proxy) {
    const auto proxy = net::adapter_proxy(client_endpoints());
    const auto r = net::adapter_proxy_request(alone, proxy);
    EXPECT_EQ(r.operation, "setAdapterDirectProxy");
    EXPECT_EQ(r.mode, 2);
    const auto d = decode(r.params, 1);
    EXPECT_EQ(d.strings, (std::vector<std::string>{"R1"}));
    EXPECT_EQ(d.proxy, proxy);
}

TEST(adapter_registration, withdrawing_sends_a_nil_proxy) {
    const auto r = net::adapter_proxy_request(replicated, protocol::proxy{});
    EXPECT_EQ(r.operation, "setReplicatedAdapterDirectProxy");
    const auto d = decode(r.params, 2);
    EXPECT_TRUE(d.proxy.is_nil());
}

TEST(adapter_registration, get_registry_then_set_replicated_adapter_direct_proxy) {
    fake_ice ice;
    outcome out;
    const auto proxy = net::adapter_proxy(client_endpoints());
    net::set_adapter_proxy(ice.fn(), locator, replicated, proxy, out.handler());
    ASSERT_EQ(ice.calls.size(), 1u);
    EXPECT_EQ(ice.calls[0].target, locator);
    EXPECT_EQ(ice.calls[0].operation, "getRegistry");
    EXPECT_EQ(ice.calls[0].mode, 1);
    EXPECT_EQ(ice.calls[0].params, void_payload());
    ice.answer(protocol::reply_status::ok, proxy_payload(registry));

    ASSERT_EQ(ice.calls.size(), 1u);
    EXPECT_EQ(ice.calls[0].target, registry);
    EXPECT_EQ(ice.calls[0].operation, "setReplicatedAdapterDirectProxy");
    EXPECT_EQ(ice.calls[0].mode, 2);
    EXPECT_EQ(ice.calls[0].params, net::adapter_proxy_request(replicated, proxy).params);
    EXPECT_FALSE(out.ok);
    ice.answer(protocol::reply_status::ok, void_payload());
    ASSERT_TRUE(out.ok);
    EXPECT_TRUE(*out.ok) << out.why;
}

TEST(adapter_registration, registry_exceptions_are_explained_naming_the_adapter) {
    const std::pair<const char*, const char*> cases[] = {
        {"::Ice::AdapterNotFoundException", "does not know adapter `R1' of replica group `RouterGroup'"},
        {"::Ice::AdapterAlreadyActiveException", "another process has registered adapter `R1'"},
        {"::Ice::InvalidReplicaGroupIdException", "InvalidReplicaGroupIdException"},
        {"::Demo::Other", "setReplicatedAdapterDirectProxy raised ::Demo::Other"},
    };
    for (const auto& [type, text] : cases) {
        fake_ice ice;
        outcome out;
        net::set_adapter_proxy(ice.fn(), locator, replicated, net::adapter_proxy(client_endpoints()), out.handler());
        ice.answer(protocol::reply_status::ok, proxy_payload(registry));
        ice.answer(protocol::reply_status::user_exception, fake_registry::user_exception_payload(type));
        ASSERT_TRUE(out.ok) << type;
        EXPECT_FALSE(*out.ok) << type;
        EXPECT_NE(out.why.find(text), std::string::npos) << out.why;
    }
}

TEST(adapter_registration, unreachable_locator_and_nil_registry_fail_without_a_second_call) {
    {
        fake_ice ice;
        outcome out;
        net::set_adapter_proxy(ice.fn(), locator, alone, net::adapter_proxy(client_endpoints()), out.handler());
        ice.fail("::Ice::ConnectionRefusedException:\nconnection refused");
        ASSERT_TRUE(out.ok);
        EXPECT_FALSE(*out.ok);
        EXPECT_NE(out.why.find("Locator::getRegistry: ::Ice::ConnectionRefusedException"), std::string::npos)
            << out.why;
        EXPECT_TRUE(ice.calls.empty());
    }
    {
        fake_ice ice;
        outcome out;
        net::set_adapter_proxy(ice.fn(), locator, alone, net::adapter_proxy(client_endpoints()), out.handler());
        ice.answer(protocol::reply_status::ok, proxy_payload(protocol::proxy{}));
        ASSERT_TRUE(out.ok);
        EXPECT_FALSE(*out.ok);
        EXPECT_NE(out.why.find("no registry"), std::string::npos) << out.why;
        EXPECT_TRUE(ice.calls.empty());
    }
}
