// backend_pool: a shard's back-end connections by endpoint, and the router-originated calls
// made through it. Checked: one shared connection per endpoint, NoEndpointException for a proxy
// with no usable endpoint, secure-only selection, endpoint aliases, remove/close_all, in_flight, invoke() against
// a loopback back end, and results_of / proxy_result on replies.
#include "loop_harness.hpp"

#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/protocol/proxy.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {
protocol::proxy proxy(const std::string& s) { return *protocol::proxy_from_string(s); }
}  // namespace

TEST(backend_pool, one_connection_per_endpoint_shared_by_every_caller) {
    auto shards = test::owned_shards();
    auto& pool = shards->at(0).backends();
    std::string failure;
    auto a = pool.get(proxy("a:tcp -h 127.0.0.1 -p 10001"), failure);
    auto a2 = pool.get(proxy("other:tcp -h 127.0.0.1 -p 10001"), failure);
    auto b = pool.get(proxy("b:tcp -h 127.0.0.1 -p 10002"), failure);
    ASSERT_TRUE(a && a2 && b);
    EXPECT_EQ(a, a2) << "same endpoint, same connection";
    EXPECT_NE(a, b);
    EXPECT_EQ(pool.size(), 2u);
    EXPECT_NE(a->key(), b->key());
    pool.close_all();
    EXPECT_EQ(pool.size(), 0u);
    EXPECT_TRUE(a->closed());
    EXPECT_TRUE(b->closed());
    test::finish(*shards);
}

TEST(backend_pool, a_proxy_without_a_usable_endpoint_gets_no_endpoint_text) {
    auto shards = test::owned_shards();
    auto& pool = shards->at(0).backends();
    std::string failure;
    const auto p = proxy("a:udp -h 127.0.0.1 -p 10001");
    EXPECT_EQ(pool.get(p, failure), nullptr);
    EXPECT_EQ(failure, net::no_endpoint_text(p));
    EXPECT_NE(failure.find("::Ice::NoEndpointException"), std::string::npos);
    EXPECT_NE(failure.find("a -t -e 1.1:udp"), std::string::npos) << failure;
    failure.clear();
    EXPECT_EQ(pool.get(proxy("a:tcp -h 127.0.0.1 -p 10001"), failure, /*secure_only=*/true), nullptr)
        << "_fwd=s with only a tcp endpoint";
    EXPECT_FALSE(failure.empty());
    EXPECT_EQ(pool.size(), 0u);
}

TEST(backend_pool, remove_forgets_only_the_named_connection) {
    auto shards = test::owned_shards();
    auto& pool = shards->at(0).backends();
    std::string failure;
    auto a = pool.get(proxy("a:tcp -h 127.0.0.1 -p 10001"), failure);
    ASSERT_TRUE(a);
    pool.remove(a->key(), nullptr);  // another connection of the same key: kept
    EXPECT_EQ(pool.size(), 1u);
    pool.remove(a->key(), a.get());
    EXPECT_EQ(pool.size(), 0u);
    auto again = pool.get(proxy("a:tcp -h 127.0.0.1 -p 10001"), failure);
    EXPECT_NE(again, a) << "the next request reconnects";
    pool.close_all();
    a->close(net::close_reason::shutdown, "test over");
    test::finish(*shards);
}

TEST(backend_pool, invoke_calls_a_back_end_and_results_of_reads_the_answer) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    test::loopback_backend backend;
    backend.answer_with([](const protocol::request_view& r) {
        return test::ok_reply(r.request_id, test::encaps([&](protocol::output_stream& os) {
                                  os.write_string(std::string(r.operation) + " done");
                              }));
    });
    std::optional<std::string> answer;
    const auto params = test::encaps([](protocol::output_stream& os) { os.write_string("x"); });
    net::invoke(sh, proxy("svc:" + backend.endpoint()), "work", 0, params,
                [&](const protocol::reply_view* r, std::string_view) {
                    ASSERT_NE(r, nullptr);
                    auto in = net::results_of(*r);
                    ASSERT_TRUE(in);
                    answer = std::string(in->read_string());
                },
                {{"ctx", "1"}});
    EXPECT_EQ(sh.backends().size(), 1u);
    ASSERT_TRUE(test::run_until(*shards, [&] {
        backend.pump();
        return answer.has_value();
    }));
    EXPECT_EQ(*answer, "work done");
    EXPECT_EQ(sh.backends().in_flight(), 0u);
    const auto sent = test::request_of(backend.requests.at(0));
    EXPECT_EQ(sent.id.name, "svc");
    EXPECT_EQ(sent.context.find("ctx"), std::optional<std::string_view>("1"));
    test::finish(*shards);
}

TEST(backend_pool, proxy_result_reads_an_object_proxy_from_an_ok_reply_only) {
    const auto target = proxy("sess/abc:tcp -h 10.0.0.1 -p 4000");
    const auto ok = net::reply_ok(5, protocol::encoding_1_1, [&](protocol::output_stream& os) {
        protocol::write_proxy(os, target);
    });
    const auto r = test::reply_of(ok);
    auto p = net::proxy_result(&r);
    ASSERT_TRUE(p);
    EXPECT_EQ(protocol::proxy_to_string(*p), protocol::proxy_to_string(target));
    EXPECT_FALSE(net::proxy_result(nullptr));
    const auto failed = net::reply_user_exception(5, protocol::encoding_1_1, "::X", "why", false);
    const auto fr = test::reply_of(failed);
    EXPECT_FALSE(net::proxy_result(&fr));
    const auto garbage = test::ok_reply(5, test::encaps([](protocol::output_stream& os) { os.write_byte(1); }));
    const auto gr = test::reply_of(garbage);
    EXPECT_FALSE(net::proxy_result(&gr));
}

TEST(backend_pool, an_aliased_endpoint_connects_to_where_this_process_binds_it) {
    auto shards = test::owned_shards(1, [](net::runtime_config& c) {
        c.endpoint_aliases.push_back({*protocol::endpoint_from_string("tcp -h LocalHost -p 10000"),
                                      *protocol::endpoint_from_string("tcp -h 127.0.0.1 -p 10003")});
    });
    auto& pool = shards->at(0).backends();
    std::string failure;
    auto published = pool.get(proxy("IceStorm/TopicManager:tcp -h localhost -p 10000 -t 5000"), failure);
    auto bound = pool.get(proxy("IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10003"), failure);
    auto other_port = pool.get(proxy("IceStorm/TopicManager:tcp -h localhost -p 10001"), failure);
    auto other_transport = pool.get(proxy("IceStorm/TopicManager:ws -h localhost -p 10000"), failure);
    ASSERT_TRUE(published && bound && other_port && other_transport) << failure;
    EXPECT_EQ(published, bound) << "the published address (host compared without case) reaches the bound one";
    EXPECT_EQ(published->key().find("10000"), std::string::npos) << published->key();
    EXPECT_NE(published->key().find("127.0.0.1:10003"), std::string::npos) << published->key();
    EXPECT_NE(other_port, published) << "another port is not aliased";
    EXPECT_NE(other_transport, published) << "another transport is not aliased";
    EXPECT_EQ(pool.size(), 3u);
    pool.close_all();
    test::finish(*shards);
}
