// The locator client: its messages, its cache's timeout rule, and the resolver against a fake
// locator that answers as IceGrid does (docs/transports.md §2.2).
#include <moraine/net/locator_cache.hpp>
#include <moraine/net/locator_messages.hpp>
#include <moraine/net/locator_resolver.hpp>

#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

#include <deque>

namespace net = moraine::net;
namespace protocol = moraine::protocol;

namespace {

protocol::endpoint tcp(int port) {
    protocol::endpoint e;
    e.host = "127.0.0.1";
    e.port = port;
    return e;
}

protocol::proxy direct(std::string name, int port) {
    protocol::proxy p;
    p.id.name = std::move(name);
    p.endpoints = {tcp(port)};
    return p;
}

protocol::proxy at_adapter(std::string name, std::string adapter) {
    protocol::proxy p;
    p.id.name = std::move(name);
    p.adapter_id = std::move(adapter);
    return p;
}

protocol::proxy well_known(std::string name) {
    protocol::proxy p;
    p.id.name = std::move(name);
    return p;
}

/// The payload of an OK reply returning `p` (a nil proxy when `p` is null).
protocol::byte_buffer ok_payload(const protocol::proxy& p) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    protocol::write_proxy(os, p);
    os.end_encapsulation(start);
    return os.take();
}

/// The payload of IceGrid's status-1 reply: a member-less exception, compact form (flags 0x20).
protocol::byte_buffer not_found_payload(std::string_view type_id) {
    protocol::byte_buffer out;
    protocol::write_user_exception_encaps(out, protocol::encoding_1_1, type_id, {}, false);
    return out;
}

/// A locator that records the calls and answers when the test says so.
struct fake_locator {
    struct call {
        std::string operation;
        protocol::byte_buffer params;
        net::reply_handler done;
    };
    std::deque<call> calls;

    net::locator_resolver::query_fn fn() {
        return [this](std::string_view op, protocol::byte_buffer params, net::reply_handler done) {
            calls.push_back({std::string(op), std::move(params), std::move(done)});
        };
    }
    void answer(protocol::reply_status status, const protocol::byte_buffer& payload) {
        auto c = std::move(calls.front());
        calls.pop_front();
        protocol::reply_view r{1, status, payload};
        c.done(&r, {});
    }
    void answer_proxy(const protocol::proxy& p) { answer(protocol::reply_status::ok, ok_payload(p)); }
};

/// Records what a resolution gave.
struct outcome {
    bool called = false;
    std::vector<protocol::endpoint> endpoints;
    std::string failure;
    net::locator_resolver::resolved_handler handler() {
        return [this](const std::vector<protocol::endpoint>* eps, std::string_view why) {
            called = true;
            if (eps) endpoints = *eps;
            failure = std::string(why);
        };
    }
};

}  // namespace

TEST(locator_messages, find_adapter_params_are_the_adapter_id_in_an_encapsulation) {
    // docs/transports.md §2.2: 12000000 0101 0b "TickAdapter"
    const auto b = net::find_adapter_params("TickAdapter");
    ASSERT_EQ(b.size(), 18u);
    EXPECT_EQ(std::to_integer<int>(b[0]), 0x12);
    EXPECT_EQ(std::to_integer<int>(b[4]), 1);
    EXPECT_EQ(std::to_integer<int>(b[5]), 1);
    EXPECT_EQ(std::to_integer<int>(b[6]), 11);
    EXPECT_EQ(std::to_integer<int>(b[7]), 'T');
}

TEST(locator_messages, find_object_params_are_the_identity) {
    // docs/transports.md §2.2: 0e000000 0101 06 "direct" 00
    const auto b = net::find_object_params(protocol::identity{"direct", ""}.view());
    ASSERT_EQ(b.size(), 14u);
    EXPECT_EQ(std::to_integer<int>(b[6]), 6);
    EXPECT_EQ(std::to_integer<int>(b[13]), 0);
}

TEST(locator_messages, reads_the_returned_proxy) {
    const auto payload = ok_payload(direct("dummy", 45310));
    protocol::reply_view r{1, protocol::reply_status::ok, payload};
    auto a = net::read_find_adapter_reply(&r, {}, "TickAdapter");
    ASSERT_TRUE(a.proxy);
    ASSERT_EQ(a.proxy->endpoints.size(), 1u);
    EXPECT_EQ(a.proxy->endpoints[0].port, 45310);
}

