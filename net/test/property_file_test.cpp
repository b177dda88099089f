// property_file: Ice 3.7 property files. Checked: comments, trimming, escapes (\#, \=, \\, "\ "),
// overrides and unsetting, warnings for lines without a key or '=', and the typed getters
// (integers with ranges, Ice booleans, endpoints with Ice.Default.Host, words) whose errors
// name file, line and key.
#include <moraine/net/config_error.hpp>
#include <moraine/net/property_file.hpp>

#include <gtest/gtest.h>

#include <fstream>

using namespace moraine;

namespace {

net::property_file parse(std::string_view text, std::vector<std::string>* warnings_out = nullptr) {
    std::vector<std::string> warnings;
    auto props = net::parse_properties(text, "my.cfg", warnings);
    if (warnings_out) *warnings_out = warnings;
    return net::property_file("my.cfg", std::move(props));
}

std::string value(const net::property_file& p, std::string_view key) {
    const auto* v = p.find(key);
    return v ? *v : "<unset>";
}

}  // namespace

TEST(property_file, parses_comments_trimming_and_overrides) {
    const auto p = parse(
        "# a comment\n"
        "  A.Key  =  some value   # trailing comment\n"
        "B=1\n"
        "B=2\n"
        "C=x\n"
        "C=\n");
    EXPECT_EQ(value(p, "A.Key"), "some value");
    EXPECT_EQ(value(p, "B"), "2") << "a later line overrides";
    EXPECT_EQ(value(p, "C"), "<unset>") << "an empty value unsets";
    EXPECT_EQ(p.at("B"), "my.cfg:4");
    EXPECT_EQ(p.at("Missing"), "my.cfg");
}

TEST(property_file, honours_ice_escapes) {
    const auto p = parse(
        "Hash=a\\#b\n"
        "Eq\\=Key=v=w\n"
        "Slash=a\\\\b\n"
        "Space=\\ padded\\ \n"
        "Other=c:\\dir\n");
    EXPECT_EQ(value(p, "Hash"), "a#b");
    EXPECT_EQ(value(p, "Eq=Key"), "v=w") << "the first unescaped '=' ends the key";
    EXPECT_EQ(value(p, "Slash"), "a\\b");
    EXPECT_EQ(value(p, "Space"), " padded ");
    EXPECT_EQ(value(p, "Other"), "c:\\dir") << "other backslashes are kept";
}

TEST(property_file, lines_without_a_key_or_equals_are_warned_about) {
    std::vector<std::string> warnings;
    const auto p = parse("JustAKey\n=novalue\nGood=1\n", &warnings);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_NE(warnings[0].find("my.cfg:1"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[1].find("my.cfg:2"), std::string::npos) << warnings[1];
    EXPECT_EQ(value(p, "Good"), "1");
}

TEST(property_file, typed_getters_check_and_name_the_key) {
    const auto p = parse("N=+42\nBig=99999\nWord=abc\nFlag=0\nOn=7\n");
    int n = 0;
    p.read_int("N", 0, 100, n);
    EXPECT_EQ(n, 42);
    int unchanged = 5;
    p.read_int("Absent", 0, 100, unchanged);
    EXPECT_EQ(unchanged, 5);
    try {
        p.read_int("Big", 0, 100, n);
        FAIL() << "out of range accepted";
    } catch (const net::config_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("my.cfg:2"), std::string::npos) << what;
        EXPECT_NE(what.find("Big"), std::string::npos);
        EXPECT_NE(what.find("out of range"), std::string::npos);
    }
    EXPECT_THROW(p.read_int("Word", 0, 100, n), net::config_error);
    bool flag = true, on = false;
    p.read_bool("Flag", flag);
    p.read_bool("On", on);
    EXPECT_FALSE(flag);
    EXPECT_TRUE(on) << "Ice booleans: anything but 0 is true";
}

TEST(property_file, endpoints_take_the_default_host_and_words_split) {
    const auto p = parse("Ice.Default.Host=10.1.1.1\nE=tcp -p 4063:ssl -h 127.0.0.1 -p 4064\nW=a b  c\n");
    const auto eps = p.endpoints("E");
    ASSERT_EQ(eps.size(), 2u);
    EXPECT_EQ(eps[0].host, "10.1.1.1");
    EXPECT_EQ(eps[0].port, 4063);
    EXPECT_EQ(eps[1].host, "127.0.0.1");
    EXPECT_TRUE(p.endpoints("None").empty());
    EXPECT_EQ(p.words("W"), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(property_file, read_property_file_reads_a_file_and_refuses_a_missing_one) {
    const std::string path = ::testing::TempDir() + "property_file_test.cfg";
    {
        std::ofstream f(path);
        f << "X=1\n";
    }
    std::vector<std::string> warnings;
    const auto props = net::read_property_file(path, warnings);
    ASSERT_TRUE(props.contains("X"));
    EXPECT_EQ(props.at("X").value, "1");
    EXPECT_EQ(props.at("X").line, 1u);
    EXPECT_THROW(net::read_property_file(path + ".missing", warnings), net::config_error);
}
