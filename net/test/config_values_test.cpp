// The value parsers every configuration reader shares.
#include <moraine/net/config_values.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(config_values, endpoints_as_an_object_adapter_reads_them) {
    const auto bare = net::parse_endpoints("tcp", "f:1", "Glacier2.Server.Endpoints");
    ASSERT_EQ(bare.size(), 1u);
    EXPECT_EQ(bare[0].port, 0);   // ephemeral
    EXPECT_EQ(bare[0].host, "");  // every interface
    const auto loopback = net::parse_endpoints("tcp", "f:1", "Glacier2.Server.Endpoints", "127.0.0.1");
    EXPECT_EQ(loopback.at(0).host, "127.0.0.1");  // Ice.Default.Host
    EXPECT_TRUE(net::parse_endpoints("  ", "f:1", "k").empty());
    try {
        net::parse_endpoints("tcp -p fortytwo", "f:3", "Glacier2.Client.Endpoints");
        FAIL() << "a bad port must be refused";
    } catch (const net::config_error& e) {
        EXPECT_STREQ(e.what(), "f:3: Glacier2.Client.Endpoints: not a valid Ice endpoint list: 'tcp -p fortytwo'");
    }
}

TEST(config_values, proxy_takes_the_default_host) {
    EXPECT_EQ(net::parse_proxy("SessionManager:tcp -p 12010", "f:1", "k", "127.0.0.1").endpoints.at(0).host,
              "127.0.0.1");
    EXPECT_THROW(net::parse_proxy("", "f:1", "k"), net::config_error);
}

TEST(config_values, words_with_quotes_and_escaped_quotes) {
    EXPECT_EQ(net::split_words(R"(a "b c" 'd e')", "f:1", "k"), (std::vector<std::string>{"a", "b c", "d e"}));
    // Glacier2.Filter.Identity.Accept="a\"nother": the backslash keeps the quote in the word.
    EXPECT_EQ(net::split_words(R"("a\"nother" plain)", "f:1", "k"), (std::vector<std::string>{"a\"nother", "plain"}));
    EXPECT_EQ(net::split_words(R"('it\'s')", "f:1", "k"), (std::vector<std::string>{"it's"}));
    EXPECT_EQ(net::split_words(R"("back\slash")", "f:1", "k"), (std::vector<std::string>{"back\\slash"}));
    EXPECT_THROW(net::split_words(R"("open)", "f:1", "k"), net::config_error);
    EXPECT_THROW(net::split_words(R"("escaped at the end\")", "f:1", "k"), net::config_error);
}