TEST(locator_messages, not_found_and_nil_become_glacier2routers_text) {
    const auto payload = not_found_payload("::Ice::AdapterNotFoundException");
    protocol::reply_view r{1, protocol::reply_status::user_exception, payload};
    auto a = net::read_find_adapter_reply(&r, {}, "NoSuchAdapter");
    EXPECT_FALSE(a.proxy);
    EXPECT_EQ(a.failure, "src/Ice/LocatorInfo.cpp:671: ::Ice::NotRegisteredException:\n"
                         "no object adapter with id `NoSuchAdapter' is registered");

    const auto nil = ok_payload(protocol::proxy{});
    protocol::reply_view n{1, protocol::reply_status::ok, nil};
    auto o = net::read_find_object_reply(&n, {}, protocol::identity{"nosuchobject", ""});
    EXPECT_FALSE(o.proxy);
    EXPECT_EQ(o.failure, "src/Ice/LocatorInfo.cpp:684: ::Ice::NotRegisteredException:\n"
                         "no object with id `nosuchobject' is registered");
}

TEST(locator_messages, a_failed_call_keeps_the_connection_text) {
    auto a = net::read_find_adapter_reply(nullptr, "::Ice::ConnectionRefusedException:\nconnection refused", "A");
    EXPECT_FALSE(a.proxy);
    EXPECT_EQ(a.failure, "::Ice::ConnectionRefusedException:\nconnection refused");
}

TEST(locator_messages, garbage_results_are_an_error_not_a_crash) {
    protocol::byte_buffer junk{std::byte{0x02}, std::byte{0}, std::byte{0}};
    protocol::reply_view r{1, protocol::reply_status::ok, junk};
    auto a = net::read_find_adapter_reply(&r, {}, "A");
    EXPECT_FALSE(a.proxy);
    EXPECT_NE(a.failure.find("MarshalException"), std::string::npos);
    protocol::reply_view odd{1, protocol::reply_status::object_not_exist, junk};
    EXPECT_NE(net::read_find_adapter_reply(&odd, {}, "A").failure.find("status 2"), std::string::npos);
}

TEST(locator_cache, minus_one_keeps_forever) {
    net::locator_cache c(-1);
    const auto t0 = net::locator_cache::clock::now();
    c.put_adapter("A", {tcp(1)}, t0);
    ASSERT_TRUE(c.adapter("A", t0 + std::chrono::hours(1000)));
}

TEST(locator_cache, zero_keeps_nothing) {
    net::locator_cache c(0);
    const auto t0 = net::locator_cache::clock::now();
    c.put_adapter("A", {tcp(1)}, t0);
    c.put_object(protocol::identity{"o", ""}, direct("o", 2), t0);
    EXPECT_FALSE(c.adapter("A", t0));
    EXPECT_EQ(c.size(), 0u);
}

TEST(locator_cache, n_seconds_then_stale) {
    net::locator_cache c(5);
    const auto t0 = net::locator_cache::clock::now();
    c.put_adapter("A", {tcp(1)}, t0);
    EXPECT_TRUE(c.adapter("A", t0 + std::chrono::seconds(5)));
    EXPECT_FALSE(c.adapter("A", t0 + std::chrono::seconds(6)));
}

TEST(locator_cache, well_known_object_follows_its_adapter_and_forget_drops_both) {
    net::locator_cache c(-1);
    const auto t0 = net::locator_cache::clock::now();
    c.put_object(protocol::identity{"hello", ""}, at_adapter("hello", "HelloAdapter"), t0);
    EXPECT_FALSE(c.find(well_known("hello"), t0));  // the adapter is not known yet
    c.put_adapter("HelloAdapter", {tcp(7)}, t0);
    const auto eps = c.find(well_known("hello"), t0);
    ASSERT_TRUE(eps);
    EXPECT_EQ(eps->at(0).port, 7);
    EXPECT_TRUE(c.find(at_adapter("x", "HelloAdapter"), t0));
    EXPECT_FALSE(c.find(direct("d", 1), t0));  // a direct proxy needs no cache
    c.forget(well_known("hello"));
    EXPECT_EQ(c.size(), 0u);
}

TEST(locator_resolver, asks_once_for_concurrent_resolutions_and_answers_in_order) {
    fake_locator loc;
    net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(-1));
    std::vector<int> order;
    r.resolve(at_adapter("a", "HelloAdapter"), [&](auto* eps, auto) { order.push_back(eps ? 1 : -1); });
    r.resolve(at_adapter("b", "HelloAdapter"), [&](auto* eps, auto) { order.push_back(eps ? 2 : -2); });
    ASSERT_EQ(loc.calls.size(), 1u);
    EXPECT_EQ(loc.calls[0].operation, "findAdapterById");
    EXPECT_EQ(loc.calls[0].params, net::find_adapter_params("HelloAdapter"));
    loc.answer_proxy(direct("dummy", 4000));
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    // Cached now: answered at once, no call.
    outcome o;
    r.resolve(at_adapter("c", "HelloAdapter"), o.handler());
    EXPECT_TRUE(o.called);
    EXPECT_EQ(o.endpoints.at(0).port, 4000);
    EXPECT_TRUE(loc.calls.empty());
    ASSERT_TRUE(r.cached(at_adapter("d", "HelloAdapter")));
}

