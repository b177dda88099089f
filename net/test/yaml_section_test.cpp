// yaml_section: reading Moraine's YAML. Checked: typed reads (bool, string, ranged integers,
// byte sizes with units, lists, endpoints), null meaning "the default", nested sections with
// dotted key paths, finish() refusing keys nobody read (a misspelt key stops start-up),
// duplicate keys, and errors naming FILE:LINE and the key path.
#include <moraine/net/config_error.hpp>
#include <moraine/net/yaml_section.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

const std::string file = "moraine.yaml";

std::string error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const net::config_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(yaml_section, typed_reads) {
    YAML::Node root = YAML::Load(
        "flag: true\n"
        "name: edge\n"
        "count: 12\n"
        "size: 16 MiB\n"
        "plain_size: 512\n"
        "items: [a, b]\n"
        "listen: tcp -h 127.0.0.1 -p 4063:ws -h 127.0.0.1 -p 4065\n"
        "nothing:\n");
    net::yaml_section s(root, "", file);
    bool flag = false;
    std::string name;
    int count = 0;
    std::size_t size = 0, plain = 0;
    s.read("flag", flag);
    s.read("name", name);
    s.read_int("count", 0, 100, count);
    s.read_size("size", size);
    s.read_size("plain_size", plain);
    EXPECT_TRUE(flag);
    EXPECT_EQ(name, "edge");
    EXPECT_EQ(count, 12);
    EXPECT_EQ(size, 16u << 20);
    EXPECT_EQ(plain, 512u);
    EXPECT_EQ(s.read_list("items"), (std::vector<std::string>{"a", "b"}));
    const auto eps = s.read_endpoints("listen");
    ASSERT_EQ(eps.size(), 2u);
    EXPECT_EQ(eps[1].port, 4065);
    int untouched = 9;
    s.read_int("nothing", 0, 100, untouched);
    EXPECT_EQ(untouched, 9) << "`key:` alone keeps the default";
    EXPECT_NO_THROW(s.finish());
}

TEST(yaml_section, finish_refuses_unread_keys_naming_line_and_path) {
    YAML::Node root = YAML::Load("limits:\n  known: 1\n  typo: 2\n");
    net::yaml_section top(root, "", file);
    auto limits = top.section("limits");
    int known = 0;
    limits.read_int("known", 0, 10, known);
    top.finish();
    const auto what = error_of([&] { limits.finish(); });
    EXPECT_NE(what.find("moraine.yaml:3"), std::string::npos) << what;
    EXPECT_NE(what.find("limits.typo"), std::string::npos) << what;
    EXPECT_NE(what.find("known"), std::string::npos) << "the message lists the known keys";
}

TEST(yaml_section, bad_values_and_duplicates_are_errors) {
    YAML::Node root = YAML::Load("n: 500\nw: many\nsz: 3 parsecs\n");
    net::yaml_section s(root, "", file);
    int n = 0;
    std::size_t sz = 0;
    EXPECT_NE(error_of([&] { s.read_int("n", 0, 100, n); }).find("n"), std::string::npos);
    EXPECT_FALSE(error_of([&] { s.read_int("w", 0, 100, n); }).empty());
    EXPECT_FALSE(error_of([&] { s.read_size("sz", sz); }).empty());
    YAML::Node dup = YAML::Load("a: 1\na: 2\n");
    EXPECT_NE(error_of([&] { net::yaml_section d(dup, "", file); }).find("duplicate key"), std::string::npos);
    YAML::Node list = YAML::Load("[1, 2]\n");
    EXPECT_NE(error_of([&] { net::yaml_section l(list, "top", file); }).find("mapping"), std::string::npos);
}

TEST(yaml_section, an_absent_section_reads_as_defaults) {
    YAML::Node root = YAML::Load("other: 1\n");
    net::yaml_section top(root, "", file);
    auto missing = top.section("tls");
    EXPECT_FALSE(missing.present());
    EXPECT_FALSE(missing.has("anything"));
    std::string v = "default";
    missing.read("anything", v);
    EXPECT_EQ(v, "default");
    EXPECT_NO_THROW(missing.finish());
}
