#include <moraine/protocol/identity.hpp>

#include <gtest/gtest.h>
#include <unordered_map>
#include <unordered_set>

namespace moraine::protocol {
namespace {

TEST(identity, to_string_plain) {
    EXPECT_EQ(identity_to_string({"hello", ""}), "hello");
    EXPECT_EQ(identity_to_string({"router", "Glacier2"}), "Glacier2/router");
}

TEST(identity, to_string_escapes) {
    EXPECT_EQ(identity_to_string({"a/b", "c"}), "c/a\\/b");
    EXPECT_EQ(identity_to_string({"q\"s'b\\", ""}), "q\\\"s\\'b\\\\");
    EXPECT_EQ(identity_to_string({"t\tn\nr\r", ""}), "t\\tn\\nr\\r");
    EXPECT_EQ(identity_to_string({std::string("\x01\x7f", 2), ""}), "\\u0001\\u007f");
    EXPECT_EQ(identity_to_string({"h\xc3\xa9", ""}), "h\xc3\xa9");  // UTF-8 kept as is
    // A real session category (callback-adapter vector) has a backslash.
    EXPECT_EQ(identity_to_string({"dummy", "!U*en}CTFygZy\\P65tQZ"}), "!U*en}CTFygZy\\\\P65tQZ/dummy");
}

TEST(identity, from_string_inverts_to_string) {
    const identity cases[] = {
        {"hello", ""}, {"router", "Glacier2"}, {"a/b", "c/d"}, {"q\"s'b\\", "x"},
        {"t\tn\nr\r\b\f", ""}, {std::string("\x01\x7f", 2), "c"}, {"dummy", "!U*en}CTFygZy\\P65tQZ"},
        {"h\xc3\xa9", "\xe2\x82\xac"},
    };
    for (const auto& id : cases) {
        const auto s = identity_to_string(id.view());
        const auto back = identity_from_string(s);
        ASSERT_TRUE(back) << s;
        EXPECT_EQ(*back, id) << s;
    }
}

TEST(identity, from_string_escapes) {
    EXPECT_EQ(identity_from_string("\\u00e9")->name, "\xc3\xa9");
    EXPECT_EQ(identity_from_string("\\U0001F600")->name, "\xf0\x9f\x98\x80");
    EXPECT_EQ(identity_from_string("\\x41\\101")->name, "AA");
}

TEST(identity, from_string_errors) {
    EXPECT_FALSE(identity_from_string(""));
    EXPECT_FALSE(identity_from_string("cat/"));  // empty name
    EXPECT_FALSE(identity_from_string("a/b/c"));
    EXPECT_FALSE(identity_from_string("bad\\"));
    EXPECT_FALSE(identity_from_string("bad\\q"));
    EXPECT_FALSE(identity_from_string("bad\\u12"));
    EXPECT_FALSE(identity_from_string("bad\\uD800"));
    EXPECT_FALSE(identity_from_string("tab\there"));
}

TEST(identity, hash_and_equal_are_transparent) {
    std::unordered_map<identity, int, identity_hash, identity_equal> m;
    m[{"hello", ""}] = 1;
    m[{"router", "Glacier2"}] = 2;
    const std::string name = "router", cat = "Glacier2";
    const auto it = m.find(identity_view{name, cat});
    ASSERT_NE(it, m.end());
    EXPECT_EQ(it->second, 2);
    EXPECT_EQ(m.find(identity_view{"Glacier2", "router"}), m.end());
    EXPECT_EQ(identity_hash{}(identity{"a", "b"}), identity_hash{}(identity_view{"a", "b"}));
    EXPECT_NE(identity_hash{}(identity_view{"a", "b"}), identity_hash{}(identity_view{"b", "a"}));
}

TEST(identity, ordering_and_conversion) {
    EXPECT_LT((identity{"a", "x"}), (identity{"b", "a"}));
    const identity id = identity::from({"n", "c"});
    EXPECT_EQ(id.view(), (identity_view{"n", "c"}));
}

}  // namespace
}  // namespace moraine::protocol
