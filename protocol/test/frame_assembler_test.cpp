#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/error.hpp>
#include <moraine/protocol/frame_assembler.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moraine::protocol {
namespace {

// A message of `total` bytes (header included) whose body bytes count up from `seed`, so that
// a frame cut or glued at the wrong place compares unequal.
byte_buffer message(std::size_t total, std::uint8_t seed = 0, message_type type = message_type::request) {
    byte_buffer m(total);
    write_header(m.data(), type, compression_status::none, static_cast<std::int32_t>(total));
    for (std::size_t i = header_size; i < total; ++i) m[i] = static_cast<std::byte>(seed + i);
    return m;
}

byte_buffer concat(std::initializer_list<const byte_buffer*> parts) {
    byte_buffer out;
    for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
}

// What feed() delivered: each frame copied out (views are loans), and where it was lent from.
struct collected {
    std::vector<byte_buffer> frames;
    std::vector<const std::byte*> lent_from;
    std::vector<compression_status> compression;
    bool more = true;
    boost::system::error_code ec;
};

collected feed(frame_assembler& a, byte_view data, limits lim = {}) {
    collected c;
    c.more = a.feed(data, lim, c.ec, [&](const frame_view& f) {
        c.frames.emplace_back(f.bytes.begin(), f.bytes.end());
        c.lent_from.push_back(f.bytes.data());
        c.compression.push_back(f.header.compression);
        EXPECT_EQ(static_cast<std::size_t>(f.header.size), f.size());
        return true;
    });
    return c;
}

TEST(frame_assembler, several_messages_in_one_read_are_lent_from_the_read) {
    const auto a = message(20, 1), b = message(header_size, 0, message_type::validate_connection), c = message(300, 3);
    const auto read = concat({&a, &b, &c});
    frame_assembler fa;
    const auto got = feed(fa, read);
    EXPECT_TRUE(got.more);
    EXPECT_FALSE(got.ec);
    ASSERT_EQ(got.frames.size(), 3u);
    EXPECT_EQ(got.frames[0], a);
    EXPECT_EQ(got.frames[1], b);
    EXPECT_EQ(got.frames[2], c);
    // In place: no copy of a message that lies wholly in the read.
    EXPECT_EQ(got.lent_from[0], read.data());
    EXPECT_EQ(got.lent_from[1], read.data() + 20);
    EXPECT_EQ(got.lent_from[2], read.data() + 20 + header_size);
    EXPECT_EQ(fa.buffered(), 0u);
}

TEST(frame_assembler, a_header_split_at_every_byte) {
    const auto m = message(40, 7);
    for (std::size_t cut = 1; cut < header_size; ++cut) {
        frame_assembler fa;
        const auto first = feed(fa, byte_view(m).first(cut));
        EXPECT_TRUE(first.more) << cut;
        EXPECT_TRUE(first.frames.empty()) << cut;
        EXPECT_EQ(fa.buffered(), cut);
        const auto second = feed(fa, byte_view(m).subspan(cut));
        EXPECT_FALSE(second.ec) << cut;
        ASSERT_EQ(second.frames.size(), 1u) << cut;
        EXPECT_EQ(second.frames[0], m) << cut;
        EXPECT_EQ(fa.buffered(), 0u) << cut << ": the buffer is given back";
    }
}

TEST(frame_assembler, a_body_split_at_every_byte) {
    const auto m = message(64, 9);
    for (std::size_t cut = header_size; cut < m.size(); ++cut) {
        frame_assembler fa;
        EXPECT_TRUE(feed(fa, byte_view(m).first(cut)).frames.empty()) << cut;
        EXPECT_EQ(fa.buffered(), cut);
        const auto second = feed(fa, byte_view(m).subspan(cut));
        ASSERT_EQ(second.frames.size(), 1u) << cut;
        EXPECT_EQ(second.frames[0], m) << cut;
        EXPECT_EQ(fa.buffered(), 0u);
    }
}

TEST(frame_assembler, one_byte_at_a_time) {
    const auto a = message(31, 1), b = message(header_size, 0, message_type::close_connection), c = message(17, 5);
    const auto stream = concat({&a, &b, &c});
    frame_assembler fa;
    std::vector<byte_buffer> frames;
    for (std::size_t i = 0; i < stream.size(); ++i) {
        const auto got = feed(fa, byte_view(stream).subspan(i, 1));
        ASSERT_TRUE(got.more) << i;
        frames.insert(frames.end(), got.frames.begin(), got.frames.end());
    }
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0], a);
    EXPECT_EQ(frames[1], b);
    EXPECT_EQ(frames[2], c);
    EXPECT_EQ(fa.buffered(), 0u);
}

