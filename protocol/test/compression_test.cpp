#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/error.hpp>
#include <moraine/protocol/request.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;
using test::to_hex;

frame_view frame_of(const byte_buffer& b) {
    boost::system::error_code ec;
    const auto f = parse_frame(b, limits{}, ec);
    EXPECT_TRUE(f) << ec.message();
    return f ? *f : frame_view{};
}

test::record record_of(std::string_view dir, std::string_view type) {
    return test::find_record("compressed", [&](auto& r) { return test::str(r, "dir") == dir && test::is_type(r, type); });
}

// Replaces the request id (bytes 14..18) and the compression byte of a message.
byte_buffer with_id_and_status(byte_buffer m, std::int32_t id, std::uint8_t status) {
    for (int i = 0; i < 4; ++i) m[header_size + i] = static_cast<std::byte>((id >> (8 * i)) & 0xFF);
    m[9] = std::byte{status};
    return m;
}

TEST(compression, captured_request_decompresses_to_the_back_end_leg) {
    const auto in = record_of("client->router", "request");
    const auto fwd = record_of("router->backend", "request");
    const auto b = test::bytes(in);
    const auto f = frame_of(b);
    EXPECT_EQ(f.header.compression, compression_status::compressed);
    EXPECT_EQ(b.size(), 96u);
    const auto d = decompress_message(f, limits{});
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->size(), static_cast<std::size_t>(test::num(in, "uncompressedSize")));
    EXPECT_EQ(to_hex(byte_view(*d).subspan(header_size)), test::str(in, "uncompressedBodyHex"));
    // Same message as the router sent on, but for request id and compression byte.
    const auto expected = with_id_and_status(test::bytes(fwd), static_cast<std::int32_t>(test::num(in, "requestId")), 1);
    EXPECT_EQ(to_hex(*d), to_hex(expected));
}

TEST(compression, captured_reply_decompresses_to_the_back_end_reply) {
    const auto in = record_of("backend->router", "reply");
    const auto out = record_of("router->client", "reply");
    const auto b = test::bytes(out);
    const auto d = decompress_message(frame_of(b), limits{});
    ASSERT_TRUE(d);
    const auto expected = with_id_and_status(test::bytes(in), static_cast<std::int32_t>(test::num(out, "requestId")), 1);
    EXPECT_EQ(to_hex(*d), to_hex(expected));
}

// libbz2 is deterministic: the same settings (block size 1, work factor default) as Ice
// give the very bytes Ice 3.7.8 sent.
TEST(compression, compressing_reproduces_ice_bytes) {
    for (const char* dir : {"client->router", "router->client"}) {
        const auto rec = test::find_record("compressed", [&](auto& r) { return test::str(r, "dir") == dir && test::has(r, "hex"); });
        const auto b = test::bytes(rec);
        const auto d = decompress_message(frame_of(b), limits{});
        ASSERT_TRUE(d);
        auto again = compress_message(*d);
        ASSERT_TRUE(again);
        EXPECT_EQ(to_hex(*again), to_hex(b)) << dir;
    }
}

TEST(compression, round_trip) {
    const auto fwd = test::bytes(record_of("router->backend", "request"));
    const auto c = compress_message(fwd);
    ASSERT_TRUE(c);
    EXPECT_LT(c->size(), fwd.size());
    const auto f = frame_of(*c);
    EXPECT_EQ(f.header.type, message_type::request);
    EXPECT_EQ(f.header.compression, compression_status::compressed);
    EXPECT_EQ(to_hex(byte_view(*c).subspan(header_size + 4, 4)), "425a6831");  // "BZh1"
    const auto d = decompress_message(f, limits{});
    ASSERT_TRUE(d);
    EXPECT_EQ(to_hex(*d), to_hex(with_id_and_status(fwd, 5, 1)));
    const auto req = decode_request(byte_view(*d).subspan(header_size));
    ASSERT_TRUE(req);
    EXPECT_EQ(req->operation, "sayHello");
}

