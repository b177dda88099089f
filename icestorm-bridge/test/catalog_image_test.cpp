// The catalog image a takeover carries: what is written reads back the same, cut into parts or
// not, and bad bytes are refused with a reason instead of being half-read.
#include <moraine/icestorm_bridge/catalog_image.hpp>

#include <gtest/gtest.h>

using namespace moraine;
using icestorm_bridge::decode_catalog_image;
using icestorm_bridge::encode_catalog_image;
using icestorm_bridge::stored_catalog;

namespace {

protocol::proxy proxy_of(std::string_view text) {
    auto p = protocol::proxy_from_string(text);
    EXPECT_TRUE(p) << text;
    return p ? *p : protocol::proxy{};
}

stored_catalog sample() {
    stored_catalog c;
    c.topics = {"clock", "news"};
    c.links.push_back({"clock", {proxy_of("IceStorm/topic.remote:tcp -h 10.0.0.2 -p 10000"), "remote", 3,
                                 proxy_of("IceStorm/remote.link:tcp -h 10.0.0.2 -p 10001")}});
    // A session-local subscriber travels without endpoints; an external one with its proxy.
    c.subscribers.push_back({"clock", proxy_of("#session-cat-0000000/tick"), {{"reliability", "ordered"}}, true});
    c.subscribers.push_back({"news", proxy_of("reader -o:tcp -h 10.0.0.3 -p 7000"), {{"retryCount", "-1"}}, false});
    return c;
}

std::vector<std::byte> joined(const std::vector<std::vector<std::byte>>& parts) {
    std::vector<std::byte> all;
    for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
}

void expect_same(const stored_catalog& a, const stored_catalog& b) {
    EXPECT_EQ(a.topics, b.topics);
    ASSERT_EQ(a.links.size(), b.links.size());
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        EXPECT_EQ(a.links[i].topic, b.links[i].topic);
        EXPECT_EQ(a.links[i].link.name, b.links[i].link.name);
        EXPECT_EQ(a.links[i].link.cost, b.links[i].link.cost);
        EXPECT_EQ(a.links[i].link.topic, b.links[i].link.topic);
        EXPECT_EQ(a.links[i].link.link, b.links[i].link.link);
    }
    ASSERT_EQ(a.subscribers.size(), b.subscribers.size());
    for (std::size_t i = 0; i < a.subscribers.size(); ++i) {
        EXPECT_EQ(a.subscribers[i].topic, b.subscribers[i].topic);
        EXPECT_EQ(a.subscribers[i].proxy, b.subscribers[i].proxy);
        EXPECT_EQ(a.subscribers[i].qos, b.subscribers[i].qos);
        EXPECT_EQ(a.subscribers[i].session_local, b.subscribers[i].session_local);
    }
}

}  // namespace

TEST(catalog_image, round_trips_in_one_part_or_many) {
    const auto c = sample();
    const auto one = encode_catalog_image(c, 1 << 20);
    ASSERT_EQ(one.size(), 1u);
    expect_same(decode_catalog_image(one.front()), c);
    const auto many = encode_catalog_image(c, 16);  // 16-byte parts
    EXPECT_GT(many.size(), 5u);
    for (const auto& p : many) EXPECT_LE(p.size(), 16u);
    EXPECT_EQ(joined(many), one.front());
    expect_same(decode_catalog_image(joined(many)), c);
}

TEST(catalog_image, an_empty_catalog_is_one_part) {
    const auto parts = encode_catalog_image({}, 64);
    ASSERT_EQ(parts.size(), 1u);
    const auto back = decode_catalog_image(parts.front());
    EXPECT_TRUE(back.topics.empty() && back.links.empty() && back.subscribers.empty());
}

TEST(catalog_image, truncated_or_trailing_bytes_are_refused) {
    const auto bytes = encode_catalog_image(sample(), 1 << 20).front();
    for (std::size_t cut = 0; cut < bytes.size(); ++cut)
        EXPECT_THROW(decode_catalog_image(std::span(bytes.data(), cut)), std::invalid_argument) << "cut at " << cut;
    auto longer = bytes;
    longer.push_back(std::byte{0});
    EXPECT_THROW(decode_catalog_image(longer), std::invalid_argument);
    // A sequence count larger than the bytes left allocates nothing and is refused.
    const std::vector<std::byte> lie{std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0x7f}};
    EXPECT_THROW(decode_catalog_image(lie), std::invalid_argument);
}