TEST(frame_assembler, every_cut_of_a_stream_into_three_reads) {
    const auto a = message(23, 1), b = message(header_size, 0, message_type::validate_connection), c = message(50, 3);
    const auto stream = concat({&a, &b, &c});
    for (std::size_t i = 0; i <= stream.size(); ++i) {
        for (std::size_t j = i; j <= stream.size(); ++j) {
            frame_assembler fa;
            std::vector<byte_buffer> frames;
            for (auto piece : {byte_view(stream).first(i), byte_view(stream).subspan(i, j - i), byte_view(stream).subspan(j)}) {
                const auto got = feed(fa, piece);
                ASSERT_TRUE(got.more && !got.ec) << i << ", " << j;
                frames.insert(frames.end(), got.frames.begin(), got.frames.end());
            }
            ASSERT_EQ(frames.size(), 3u) << i << ", " << j;
            EXPECT_TRUE(frames[0] == a && frames[1] == b && frames[2] == c) << i << ", " << j;
            EXPECT_EQ(fa.buffered(), 0u);
        }
    }
}

TEST(frame_assembler, only_the_straddling_message_is_copied) {
    const auto a = message(100, 1), b = message(30, 2), c = message(40, 3);
    frame_assembler fa;
    EXPECT_TRUE(feed(fa, byte_view(a).first(60)).frames.empty());
    EXPECT_EQ(fa.buffered(), 60u);
    // The rest of a, all of b, the first 20 bytes of c.
    auto second = concat({&a, &b, &c});
    second = byte_buffer(second.begin() + 60, second.begin() + 100 + 30 + 20);
    const auto got = feed(fa, second);
    ASSERT_EQ(got.frames.size(), 2u);
    EXPECT_EQ(got.frames[0], a);
    EXPECT_EQ(got.frames[1], b);
    EXPECT_NE(got.lent_from[0], second.data() + 0) << "a was held";
    EXPECT_EQ(got.lent_from[1], second.data() + 40) << "b is lent from the read, not copied";
    EXPECT_EQ(fa.buffered(), 20u) << "only c's first bytes are held";
    const auto third = feed(fa, byte_view(c).subspan(20));
    ASSERT_EQ(third.frames.size(), 1u);
    EXPECT_EQ(third.frames[0], c);
}

TEST(frame_assembler, an_oversized_message_is_refused_on_its_header) {
    const auto big = message(2000);
    frame_assembler fa;
    // Whole header in one read: refused before the body arrives.
    auto got = feed(fa, byte_view(big).first(header_size), limits{1024});
    EXPECT_FALSE(got.more);
    EXPECT_EQ(got.ec, errc::message_too_large);
    EXPECT_EQ(fa.buffered(), 0u) << "nothing held after an error";
    // Header split across reads: refused once its size field is complete.
    frame_assembler split;
    EXPECT_TRUE(feed(split, byte_view(big).first(11), limits{1024}).more);
    got = feed(split, byte_view(big).subspan(11, 3), limits{1024});
    EXPECT_FALSE(got.more);
    EXPECT_EQ(got.ec, errc::message_too_large);
    EXPECT_EQ(split.buffered(), 0u);
    // At the limit, and without one (0).
    frame_assembler ok;
    EXPECT_EQ(feed(ok, big, limits{2000}).frames.size(), 1u);
    EXPECT_EQ(feed(ok, big, limits{0}).frames.size(), 1u);
}

TEST(frame_assembler, bad_magic_is_refused_on_its_first_byte) {
    frame_assembler fa;
    const auto ic = byte_buffer{std::byte{'I'}, std::byte{'c'}};
    EXPECT_TRUE(feed(fa, ic).more);
    const auto x = byte_buffer{std::byte{'X'}};
    const auto got = feed(fa, x);
    EXPECT_FALSE(got.more);
    EXPECT_EQ(got.ec, errc::bad_magic);
    EXPECT_EQ(fa.buffered(), 0u);
}

TEST(frame_assembler, messages_before_the_bad_one_are_delivered_first) {
    const auto a = message(20, 1);
    auto garbage = message(20, 2);
    garbage[0] = std::byte{'H'};  // "HceP": an HTTP client, say
    const auto read = concat({&a, &garbage});
    frame_assembler fa;
    const auto got = feed(fa, read);
    EXPECT_FALSE(got.more);
    EXPECT_EQ(got.ec, errc::bad_magic);
    ASSERT_EQ(got.frames.size(), 1u);
    EXPECT_EQ(got.frames[0], a);
}

