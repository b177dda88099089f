#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::to_hex;

TEST(output_stream, primitives) {
    output_stream out;
    out.write_byte(1);
    out.write_bool(true);
    out.write_short(0x1234);
    out.write_int(0x12345678);
    out.write_long(0x0123456789abcdefLL);
    out.write_float(1.0f);
    out.write_double(1.0);
    EXPECT_EQ(to_hex(out.view()), "01" "01" "3412" "78563412" "efcdab8967452301" "0000803f" "000000000000f03f");
}

TEST(output_stream, sizes_and_strings) {
    output_stream out;
    out.write_size(254);
    out.write_size(255);
    out.write_size(300);
    EXPECT_EQ(to_hex(out.view()), "fe" "ffff000000" "ff2c010000");
    output_stream s;
    s.write_string("hello");
    s.write_string("");
    EXPECT_EQ(to_hex(s.view()), "0568656c6c6f00");
}

TEST(output_stream, identity_facet_context) {
    output_stream out;
    out.write_identity({"router", "Glacier2"});
    out.write_facet("");
    out.write_facet("fac");
    out.write_context({{"k", "v"}});
    out.write_context({});
    EXPECT_EQ(to_hex(out.view()), "06726f757465720847" "6c616369657232" "00" "0103666163" "01016b0176" "00");
}

TEST(output_stream, message_and_encapsulation) {
    output_stream out;
    out.start_message(message_type::reply);
    out.write_int(15);
    out.write_byte(0);
    const auto at = out.start_encapsulation(encoding_1_0);
    EXPECT_EQ(out.encoding(), encoding_1_0);
    out.end_encapsulation(at);
    EXPECT_EQ(out.encoding(), encoding_1_1);
    EXPECT_EQ(out.end_message(), 25u);
    // callback vector "OK, void" but with a 1.0 encapsulation.
    EXPECT_EQ(to_hex(out.view()), "49636550010001000200190000000f00000000060000000100");
    output_stream e;
    e.write_empty_encapsulation(encoding_1_1);
    EXPECT_EQ(to_hex(e.view()), "060000000101");
    const auto taken = e.take();
    EXPECT_EQ(taken.size(), 6u);
}

TEST(output_stream, round_trips_through_input_stream) {
    output_stream out;
    out.write_string(std::string(1000, 'x'));
    out.write_int(-7);
    input_stream in(out.view());
    EXPECT_EQ(in.read_string().size(), 1000u);
    EXPECT_EQ(in.read_int(), -7);
    EXPECT_TRUE(in.ok());
}

}  // namespace
}  // namespace moraine::protocol
