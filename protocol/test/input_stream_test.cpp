#include <moraine/protocol/input_stream.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;

TEST(input_stream, primitives_little_endian) {
    const auto b = from_hex("01" "02" "3412" "78563412" "efcdab8967452301" "0000803f" "000000000000f03f");
    input_stream in(b);
    EXPECT_EQ(in.read_byte(), 1);
    EXPECT_TRUE(in.read_bool());
    EXPECT_EQ(in.read_short(), 0x1234);
    EXPECT_EQ(in.read_int(), 0x12345678);
    EXPECT_EQ(in.read_long(), 0x0123456789abcdefLL);
    EXPECT_EQ(in.read_float(), 1.0f);
    EXPECT_EQ(in.read_double(), 1.0);
    EXPECT_TRUE(in.ok());
    EXPECT_EQ(in.remaining(), 0u);
}

TEST(input_stream, sizes) {
    const auto b = from_hex("00" "fe" "ff2c010000" "ffffffffff");
    input_stream in(b);
    EXPECT_EQ(in.read_size(), 0);
    EXPECT_EQ(in.read_size(), 254);
    EXPECT_EQ(in.read_size(), 300);  // spec §1 example
    EXPECT_EQ(in.read_size(), 0);
    EXPECT_EQ(in.error(), errc::negative_size);
}

TEST(input_stream, strings_borrow_the_input) {
    const auto b = from_hex("0568656c6c6f" "00");
    input_stream in(b);
    const auto s = in.read_string();
    EXPECT_EQ(s, "hello");
    EXPECT_EQ(static_cast<const void*>(s.data()), static_cast<const void*>(b.data() + 1));
    EXPECT_EQ(in.read_string(), "");
    EXPECT_TRUE(in.ok());
}

TEST(input_stream, errors_are_sticky_and_keep_the_first_cause) {
    input_stream short_in(test::lasting_hex("0a6162"));
    EXPECT_EQ(short_in.read_string(), "");
    EXPECT_EQ(short_in.error(), errc::out_of_bounds);
    EXPECT_EQ(short_in.position(), 1u);  // nothing consumed after the failure
    EXPECT_EQ(short_in.read_byte(), 0);
    EXPECT_EQ(short_in.read_int(), 0);
    short_in.fail(errc::bad_proxy);
    EXPECT_EQ(short_in.error(), errc::out_of_bounds);
}

TEST(input_stream, identity_is_name_then_category) {
    const auto b = from_hex("06726f75746572" "08476c616369657232");  // spec §1
    input_stream in(b);
    const auto id = in.read_identity();
    EXPECT_EQ(id.name, "router");
    EXPECT_EQ(id.category, "Glacier2");
}

TEST(input_stream, facet) {
    input_stream none(test::lasting_hex("00"));
    EXPECT_EQ(none.read_facet(), "");
    EXPECT_TRUE(none.ok());
    const auto one_b = from_hex("0103666163");
    input_stream one(one_b);
    EXPECT_EQ(one.read_facet(), "fac");
    input_stream two(test::lasting_hex("0201610162"));
    two.read_facet();
    EXPECT_EQ(two.error(), errc::bad_facet);
}

TEST(input_stream, context) {
    const auto b = from_hex("02045f667764016f016b0176" "aa");  // forward-context {_fwd:o, k:v}
    input_stream in(b);
    const auto ctx = in.read_context();
    ASSERT_TRUE(in.ok());
    ASSERT_EQ(ctx.entries.size(), 2u);
    EXPECT_EQ(ctx.entries[0].first, "_fwd");
    EXPECT_EQ(ctx.find("k"), "v");
    EXPECT_EQ(ctx.raw.size(), 12u);
    EXPECT_EQ(in.remaining(), 1u);
}

TEST(input_stream, huge_context_count_fails_before_allocating) {
    // 2^31 - 1 pairs announced, 3 bytes present: must fail at once (ASan would flag a huge reserve).
    const auto b = from_hex("ffffffff7f" "016b01");
    input_stream in(b);
    const auto ctx = in.read_context();
    EXPECT_EQ(in.error(), errc::out_of_bounds);
    EXPECT_TRUE(ctx.entries.empty());
}

TEST(input_stream, encapsulation) {
    const auto b = from_hex("0a000000" "0101" "03626f62" "ff");
    input_stream in(b);
    const auto e = in.read_encapsulation();
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(e.encoding, encoding_1_1);
    EXPECT_EQ(e.bytes.size(), 10u);
    EXPECT_EQ(test::to_hex(e.payload()), "03626f62");
    EXPECT_EQ(in.remaining(), 1u);
}

TEST(input_stream, bad_encapsulations) {
    input_stream small(test::lasting_hex("05000000" "0101"));
    small.read_encapsulation();
    EXPECT_EQ(small.error(), errc::bad_encapsulation);
    input_stream negative(test::lasting_hex("ffffffff" "0101"));
    negative.read_encapsulation();
    EXPECT_EQ(negative.error(), errc::bad_encapsulation);
    input_stream longer(test::lasting_hex("0b000000" "0101" "03626f62"));
    longer.read_encapsulation();
    EXPECT_EQ(longer.error(), errc::out_of_bounds);
    input_stream huge(test::lasting_hex("ffffff7f" "0101"));
    huge.skip_encapsulation();
    EXPECT_EQ(huge.error(), errc::out_of_bounds);
    input_stream version(test::lasting_hex("06000000" "0102"));
    version.read_encapsulation();
    EXPECT_EQ(version.error(), errc::unsupported_encoding);
    input_stream truncated(test::lasting_hex("060000"));
    truncated.read_encapsulation();
    EXPECT_EQ(truncated.error(), errc::out_of_bounds);
}

TEST(input_stream, read_bytes_and_rest) {
    const auto b = from_hex("010203");
    input_stream in(b);
    EXPECT_EQ(in.read_bytes(2).size(), 2u);
    EXPECT_EQ(in.rest().size(), 1u);
    EXPECT_TRUE(in.read_bytes(5).empty());
    EXPECT_EQ(in.error(), errc::out_of_bounds);
}

}  // namespace
}  // namespace moraine::protocol
