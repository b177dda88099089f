#include <moraine/protocol/encapsulation.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

TEST(encapsulation, versions) {
    EXPECT_EQ(encoding_version{}, encoding_1_1);  // Ice 3.7's default encoding
    EXPECT_NE(encoding_1_0, encoding_1_1);
}

TEST(encapsulation, payload_skips_the_six_byte_header) {
    // routed-twoway sayHello params: size 10, encoding 1.1, string "bob" (spec §4)
    const auto b = test::lasting_hex("0a000000" "0101" "03626f62");
    input_stream in(b);
    const encapsulation_view e = in.read_encapsulation();
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(e.bytes.size(), 10u);
    EXPECT_EQ(test::to_hex(e.payload()), "03626f62");
}

TEST(encapsulation, written_size_counts_itself_and_the_version) {
    output_stream out;
    const auto at = out.start_encapsulation(encoding_1_1);
    out.write_string("bob");
    out.end_encapsulation(at);
    EXPECT_EQ(test::to_hex(out.view()), "0a000000" "0101" "03626f62");
}

}  // namespace
}  // namespace moraine::protocol
