#include <moraine/session/routing_table.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using moraine::protocol::endpoint;
using moraine::protocol::identity;
using moraine::protocol::identity_view;
using moraine::protocol::proxy;
using moraine::session::routing_table;

proxy make_proxy(std::string name, std::int32_t port = 10000, std::string category = "") {
    proxy p;
    p.id = identity{std::move(name), std::move(category)};
    endpoint e;
    e.host = "127.0.0.1";
    e.port = port;
    p.endpoints.push_back(e);
    return p;
}

std::vector<std::string> names(const std::vector<proxy>& proxies) {
    std::vector<std::string> out;
    for (const auto& p : proxies) out.push_back(p.id.name);
    return out;
}

TEST(routing_table, finds_added_proxies_by_identity) {
    routing_table table;
    EXPECT_EQ(table.max_size(), 1000u);
    EXPECT_TRUE(table.add({make_proxy("hello", 1), make_proxy("hello", 2, "cat")}).empty());
    EXPECT_EQ(table.size(), 2u);
    ASSERT_NE(table.find({"hello", ""}), nullptr);
    EXPECT_EQ(table.find({"hello", ""})->endpoints.at(0).port, 1);
    ASSERT_NE(table.find({"hello", "cat"}), nullptr);
    EXPECT_EQ(table.find({"hello", "cat"})->endpoints.at(0).port, 2);
    EXPECT_EQ(table.find({"other", ""}), nullptr);
    EXPECT_EQ(table.find({"hello", "CAT"}), nullptr);  // exact comparison
}

TEST(routing_table, first_add_wins) {
    routing_table table;
    table.add({make_proxy("hello", 1)});
    table.add({make_proxy("hello", 2)});
    table.add({make_proxy("x", 3), make_proxy("x", 4)});
    EXPECT_EQ(table.size(), 2u);
    EXPECT_EQ(table.find({"hello", ""})->endpoints.at(0).port, 1);
    EXPECT_EQ(table.find({"x", ""})->endpoints.at(0).port, 3);
}

TEST(routing_table, strips_facet_mode_and_secure) {
    routing_table table;
    proxy p = make_proxy("hello");
    p.facet = "admin";
    p.mode = static_cast<std::uint8_t>(moraine::protocol::proxy_mode::batch_oneway);
    p.secure = true;
    p.adapter_id = "";
    table.add({p});
    const proxy* stored = table.find({"hello", ""});
    ASSERT_NE(stored, nullptr);
    EXPECT_EQ(stored->facet, "");
    EXPECT_EQ(stored->mode, 0);
    EXPECT_FALSE(stored->secure);
    EXPECT_EQ(stored->endpoints, p.endpoints);  // where to go is kept
}

TEST(routing_table, keeps_adapter_id_of_indirect_proxies) {
    routing_table table;
    proxy p;
    p.id = {"hello", ""};
    p.adapter_id = "HelloAdapter";
    table.add({p});
    ASSERT_NE(table.find({"hello", ""}), nullptr);
    EXPECT_EQ(table.find({"hello", ""})->adapter_id, "HelloAdapter");
}

TEST(routing_table, skips_nil_proxies) {
    routing_table table;
    EXPECT_TRUE(table.add({proxy{}, make_proxy("a")}).empty());
    EXPECT_EQ(table.size(), 1u);
    EXPECT_EQ(table.find({"", ""}), nullptr);
}

TEST(routing_table, evicts_least_recently_used_first) {
    routing_table table(3);
    EXPECT_TRUE(table.add({make_proxy("a"), make_proxy("b"), make_proxy("c")}).empty());
    ASSERT_NE(table.find({"a", ""}), nullptr);  // a is now the most recently used: b is the oldest
    auto evicted = table.add({make_proxy("d"), make_proxy("e")});
    EXPECT_EQ(names(evicted), (std::vector<std::string>{"b", "c"}));
    EXPECT_EQ(table.size(), 3u);
    EXPECT_EQ(table.find({"b", ""}), nullptr);
    EXPECT_EQ(table.find({"c", ""}), nullptr);
    EXPECT_NE(table.find({"a", ""}), nullptr);
    EXPECT_NE(table.find({"d", ""}), nullptr);
    EXPECT_NE(table.find({"e", ""}), nullptr);
}

TEST(routing_table, re_adding_refreshes_without_replacing) {
    routing_table table(2);
    table.add({make_proxy("a", 1), make_proxy("b")});
    table.add({make_proxy("a", 9)});  // refreshes a; b is now the oldest
    auto evicted = table.add({make_proxy("c")});
    EXPECT_EQ(names(evicted), std::vector<std::string>{"b"});
    EXPECT_EQ(table.find({"a", ""})->endpoints.at(0).port, 1);
}

TEST(routing_table, evicted_proxies_are_the_stored_ones) {
    routing_table table(1);
    proxy p = make_proxy("a");
    p.facet = "f";
    table.add({p});
    auto evicted = table.add({make_proxy("b")});
    ASSERT_EQ(evicted.size(), 1u);
    EXPECT_EQ(evicted[0].id, (identity{"a", ""}));
    EXPECT_EQ(evicted[0].facet, "");
}

TEST(routing_table, batch_larger_than_max_size_keeps_the_newest) {
    routing_table table(2);
    auto evicted = table.add({make_proxy("a"), make_proxy("b"), make_proxy("c"), make_proxy("d")});
    EXPECT_EQ(names(evicted), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(table.size(), 2u);
    EXPECT_NE(table.find({"c", ""}), nullptr);
    EXPECT_NE(table.find({"d", ""}), nullptr);
}

TEST(routing_table, entry_refreshed_in_same_batch_is_not_evicted) {
    routing_table table(2);
    table.add({make_proxy("a"), make_proxy("b")});  // LRU order: b (newest), a
    auto evicted = table.add({make_proxy("c"), make_proxy("a")});
    EXPECT_EQ(names(evicted), std::vector<std::string>{"b"});
    EXPECT_NE(table.find({"a", ""}), nullptr);
    EXPECT_NE(table.find({"c", ""}), nullptr);
}

TEST(routing_table, zero_max_size_is_unbounded) {
    routing_table table(0);
    std::vector<proxy> many;
    for (int i = 0; i < 5000; ++i) many.push_back(make_proxy("p" + std::to_string(i)));
    EXPECT_TRUE(table.add(many).empty());
    EXPECT_EQ(table.size(), 5000u);
    EXPECT_NE(table.find({"p0", ""}), nullptr);
}

TEST(routing_table, find_by_view_into_other_storage) {
    routing_table table;
    table.add({make_proxy("hello", 5, "cat")});
    std::string buffer = "cathello";  // e.g. strings borrowed from a request frame
    identity_view id{std::string_view(buffer).substr(3), std::string_view(buffer).substr(0, 3)};
    ASSERT_NE(table.find(id), nullptr);
    EXPECT_EQ(table.find(id)->endpoints.at(0).port, 5);
}

}  // namespace
