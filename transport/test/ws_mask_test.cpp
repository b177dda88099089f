// apply_mask against the byte-by-byte definition (RFC 6455 §5.3); random keys.
#include <moraine/transport/ws_mask.hpp>

#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

#include <set>

namespace moraine::transport {
namespace {

TEST(ws_mask, matches_the_definition_at_every_phase_and_length) {
    const ws_mask_key key{std::byte{0x64}, std::byte{0x56}, std::byte{0x64}, std::byte{0xdf}};
    for (unsigned phase = 0; phase < 4; ++phase) {
        for (std::size_t n = 0; n < 40; ++n) {
            auto data = test::pattern(n, phase);
            auto expected = data;
            for (std::size_t i = 0; i < n; ++i) expected[i] ^= key[(phase + i) % 4];
            EXPECT_EQ(apply_mask(data, key, phase), (phase + n) % 4);
            EXPECT_EQ(data, expected) << "phase " << phase << " length " << n;
        }
    }
}

TEST(ws_mask, masking_in_pieces_equals_masking_at_once) {
    const ws_mask_key key{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
    auto whole = test::pattern(101);
    auto pieces = whole;
    apply_mask(whole, key, 0);
    unsigned phase = 0;
    for (std::size_t at = 0; at < pieces.size(); at += 7)
        phase = apply_mask(std::span(pieces).subspan(at, std::min<std::size_t>(7, pieces.size() - at)), key, phase);
    EXPECT_EQ(pieces, whole);
}

TEST(ws_mask, the_golden_frame_unmasks_to_its_message) {
    auto frame = test::hex(test::ice_isa_frame_hex);
    const ws_mask_key key{frame[2], frame[3], frame[4], frame[5]};
    auto payload = std::span(frame).subspan(6);
    apply_mask(payload, key, 0);
    EXPECT_EQ(test::to_hex(payload), test::ice_isa_message_hex);
}

TEST(ws_mask, random_keys_differ) {
    std::set<std::array<std::byte, 4>> keys;
    for (int i = 0; i < 200; ++i) keys.insert(random_mask_key());  // crosses the 64-key pool refill
    EXPECT_GT(keys.size(), 195u);
}

}  // namespace
}  // namespace moraine::transport
