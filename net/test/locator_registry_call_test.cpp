// locator_registry_call: getRegistry on the locator, then one operation on the registry it
// returns (call_locator_registry), and bounded_invoker, which fails a call nobody answers after
// the connect timeout. The admin and adapter registrations' own tests cover their requests.
#include "fake_registry.hpp"
#include "loop_harness.hpp"

#include <moraine/net/locator_registry_call.hpp>

#include <gtest/gtest.h>

#include <chrono>

using namespace moraine;
using fake_registry::direct;

namespace {

net::registry_request ping_request(std::function<std::string(std::string_view)> explain = {}) {
    return {"ping", 2, fake_registry::void_payload(), std::move(explain)};
}

}  // namespace

TEST(locator_registry_call, asks_the_locator_then_sends_the_request_to_its_registry) {
    fake_registry::fake_ice ice;
    fake_registry::outcome out;
    using fake_registry::locator, fake_registry::registry;
    net::call_locator_registry(ice.fn(), locator, ping_request(), out.handler());
    ASSERT_EQ(ice.calls.size(), 1u);
    EXPECT_EQ(ice.calls.front().operation, net::get_registry_operation);
    EXPECT_EQ(ice.calls.front().mode, net::get_registry_mode);
    EXPECT_EQ(protocol::proxy_to_string(ice.calls.front().target), protocol::proxy_to_string(locator));
    ice.answer(protocol::reply_status::ok, fake_registry::proxy_payload(registry));
    ASSERT_EQ(ice.calls.size(), 1u) << "then the request, on the registry";
    EXPECT_EQ(ice.calls.front().operation, "ping");
    EXPECT_EQ(ice.calls.front().mode, 2);
    EXPECT_EQ(ice.calls.front().params, fake_registry::void_payload());
    EXPECT_EQ(protocol::proxy_to_string(ice.calls.front().target), protocol::proxy_to_string(registry));
    EXPECT_FALSE(out.ok);
    ice.answer(protocol::reply_status::ok, fake_registry::void_payload());
    EXPECT_EQ(out.ok, std::optional<bool>(true)) << out.why;
}

TEST(locator_registry_call, a_user_exception_is_explained_or_named_by_its_type_id) {
    for (const bool with_explain : {true, false}) {
        fake_registry::fake_ice ice;
        fake_registry::outcome out;
        auto explain = [](std::string_view id) { return "explained " + std::string(id); };
        net::call_locator_registry(ice.fn(), fake_registry::locator,
                                   with_explain ? ping_request(explain) : ping_request(), out.handler());
        ice.answer(protocol::reply_status::ok, fake_registry::proxy_payload(fake_registry::registry));
        ice.answer(protocol::reply_status::user_exception, fake_registry::user_exception_payload("::Ice::AdapterNotFoundException"));
        EXPECT_EQ(out.ok, std::optional<bool>(false));
        EXPECT_NE(out.why.find(with_explain ? "explained ::Ice::AdapterNotFoundException" : "::Ice::AdapterNotFoundException"),
                  std::string::npos)
            << out.why;
    }
}

TEST(locator_registry_call, bounded_invoker_fails_a_call_nobody_answers_within_the_connect_timeout) {
    auto shards = test::owned_shards(1, [](net::runtime_config& c) { c.backend_connect_timeout_ms = 200; });
    auto& sh = shards->at(0);
    test::loopback_backend silent;
    silent.answer_with([](const protocol::request_view&) { return protocol::byte_buffer{}; });  // takes, never answers
    std::optional<std::string> failure;
    int calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    net::bounded_invoker(sh)(direct("IceGrid", "Locator", silent.port()), net::get_registry_operation,
                             net::get_registry_mode, fake_registry::void_payload(),
                             [&](const protocol::reply_view* r, std::string_view why) {
                                 ++calls;
                                 EXPECT_EQ(r, nullptr);
                                 failure = std::string(why);
                             });
    ASSERT_TRUE(test::run_until(*shards, [&] {
        silent.pump();
        return failure.has_value();
    }));
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, std::chrono::milliseconds(190));
    EXPECT_NE(failure->find("no answer within the connect timeout"), std::string::npos) << *failure;
    EXPECT_EQ(silent.requests.size() >= 1, true) << "the request reached the peer";
    sh.backends().close_all();
    test::settle(*shards);
    EXPECT_EQ(calls, 1) << "done runs once, even when the connection closes afterwards";
    test::finish(*shards);
}