TEST(compression, size_prefix_checks) {
    const auto b = test::bytes(record_of("client->router", "request"));
    auto with_prefix = [&](std::int32_t v) {
        auto m = b;
        for (int i = 0; i < 4; ++i) m[header_size + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
        return m;
    };
    EXPECT_EQ(decompress_message(frame_of(with_prefix(14)), limits{}).error(), errc::illegal_message_size);
    EXPECT_EQ(decompress_message(frame_of(with_prefix(-5)), limits{}).error(), errc::illegal_message_size);
    EXPECT_EQ(decompress_message(frame_of(with_prefix(2 * 1024 * 1024)), limits{}).error(), errc::message_too_large);
    EXPECT_EQ(decompress_message(frame_of(with_prefix(347)), limits{}).error(), errc::bad_compression);  // too small a buffer
    EXPECT_EQ(decompress_message(frame_of(with_prefix(349)), limits{}).error(), errc::bad_compression);  // lie: shorter
    EXPECT_EQ(decompress_message(frame_of(b), limits{300}).error(), errc::message_too_large);
}

TEST(compression, corrupt_streams) {
    auto b = test::bytes(record_of("client->router", "request"));
    b[30] ^= std::byte{0xFF};
    EXPECT_EQ(decompress_message(frame_of(b), limits{}).error(), errc::bad_compression);
    // "compressed lie": status 2, prefix fine, no bzip2 at all
    const auto lie = from_hex("49636550" "0100" "0100" "0002" "1a000000" "5c010000" "0000000000000000");
    EXPECT_EQ(decompress_message(frame_of(lie), limits{}).error(), errc::bad_compression);
    // not compressed at all
    const auto plain = test::bytes(record_of("router->backend", "request"));
    EXPECT_EQ(decompress_message(frame_of(plain), limits{}).error(), errc::bad_compression);
}

TEST(compression, decompress_frame_lends_the_inner_message_marked_compressed) {
    const auto in = test::bytes(record_of("client->router", "request"));
    byte_buffer storage;
    boost::system::error_code ec = errc::bad_proxy;  // decompress_frame must clear it
    const auto inner = decompress_frame(frame_of(in), limits{}, storage, ec);
    ASSERT_TRUE(inner) << ec.message();
    EXPECT_FALSE(ec);
    EXPECT_EQ(inner->bytes.data(), storage.data()) << "a view of the storage, not a copy";
    EXPECT_EQ(inner->size(), storage.size());
    EXPECT_EQ(inner->header.type, message_type::request);
    EXPECT_EQ(inner->header.compression, compression_status::compressed) << "the peer compresses: keep that";
    EXPECT_EQ(static_cast<int>(storage[9]), 1) << "the bytes are an uncompressed message";
    const auto req = decode_request(inner->body());
    ASSERT_TRUE(req);
    EXPECT_EQ(req->operation, "sayHello");
}

TEST(compression, decompress_frame_reports_what_decompress_message_finds) {
    auto b = test::bytes(record_of("client->router", "request"));
    byte_buffer storage;
    boost::system::error_code ec;
    EXPECT_FALSE(decompress_frame(frame_of(b), limits{300}, storage, ec));
    EXPECT_EQ(ec, errc::message_too_large);
    b[30] ^= std::byte{0xFF};
    EXPECT_FALSE(decompress_frame(frame_of(b), limits{}, storage, ec));
    EXPECT_EQ(ec, errc::bad_compression);
}

TEST(compression, small_vector_is_sent_uncompressed_with_status_1) {
    const auto rec = test::find_record("compressed-small", [](auto& r) { return test::is_type(r, "request"); });
    EXPECT_EQ(test::num(rec, "compress"), 1);
    EXPECT_LT(test::bytes(rec).size(), compression_threshold);
}

TEST(compression, compress_for_peer_compresses_from_100_bytes_else_marks_status_1) {
    const auto fwd = test::bytes(record_of("router->backend", "request"));
    ASSERT_GE(fwd.size(), compression_threshold);
    byte_buffer big(fwd.begin(), fwd.end());
    compress_for_peer(big);
    EXPECT_EQ(frame_of(big).header.compression, compression_status::compressed);
    EXPECT_EQ(to_hex(*decompress_message(frame_of(big), limits{})), to_hex(with_id_and_status(fwd, 5, 1)));
    // The small request a real Ice client sends with compression on: status 1, bytes unchanged.
    const auto small_rec = test::find_record("compressed-small", [](auto& r) { return test::is_type(r, "request"); });
    auto small = test::bytes(small_rec);
    byte_buffer plain(small.begin(), small.end());
    plain[9] = std::byte{0};
    compress_for_peer(plain);
    EXPECT_EQ(to_hex(plain), to_hex(small));
}

TEST(compression, compress_rejects_a_non_message) {
    EXPECT_EQ(compress_message(from_hex("4963")).error(), errc::bad_compression);
}

}  // namespace
}  // namespace moraine::protocol