TEST(frame_assembler, other_header_errors_are_parse_frames) {
    auto m = message(20);
    m[4] = std::byte{2};  // protocol 2.0
    frame_assembler fa;
    EXPECT_EQ(feed(fa, m).ec, errc::unsupported_protocol);
    auto v = message(20, 0, message_type::validate_connection);  // validate connection with a body
    frame_assembler fb;
    EXPECT_TRUE(feed(fb, byte_view(v).first(5)).more);
    EXPECT_EQ(feed(fb, byte_view(v).subspan(5)).ec, errc::illegal_message_size);
}

TEST(frame_assembler, a_compressed_message_is_delivered_as_it_came) {
    // Compressible: a body of 2000 zero bytes.
    byte_buffer plain(2000 + header_size);
    write_header(plain.data(), message_type::request, compression_status::accepted, static_cast<std::int32_t>(plain.size()));
    const auto packed = compress_message(plain);
    ASSERT_TRUE(packed);
    ASSERT_LT(packed->size(), 200u);
    frame_assembler fa;
    EXPECT_TRUE(feed(fa, byte_view(*packed).first(packed->size() / 2)).frames.empty());
    byte_buffer storage;
    boost::system::error_code ec;
    bool delivered = false;
    EXPECT_TRUE(fa.feed(byte_view(*packed).subspan(packed->size() / 2), limits{}, ec, [&](const frame_view& f) {
        EXPECT_EQ(f.header.compression, compression_status::compressed);
        EXPECT_TRUE(std::equal(f.bytes.begin(), f.bytes.end(), packed->begin(), packed->end()));
        const auto inner = decompress_frame(f, limits{}, storage, ec);
        EXPECT_TRUE(inner);
        if (inner) {
            EXPECT_EQ(inner->size(), plain.size());
        }
        delivered = true;
        return true;
    }));
    EXPECT_TRUE(delivered);
    // A status-2 header that cannot hold the 4-byte size prefix is refused on the header.
    auto lie = message(header_size + 2);
    lie[9] = std::byte{2};
    frame_assembler fb;
    EXPECT_EQ(feed(fb, lie).ec, errc::bad_compression);
}

TEST(frame_assembler, stopping_drops_the_rest_of_the_read) {
    const auto a = message(20, 1), b = message(20, 2), c = message(20, 3);
    const auto read = concat({&a, &b, &c});
    frame_assembler fa;
    int calls = 0;
    boost::system::error_code ec;
    EXPECT_FALSE(fa.feed(byte_view(read).first(50), limits{}, ec, [&](const frame_view&) { return ++calls < 2; }));
    EXPECT_FALSE(ec);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(fa.buffered(), 0u);
}

TEST(frame_assembler, reset_inside_the_callback_keeps_the_held_message_alive) {
    const auto a = message(300, 4), b = message(20, 5);
    frame_assembler fa;
    EXPECT_TRUE(feed(fa, byte_view(a).first(100)).more);
    auto rest = concat({&a, &b});
    rest.erase(rest.begin(), rest.begin() + 100);
    boost::system::error_code ec;
    std::vector<byte_buffer> seen;
    // As a client closing on the first message: reset() frees the held buffer, the view must
    // still be good until the callback returns (ASan would say otherwise).
    EXPECT_FALSE(fa.feed(rest, limits{}, ec, [&](const frame_view& f) {
        fa.reset();
        seen.emplace_back(f.bytes.begin(), f.bytes.end());
        return false;
    }));
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0], a);
    EXPECT_EQ(fa.buffered(), 0u);
}

TEST(frame_assembler, clears_ec_and_takes_empty_reads) {
    frame_assembler fa;
    boost::system::error_code ec = errc::bad_proxy;
    EXPECT_TRUE(fa.feed(byte_view(), limits{}, ec, [](const frame_view&) { return true; }));
    EXPECT_FALSE(ec);
    const auto m = message(20);
    EXPECT_TRUE(feed(fa, byte_view(m).first(3)).more);
    EXPECT_TRUE(feed(fa, byte_view()).frames.empty());
    EXPECT_EQ(fa.buffered(), 3u);
    fa.reset();
    EXPECT_EQ(fa.buffered(), 0u);
    EXPECT_EQ(feed(fa, m).frames.size(), 1u);
}

}  // namespace
}  // namespace moraine::protocol
