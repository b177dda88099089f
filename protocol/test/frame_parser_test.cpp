#include <moraine/protocol/error.hpp>
#include <moraine/protocol/frame_parser.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>
#include <map>

namespace moraine::protocol {
namespace {

using test::from_hex;

const std::map<std::string, message_type> type_names = {
    {"request", message_type::request},
    {"batchRequest", message_type::batch_request},
    {"reply", message_type::reply},
    {"validateConnection", message_type::validate_connection},
    {"closeConnection", message_type::close_connection},
};

boost::system::error_code parse_error(std::string_view hex, limits lim = {}) {
    const auto b = from_hex(hex);
    boost::system::error_code ec;
    EXPECT_FALSE(parse_frame(b, lim, ec));
    return ec;
}

TEST(frame_parser, every_captured_message_parses_with_its_header_fields) {
    std::size_t n = 0;
    for (const auto& name : test::vector_names()) {
        for (const auto& r : test::load_vectors(name)) {
            if (test::has(r, "event")) continue;
            const auto b = test::bytes(r);
            boost::system::error_code ec;
            const auto f = parse_frame(b, limits{}, ec);
            ASSERT_TRUE(f) << name << ": " << ec.message();
            EXPECT_EQ(f->header.type, type_names.at(test::str(r, "type"))) << name;
            EXPECT_EQ(static_cast<int>(f->header.compression), test::num(r, "compress")) << name;
            EXPECT_EQ(f->header.size, test::num(r, "size")) << name;
            EXPECT_EQ(f->size(), b.size());
            EXPECT_EQ(f->body().size(), b.size() - header_size);
            ++n;
        }
    }
    EXPECT_GT(n, 200u);
}

TEST(frame_parser, needs_more_bytes_until_the_whole_message_is_there) {
    const auto b = test::bytes(test::find_record("routed-twoway", [](auto& r) { return test::is_type(r, "request"); }));
    for (std::size_t len = 0; len < b.size(); ++len) {
        boost::system::error_code ec = errc::bad_proxy;  // parse_frame must clear it
        EXPECT_FALSE(parse_frame(byte_view(b).first(len), limits{}, ec)) << len;
        EXPECT_FALSE(ec) << len;
    }
}

TEST(frame_parser, consumes_a_stream_of_frames) {
    byte_buffer stream;
    std::vector<std::size_t> sizes;
    for (const auto& r : test::load_vectors("routed-twoway")) {
        if (test::has(r, "event")) continue;
        const auto b = test::bytes(r);
        stream.insert(stream.end(), b.begin(), b.end());
        sizes.push_back(b.size());
    }
    byte_view rest = stream;
    boost::system::error_code ec;
    std::size_t i = 0;
    while (auto f = parse_frame(rest, limits{}, ec)) {
        ASSERT_LT(i, sizes.size());
        EXPECT_EQ(f->size(), sizes[i++]);
        rest = rest.subspan(f->size());
    }
    EXPECT_FALSE(ec);
    EXPECT_EQ(i, sizes.size());
    EXPECT_TRUE(rest.empty());
}

TEST(frame_parser, captured_bad_magic_is_rejected) {
    const auto r = test::find_record("malformed-bad-magic", [](auto& r) { return test::str(r, "event") == "garbage"; });
    EXPECT_EQ(parse_error(test::str(r, "hex")), errc::bad_magic);
    EXPECT_EQ(parse_error("58"), errc::bad_magic);  // on the first wrong byte
    EXPECT_EQ(parse_error("496358"), errc::bad_magic);
}

TEST(frame_parser, captured_oversize_header_is_rejected_before_the_body) {
    const auto r = test::find_record("malformed-oversize", [](auto& r) { return test::str(r, "event") == "partial"; });
    EXPECT_EQ(parse_error(test::str(r, "hex")), errc::message_too_large);  // 1 MiB + 1, header alone
    // At exactly the limit the header is fine and the parser waits for the body.
    const auto at_limit = from_hex("49636550010001000000" "00001000");
    boost::system::error_code ec;
    EXPECT_FALSE(parse_frame(at_limit, limits{}, ec));
    EXPECT_FALSE(ec);
    // 0 = unlimited.
    EXPECT_FALSE(parse_frame(from_hex("49636550010001000000" "ffffff7f"), limits{0}, ec));
    EXPECT_FALSE(ec);
}

TEST(frame_parser, header_checks) {
    EXPECT_EQ(parse_error("49636550" "0900" "0100" "0000" "0e000000"), errc::unsupported_protocol);
    EXPECT_EQ(parse_error("49636550" "0101" "0100" "0000" "0e000000"), errc::unsupported_protocol);
    EXPECT_EQ(parse_error("49636550" "0100" "0101" "0000" "0e000000"), errc::unsupported_encoding);
    EXPECT_EQ(parse_error("49636550" "0100" "0200" "0000" "0e000000"), errc::unsupported_encoding);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0000" "0d000000"), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0000" "00000000"), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0000" "ffffffff"), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0000" "00000080"), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0000" "00000080", limits{0}), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0900" "0e000000"), errc::unknown_message_type);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0500" "0e000000"), errc::unknown_message_type);
    // Header-only messages with a body, and a compressed header-only or bodiless message.
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0300" "0f000000" "00"), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0401" "0f000000" "00"), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0302" "0e000000"), errc::bad_compression);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0002" "11000000" "000000"), errc::bad_compression);
}

TEST(frame_parser, checks_in_ice_order) {
    // Each row breaks two fields; the earlier check wins (docs/ice-wire.md §3).
    EXPECT_EQ(parse_error("58636550" "0900" "0100" "0000" "0e000000"), errc::bad_magic);
    EXPECT_EQ(parse_error("49636550" "0900" "0900" "0000" "0e000000"), errc::unsupported_protocol);
    EXPECT_EQ(parse_error("49636550" "0100" "0900" "0000" "00000000"), errc::unsupported_encoding);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0900" "00000000"), errc::illegal_message_size);
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0900" "01001000"), errc::message_too_large);
}

TEST(frame_parser, errors_are_reported_on_the_header_alone) {
    // A bad header never waits for a body that may never come.
    EXPECT_EQ(parse_error("49636550" "0100" "0100" "0900" "00010000"), errc::unknown_message_type);
}

}  // namespace
}  // namespace moraine::protocol
