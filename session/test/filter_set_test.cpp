#include <moraine/session/filter_set.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using moraine::protocol::endpoint;
using moraine::protocol::identity;
using moraine::protocol::proxy;
using moraine::session::filter_config;
using moraine::session::filter_set;
using moraine::session::validate_address_rules;

endpoint tcp(std::string host, std::int32_t port) {
    endpoint e;
    e.host = std::move(host);
    e.port = port;
    return e;
}

proxy at(std::vector<endpoint> endpoints) {
    proxy p;
    p.id = {"hello", ""};
    p.endpoints = std::move(endpoints);
    return p;
}

proxy at(std::string host, std::int32_t port = 10000) { return at({tcp(std::move(host), port)}); }

filter_set address_filter(std::string accept, std::string reject = "") {
    filter_config cfg;
    cfg.address_accept = std::move(accept);
    cfg.address_reject = std::move(reject);
    return filter_set(cfg, "alice");
}

bool accepts(const std::string& rules, std::string host, std::int32_t port = 10000) {
    return address_filter(rules).accepts_proxy(at(std::move(host), port));
}

std::string rule_error(std::string_view rules) {
    try {
        validate_address_rules(rules);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "valid";
}

// --- rule syntax -------------------------------------------------------------------------------

TEST(address_rules, valid_rules) {
    for (const char* rules :
         {"", "   ", "127.0.0.1", "127.0.0.1:4063", "*", "*:4063", "10.0.[1-3].*", "192.168.[1,2,5-7].10:[4000-4100,5000]",
          "*.zeroc.com", "host[1-3].example.com:[80,443]", "a   b\tc", "h:1,2,5-9", "h:[7]", "**.x", "h:65535"})
        EXPECT_EQ(rule_error(rules), "valid") << rules;
}

TEST(address_rules, wildcard_port_is_expected_number) {
    EXPECT_EQ(rule_error("127.0.0.1:*"), "rule '127.0.0.1:*': expected number");
}

TEST(address_rules, invalid_rules_name_rule_and_reason) {
    EXPECT_EQ(rule_error("ok host:"), "rule 'host:': expected number");
    EXPECT_EQ(rule_error(":4063"), "rule ':4063': expected an address before ':'");
    EXPECT_EQ(rule_error("10.[1-2.3"), "rule '10.[1-2.3': unclosed group");
    EXPECT_EQ(rule_error("10.[].1"), "rule '10.[].1': empty group");
    EXPECT_EQ(rule_error("10.[1-*]"), "rule '10.[1-*]': wildcards not permitted in groups");
    EXPECT_EQ(rule_error("10.[1[2]]"), "rule '10.[1[2]]': unexpected '[' in group");
    EXPECT_EQ(rule_error("a]b"), "rule 'a]b': ']' without '['");
    EXPECT_EQ(rule_error("10.[3-1]"), "rule '10.[3-1]': range lower bound is greater than its upper bound");
    EXPECT_EQ(rule_error("10.[a]"), "rule '10.[a]': expected number");
    EXPECT_EQ(rule_error("10.[1;2]"), "rule '10.[1;2]': unexpected character ';'");
    EXPECT_EQ(rule_error("h:[1,2"), "rule 'h:[1,2': unclosed group");
    EXPECT_EQ(rule_error("h:[1,2]x"), "rule 'h:[1,2]x': unexpected text after ']'");
    EXPECT_EQ(rule_error("h:[]"), "rule 'h:[]': empty group");
    EXPECT_EQ(rule_error("h:70000"), "rule 'h:70000': port 70000 out of range");
    EXPECT_EQ(rule_error("h:1,,2"), "rule 'h:1,,2': expected number");
    EXPECT_EQ(rule_error("h:1-"), "rule 'h:1-': expected number");
    EXPECT_EQ(rule_error("h:1x"), "rule 'h:1x': unexpected character 'x'");
    EXPECT_EQ(rule_error("h:12345678901"), "rule 'h:12345678901': number too large");
}

TEST(address_rules, bad_rule_throws_from_filter_set) {
    filter_config cfg;
    cfg.address_reject = "127.0.0.1:*";
    EXPECT_THROW(filter_set(cfg, "alice"), std::invalid_argument);
}

// --- address matching --------------------------------------------------------------------------

TEST(address_rules, literal_must_match_whole_host) {
    EXPECT_TRUE(accepts("127.0.0.1", "127.0.0.1"));
    EXPECT_FALSE(accepts("127.0.0.1", "127.0.0.10"));
    EXPECT_FALSE(accepts("127.0.0.1", "127.0.0.1.evil.com"));
    EXPECT_FALSE(accepts("127.0.0.1", "1127.0.0.1"));
}

TEST(address_rules, host_names_compare_case_insensitively) {
    EXPECT_TRUE(accepts("Backend.Example.COM", "backend.example.com"));
    EXPECT_TRUE(accepts("*.example.com", "API.EXAMPLE.com"));
}

TEST(address_rules, wildcard_matches_any_run) {
    EXPECT_TRUE(accepts("*", "anything.at.all"));
    EXPECT_TRUE(accepts("*.example.com", "a.b.example.com"));
    EXPECT_FALSE(accepts("*.example.com", "example.com"));
    EXPECT_FALSE(accepts("*.example.com", "a.example.com.evil"));
    EXPECT_TRUE(accepts("host*", "host"));
    EXPECT_TRUE(accepts("host*", "hostname"));
    EXPECT_TRUE(accepts("h*t", "ht"));
    EXPECT_TRUE(accepts("h*t", "host"));
    EXPECT_FALSE(accepts("h*t", "hosts"));
    EXPECT_TRUE(accepts("*a*b*", "xaybz"));
    EXPECT_FALSE(accepts("*a*b*", "xbyaz"));
    EXPECT_TRUE(accepts("10.*.*.1", "10.20.30.1"));
    EXPECT_TRUE(accepts("*ab", "aab"));  // needs backtracking past the first "a"
}

TEST(address_rules, groups_match_whole_numbers) {
    EXPECT_TRUE(accepts("10.0.0.[1-3]", "10.0.0.2"));
    EXPECT_FALSE(accepts("10.0.0.[1-3]", "10.0.0.12"));
    EXPECT_FALSE(accepts("10.0.0.[1-3]", "10.0.0.4"));
    EXPECT_TRUE(accepts("192.168.[1,2,5-7].10", "192.168.6.10"));
    EXPECT_FALSE(accepts("192.168.[1,2,5-7].10", "192.168.3.10"));
    EXPECT_TRUE(accepts("host[1-3].example.com", "host2.example.com"));
    EXPECT_FALSE(accepts("host[1-3].example.com", "host2a.example.com"));
    EXPECT_FALSE(accepts("host[1-3]", "host"));
    EXPECT_TRUE(accepts("[10-20].0.0.1", "15.0.0.1"));
    EXPECT_TRUE(accepts("[1-3]*", "2x"));
    EXPECT_FALSE(accepts("[1-3]*", "12"));
}

TEST(address_rules, group_after_wildcard_takes_a_whole_digit_run) {
    EXPECT_TRUE(accepts("*[1-3]", "a2"));
    EXPECT_FALSE(accepts("*[1-3]", "a12"));  // never the "2" inside "12"
    EXPECT_TRUE(accepts("*[1-3].x", "9.2.x"));
    EXPECT_TRUE(accepts("1*[2]", "12"));  // the run may start right where `*` starts
}

TEST(address_rules, port_rules) {
    EXPECT_TRUE(accepts("127.0.0.1:4063", "127.0.0.1", 4063));
    EXPECT_FALSE(accepts("127.0.0.1:4063", "127.0.0.1", 4064));
    EXPECT_TRUE(accepts("*:[4000-4100,5000]", "h", 4050));
    EXPECT_TRUE(accepts("*:[4000-4100,5000]", "h", 5000));
    EXPECT_FALSE(accepts("*:[4000-4100,5000]", "h", 4101));
    EXPECT_TRUE(accepts("*:1,2,5-9", "h", 7));
    EXPECT_TRUE(accepts("127.0.0.1", "127.0.0.1", 1));  // no port = any port
}

TEST(address_rules, several_rules_any_may_match) {
    EXPECT_TRUE(accepts("10.0.0.1 10.0.0.2:80", "10.0.0.2", 80));
    EXPECT_FALSE(accepts("10.0.0.1 10.0.0.2:80", "10.0.0.2", 81));
    EXPECT_TRUE(accepts("10.0.0.1 10.0.0.2:80", "10.0.0.1", 81));
}

TEST(address_rules, many_wildcards_on_a_long_host_stay_fast) {
    std::string host(250, 'a');
    auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(accepts("*a*a*a*a*a*a*a*a*a*a*b", host));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// --- accept / reject combination (docs/glacier2.md §7) -----------------------------------------

TEST(filter_set, no_rules_accept_everything) {
    filter_set f(filter_config{}, "alice");
    EXPECT_TRUE(f.accepts_proxy(at("1.2.3.4")));
    EXPECT_TRUE(f.accepts_proxy(at(std::vector<endpoint>{})));
    EXPECT_TRUE(f.accepts_proxy(at(std::string(1000, 'h'))));
    EXPECT_TRUE(filter_set().accepts_proxy(at("1.2.3.4")));
}

TEST(filter_set, only_accept_rejects_unmatched) {
    auto f = address_filter("127.0.0.1");
    EXPECT_TRUE(f.accepts_proxy(at("127.0.0.1")));
    EXPECT_FALSE(f.accepts_proxy(at("10.0.0.1")));
    EXPECT_FALSE(f.accepts_proxy(at(std::vector<endpoint>{})));  // indirect: no address to accept
}

TEST(filter_set, only_reject_accepts_unmatched) {
    auto f = address_filter("", "127.0.0.1");
    EXPECT_FALSE(f.accepts_proxy(at("127.0.0.1")));
    EXPECT_TRUE(f.accepts_proxy(at("10.0.0.1")));
    EXPECT_TRUE(f.accepts_proxy(at(std::vector<endpoint>{})));
}

TEST(filter_set, both_must_match_accept_and_not_reject) {
    auto f = address_filter("10.0.*.*", "10.0.0.[1-5]");
    EXPECT_TRUE(f.accepts_proxy(at("10.0.0.6")));
    EXPECT_TRUE(f.accepts_proxy(at("10.0.7.1")));
    EXPECT_FALSE(f.accepts_proxy(at("10.0.0.3")));
    EXPECT_FALSE(f.accepts_proxy(at("11.0.0.6")));
    EXPECT_FALSE(f.accepts_proxy(at(std::vector<endpoint>{})));
}

TEST(filter_set, every_endpoint_is_checked) {
    auto accept_only = address_filter("10.*");
    EXPECT_TRUE(accept_only.accepts_proxy(at({tcp("10.0.0.1", 1), tcp("10.0.0.2", 2)})));
    EXPECT_FALSE(accept_only.accepts_proxy(at({tcp("10.0.0.1", 1), tcp("127.0.0.1", 2)})));
    auto reject_only = address_filter("", "127.0.0.1");
    EXPECT_FALSE(reject_only.accepts_proxy(at({tcp("10.0.0.1", 1), tcp("127.0.0.1", 2)})));
    EXPECT_FALSE(reject_only.accepts_proxy(at({tcp("127.0.0.1", 2), tcp("10.0.0.1", 1)})));
}

TEST(filter_set, endpoints_without_host_match_no_rule) {
    endpoint any_host = tcp("", 4000);
    endpoint opaque;
    opaque.type = 99;
    EXPECT_FALSE(address_filter("*").accepts_proxy(at({any_host})));
    EXPECT_FALSE(address_filter("*").accepts_proxy(at({opaque})));
    EXPECT_TRUE(address_filter("", "*").accepts_proxy(at({any_host})));
}

TEST(filter_set, other_endpoint_types_are_matched_too) {
    endpoint ssl = tcp("10.0.0.1", 4064);
    ssl.type = static_cast<std::int16_t>(moraine::protocol::endpoint_type::ssl);
    endpoint ws = tcp("10.0.0.1", 80);
    ws.type = static_cast<std::int16_t>(moraine::protocol::endpoint_type::ws);
    EXPECT_FALSE(address_filter("", "10.0.0.1").accepts_proxy(at({ssl})));
    EXPECT_FALSE(address_filter("", "10.0.0.1:80").accepts_proxy(at({ws})));
}

TEST(filter_set, oversized_host_is_rejected_when_any_rule_is_set) {
    std::string huge = std::string(300, 'a') + ".example.com";
    EXPECT_FALSE(address_filter("", "127.0.0.1").accepts_proxy(at(huge)));
    EXPECT_FALSE(address_filter("*").accepts_proxy(at(huge)));
}

TEST(filter_set, proxy_size_max) {
    proxy p = at("127.0.0.1", 4063);
    std::size_t size = moraine::protocol::proxy_to_string(p).size();
    ASSERT_GT(size, 0u);
    filter_config cfg;
    cfg.proxy_size_max = size;
    EXPECT_TRUE(filter_set(cfg, "alice").accepts_proxy(p));
    cfg.proxy_size_max = size - 1;
    EXPECT_FALSE(filter_set(cfg, "alice").accepts_proxy(p));
    cfg.address_accept = "127.0.0.1";  // both conditions apply
    cfg.proxy_size_max = size;
    EXPECT_TRUE(filter_set(cfg, "alice").accepts_proxy(p));
    EXPECT_FALSE(filter_set(cfg, "alice").accepts_proxy(at("10.0.0.1", 4063)));
}

// --- request filters ---------------------------------------------------------------------------

TEST(filter_set, no_lists_accept_every_request) {
    filter_set f(filter_config{}, "alice");
    EXPECT_TRUE(f.accepts_request({"hello", ""}, ""));
    EXPECT_TRUE(f.accepts_request({"x", "y"}, "adapter"));
}

TEST(filter_set, category_accept) {
    filter_config cfg;
    cfg.category_accept = {"IceStorm", "cb"};
    filter_set f(cfg, "alice");
    EXPECT_TRUE(f.accepts_request({"TopicManager", "IceStorm"}, ""));
    EXPECT_TRUE(f.accepts_request({"x", "cb"}, ""));
    EXPECT_FALSE(f.accepts_request({"hello", ""}, ""));
    EXPECT_FALSE(f.accepts_request({"hello", "icestorm"}, ""));  // exact
}

TEST(filter_set, identity_accept) {
    filter_config cfg;
    cfg.identity_accept = {identity{"hello", ""}, identity{"router", "Glacier2"}};
    filter_set f(cfg, "alice");
    EXPECT_TRUE(f.accepts_request({"hello", ""}, ""));
    EXPECT_TRUE(f.accepts_request({"router", "Glacier2"}, ""));
    EXPECT_FALSE(f.accepts_request({"hello", "x"}, ""));
    EXPECT_FALSE(f.accepts_request({"router", ""}, ""));
}

TEST(filter_set, adapter_id_accept) {
    filter_config cfg;
    cfg.adapter_id_accept = {"HelloAdapter"};
    filter_set f(cfg, "alice");
    EXPECT_TRUE(f.accepts_request({"hello", ""}, "HelloAdapter"));
    EXPECT_FALSE(f.accepts_request({"hello", ""}, "Other"));
    // A direct proxy carries no adapter id, so the adapter-id list does not judge it
    // (glacier2router 3.7.8 lets it through: interop filter_adapter_id_direct_proxy).
    EXPECT_TRUE(f.accepts_request({"hello", ""}, ""));
    cfg.category_accept = {"IceStorm"};
    filter_set both(cfg, "alice");
    EXPECT_FALSE(both.accepts_request({"hello", ""}, ""));  // the category list still judges it
    EXPECT_TRUE(both.accepts_request({"hello", ""}, "HelloAdapter"));
}

TEST(filter_set, any_non_empty_list_may_admit) {
    filter_config cfg;
    cfg.category_accept = {"IceStorm"};
    cfg.identity_accept = {identity{"hello", ""}};
    cfg.adapter_id_accept = {"A"};
    filter_set f(cfg, "alice");
    EXPECT_TRUE(f.accepts_request({"TopicManager", "IceStorm"}, ""));
    EXPECT_TRUE(f.accepts_request({"hello", ""}, ""));
    EXPECT_TRUE(f.accepts_request({"other", ""}, "A"));
    EXPECT_FALSE(f.accepts_request({"other", ""}, "B"));
}

TEST(filter_set, accept_user_adds_the_users_category) {
    filter_config cfg;
    cfg.category_accept_user = 1;
    filter_set one(cfg, "alice");
    EXPECT_EQ(one.categories(), std::vector<std::string>{"alice"});
    EXPECT_TRUE(one.accepts_request({"x", "alice"}, ""));
    EXPECT_FALSE(one.accepts_request({"x", "bob"}, ""));  // the list is now non-empty

    cfg.category_accept = {"IceStorm"};
    cfg.category_accept_user = 2;
    filter_set two(cfg, "alice");
    EXPECT_EQ(two.categories(), (std::vector<std::string>{"IceStorm", "_alice"}));
    EXPECT_TRUE(two.accepts_request({"x", "_alice"}, ""));
    EXPECT_FALSE(two.accepts_request({"x", "alice"}, ""));

    filter_set no_user(cfg, "");
    EXPECT_EQ(no_user.categories(), std::vector<std::string>{"IceStorm"});
}

TEST(filter_set, session_control_edits_apply) {
    filter_set f(filter_config{}, "alice");
    EXPECT_TRUE(f.accepts_request({"hello", ""}, ""));
    f.categories().push_back("cat");
    EXPECT_FALSE(f.accepts_request({"hello", ""}, ""));
    EXPECT_TRUE(f.accepts_request({"hello", "cat"}, ""));
    f.identities().push_back({"hello", ""});
    EXPECT_TRUE(f.accepts_request({"hello", ""}, ""));
    f.categories().clear();
    f.identities().clear();
    f.adapter_ids().push_back("A");
    EXPECT_FALSE(f.accepts_request({"hello", "cat"}, "B"));
    EXPECT_TRUE(f.accepts_request({"hello", "cat"}, "A"));
    EXPECT_TRUE(f.accepts_request({"hello", "cat"}, ""));  // direct: not the adapter list's to judge
}

}  // namespace