TEST(locator_resolver, well_known_object_then_its_adapter) {
    fake_locator loc;
    net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(-1));
    outcome o;
    r.resolve(well_known("hello"), o.handler());
    ASSERT_EQ(loc.calls.size(), 1u);
    EXPECT_EQ(loc.calls[0].operation, "findObjectById");
    loc.answer_proxy(at_adapter("hello", "HelloAdapter"));  // indirect answer, as IceGrid gives
    ASSERT_EQ(loc.calls.size(), 1u);
    EXPECT_EQ(loc.calls[0].operation, "findAdapterById");
    EXPECT_FALSE(o.called);
    loc.answer_proxy(direct("dummy", 5000));
    ASSERT_TRUE(o.called);
    EXPECT_EQ(o.endpoints.at(0).port, 5000);
}

TEST(locator_resolver, well_known_object_may_be_direct) {
    fake_locator loc;
    net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(-1));
    outcome o;
    r.resolve(well_known("hello"), o.handler());
    loc.answer_proxy(direct("hello", 6000));
    EXPECT_TRUE(loc.calls.empty());
    EXPECT_EQ(o.endpoints.at(0).port, 6000);
}

TEST(locator_resolver, unknown_adapter_is_not_cached_and_forget_asks_again) {
    fake_locator loc;
    net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(-1));
    outcome o;
    r.resolve(at_adapter("x", "NoSuchAdapter"), o.handler());
    loc.answer(protocol::reply_status::user_exception, not_found_payload("::Ice::AdapterNotFoundException"));
    EXPECT_TRUE(o.called);
    EXPECT_NE(o.failure.find("no object adapter with id `NoSuchAdapter'"), std::string::npos);
    outcome again;
    r.resolve(at_adapter("x", "NoSuchAdapter"), again.handler());
    EXPECT_EQ(loc.calls.size(), 1u);  // asked again: no negative caching
    loc.answer_proxy(direct("dummy", 1));
    r.forget(at_adapter("x", "NoSuchAdapter"));
    EXPECT_FALSE(r.cached(at_adapter("x", "NoSuchAdapter")));
}

TEST(locator_resolver, an_adapter_answer_without_endpoints_is_not_registered) {
    fake_locator loc;
    net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(-1));
    outcome o;
    r.resolve(at_adapter("x", "A"), o.handler());
    loc.answer_proxy(at_adapter("dummy", "B"));
    EXPECT_TRUE(o.endpoints.empty());
    EXPECT_NE(o.failure.find("NotRegisteredException"), std::string::npos);
}

TEST(locator_resolver, locator_unreachable_fails_every_waiter_with_its_text) {
    fake_locator loc;
    net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(-1));
    outcome a, b;
    r.resolve(well_known("w"), a.handler());
    r.resolve(well_known("w"), b.handler());
    auto c = std::move(loc.calls.front());
    loc.calls.pop_front();
    c.done(nullptr, "::Ice::ConnectionRefusedException:\nconnection refused: Connection refused");
    EXPECT_EQ(a.failure, b.failure);
    EXPECT_NE(a.failure.find("ConnectionRefused"), std::string::npos);
}

TEST(locator_resolver, answers_after_destruction_are_dropped) {
    fake_locator loc;
    outcome o;
    {
        net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(-1));
        r.resolve(at_adapter("x", "A"), o.handler());
    }
    loc.answer_proxy(direct("dummy", 1));
    EXPECT_FALSE(o.called);
}

TEST(locator_resolver, shards_share_the_answers) {
    fake_locator loc;
    auto cache = std::make_shared<net::locator_cache>(-1);
    net::locator_resolver shard0(loc.fn(), cache), shard1(loc.fn(), cache);
    outcome a, b;
    shard0.resolve(at_adapter("x", "A"), a.handler());
    loc.answer_proxy(direct("dummy", 9));
    shard1.resolve(at_adapter("y", "A"), b.handler());
    EXPECT_TRUE(loc.calls.empty());
    EXPECT_EQ(b.endpoints.at(0).port, 9);
}

TEST(locator_resolver, zero_timeout_asks_every_time) {
    fake_locator loc;
    net::locator_resolver r(loc.fn(), std::make_shared<net::locator_cache>(0));
    outcome a, b;
    r.resolve(at_adapter("x", "A"), a.handler());
    loc.answer_proxy(direct("dummy", 9));
    r.resolve(at_adapter("x", "A"), b.handler());
    EXPECT_EQ(loc.calls.size(), 1u);
    EXPECT_EQ(a.endpoints.at(0).port, 9);
}
