// The frame decoder over streams cut anywhere: golden frames of docs/transports.md §1, control
// frames, and each error (RFC 6455 §5).
#include <moraine/transport/ws_frame_decoder.hpp>

#include <moraine/transport/ws_masked_frame.hpp>

#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace moraine::transport {
namespace {

using test::hex;
using test::to_hex;
const ws_mask_key key{std::byte{0x12}, std::byte{0x34}, std::byte{0x56}, std::byte{0x78}};

// A client's frame of `op` carrying `payload`; FIN cleared when `fin` is false.
protocol::byte_buffer client_frame(ws_opcode op, protocol::byte_view payload, bool fin = true) {
    protocol::byte_buffer f;
    append_masked_frame(f, op, payload, key);
    if (!fin) f[0] &= std::byte{0x7f};
    return f;
}

protocol::byte_buffer concat(std::initializer_list<protocol::byte_buffer> parts) {
    protocol::byte_buffer all;
    for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
}

// Everything a decoder reported over a stream.
struct decoded {
    protocol::byte_buffer payload;       // every payload range, concatenated
    std::vector<std::string> replies;    // hex of each ping/close reply
    std::vector<std::uint16_t> close_codes;
    boost::system::error_code ec;        // the first error (then decoding stops)
};

// Feeds `stream` to `d` in pieces ending at `cuts` (then the rest), as reads would.
decoded decode_pieces(ws_frame_decoder& d, protocol::byte_buffer stream, std::vector<std::size_t> cuts = {}) {
    decoded out;
    cuts.push_back(stream.size());
    std::size_t from = 0;
    for (const std::size_t to : cuts) {
        auto piece = std::span(stream).subspan(from, to - from);
        from = to;
        while (true) {
            boost::system::error_code ec;
            const ws_decoded r = d.decode(piece, ec);
            EXPECT_LE(r.consumed, piece.size());
            piece = piece.subspan(r.consumed);
            if (r.what == ws_input::error) {
                out.ec = ec;
                return out;
            }
            if (r.what == ws_input::payload) out.payload.insert(out.payload.end(), r.payload.begin(), r.payload.end());
            if (r.what == ws_input::ping || r.what == ws_input::close) out.replies.push_back(to_hex(r.reply.view()));
            if (r.what == ws_input::close) out.close_codes.push_back(r.close_code);
            if (r.what == ws_input::need_more) {
                EXPECT_TRUE(piece.empty()) << "need_more must use every byte";
                break;
            }
        }
    }
    return out;
}

decoded decode_all(ws_role role, const protocol::byte_buffer& stream, std::uint64_t limit = 0) {
    ws_frame_decoder d(role, limit);
    return decode_pieces(d, stream);
}

TEST(ws_frame_decoder, state_is_a_few_dozen_bytes) {
    EXPECT_LE(sizeof(ws_frame_decoder), 72u);  // no buffer of its own: header bytes and counters
}

TEST(ws_frame_decoder, unmasks_an_ice_clients_frame) {
    const auto r = decode_all(ws_role::server, hex(test::ice_isa_frame_hex));
    EXPECT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(to_hex(r.payload), test::ice_isa_message_hex);
}

TEST(ws_frame_decoder, reads_the_routers_validate_frame_on_the_client_side) {
    const auto r = decode_all(ws_role::client, hex(test::validate_frame_hex));
    EXPECT_FALSE(r.ec);
    EXPECT_EQ(to_hex(r.payload), test::validate_message_hex);
}

TEST(ws_frame_decoder, a_masked_frame_split_at_every_byte_position) {
    const auto frame = hex(test::ice_isa_frame_hex);
    for (std::size_t split = 0; split <= frame.size(); ++split) {
        ws_frame_decoder d(ws_role::server);
        const auto r = decode_pieces(d, frame, {split});
        EXPECT_FALSE(r.ec) << split;
        EXPECT_EQ(to_hex(r.payload), test::ice_isa_message_hex) << "split at " << split;
    }
    ws_frame_decoder d(ws_role::server);  // and a byte at a time
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < frame.size(); ++i) every.push_back(i);
    EXPECT_EQ(to_hex(decode_pieces(d, frame, every).payload), test::ice_isa_message_hex);
}

TEST(ws_frame_decoder, two_frames_in_one_read) {
    const auto second = test::pattern(300);
    const auto r = decode_all(ws_role::server,
                              concat({hex(test::ice_isa_frame_hex), client_frame(ws_opcode::binary, second)}));
    EXPECT_FALSE(r.ec);
    EXPECT_EQ(r.payload, concat({hex(test::ice_isa_message_hex), second}));
}

TEST(ws_frame_decoder, a_70046_byte_message_with_a_64_bit_length) {
    const auto message = test::pattern(70046);
    const auto frame = client_frame(ws_opcode::binary, message);
    EXPECT_EQ(to_hex(protocol::byte_view(frame).first(10)), "82ff000000000001119e");
    ws_frame_decoder d(ws_role::server, 70046);  // exactly at the limit
    const auto r = decode_pieces(d, frame, {5, 14, 8193, 65537});  // the header split too
    EXPECT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.payload, message);
}

TEST(ws_frame_decoder, a_message_in_fragments_with_a_ping_between) {
    const auto message = test::pattern(61, 9);
    const protocol::byte_view m(message);
    const auto stream = concat({client_frame(ws_opcode::binary, m.first(20), false),
                                client_frame(ws_opcode::ping, protocol::as_bytes("hi")),
                                client_frame(ws_opcode::continuation, m.subspan(20, 1), false),
                                client_frame(ws_opcode::continuation, m.subspan(21))});
    for (std::size_t split = 0; split <= stream.size(); ++split) {
        ws_frame_decoder d(ws_role::server, 61);
        const auto r = decode_pieces(d, stream, {split});
        ASSERT_FALSE(r.ec) << split << ": " << r.ec.message();
        EXPECT_EQ(r.payload, message) << split;
        EXPECT_EQ(r.replies, std::vector<std::string>{"8a026869"}) << "the pong carries the ping's data, unmasked";
    }
}

TEST(ws_frame_decoder, a_client_answers_a_ping_with_a_masked_pong) {
    const auto r = decode_all(ws_role::client, hex("8902686982" "0e" + std::string(test::validate_message_hex)));
    EXPECT_FALSE(r.ec);
    ASSERT_EQ(r.replies.size(), 1u);
    EXPECT_EQ(r.replies[0].substr(0, 4), "8a82");
    EXPECT_EQ(to_hex(r.payload), test::validate_message_hex);
}

TEST(ws_frame_decoder, a_pong_is_skipped) {
    const auto r = decode_all(ws_role::client, hex("8a0161" + std::string(test::validate_frame_hex)));
    EXPECT_FALSE(r.ec);
    EXPECT_TRUE(r.replies.empty());
    EXPECT_EQ(to_hex(r.payload), test::validate_message_hex);
}

TEST(ws_frame_decoder, an_empty_frame_hands_out_nothing) {
    const auto r = decode_all(ws_role::client, hex("8200" + std::string(test::validate_frame_hex)));
    EXPECT_FALSE(r.ec);
    EXPECT_EQ(to_hex(r.payload), test::validate_message_hex);
}

TEST(ws_frame_decoder, a_close_is_answered_with_1000_and_ends_the_stream) {
    // The Ice 3.7 C++ core closes with 1001 (docs/transports.md §1.5).
    const std::array<std::byte, 2> going_away{std::byte{0x03}, std::byte{0xe9}};
    const auto close = client_frame(ws_opcode::close, going_away);
    for (std::size_t split = 0; split <= close.size(); ++split) {
        ws_frame_decoder d(ws_role::server);
        const auto r = decode_pieces(d, concat({close, hex(test::ice_isa_frame_hex)}), {split});
        EXPECT_EQ(r.replies, std::vector<std::string>{"880203e8"}) << split;
        EXPECT_EQ(r.close_codes, std::vector<std::uint16_t>{1001});
        EXPECT_EQ(r.ec, ws_errc::closed) << "nothing is decoded after a close";
        EXPECT_TRUE(r.payload.empty());
        EXPECT_TRUE(d.done());
    }
    const auto bare = decode_all(ws_role::client, hex("8800"));
    EXPECT_EQ(bare.close_codes, std::vector<std::uint16_t>{1005});
    EXPECT_EQ(bare.replies.at(0).substr(0, 4), "8882") << "a client's close is masked";
}

struct bad_case {
    const char* what;
    ws_role role;
    protocol::byte_buffer bytes;
    ws_errc ec;
};

TEST(ws_frame_decoder, each_error_is_reported_from_the_header) {
    const auto ping = client_frame(ws_opcode::ping, protocol::as_bytes("hi"));
    auto fragmented_ping = ping;
    fragmented_ping[0] &= std::byte{0x7f};
    auto rsv1 = hex(test::ice_isa_frame_hex);
    rsv1[0] |= std::byte{0x40};
    auto opcode3 = hex(test::ice_isa_frame_hex);
    opcode3[0] = std::byte{0x83};
    const bad_case cases[] = {
        {"text frame", ws_role::server, client_frame(ws_opcode::text, protocol::as_bytes("IceP")), ws_errc::text_frame},
        {"unmasked client frame", ws_role::server, hex("82024963"), ws_errc::unmasked_frame},
        {"masked server frame", ws_role::client, hex(test::ice_isa_frame_hex), ws_errc::masked_frame},
        {"reserved bit", ws_role::server, rsv1, ws_errc::reserved_bits},
        {"reserved opcode", ws_role::server, opcode3, ws_errc::bad_opcode},
        {"continuation first", ws_role::server, client_frame(ws_opcode::continuation, protocol::as_bytes("x")),
         ws_errc::bad_continuation},
        {"binary inside a message", ws_role::server,
         concat({client_frame(ws_opcode::binary, protocol::as_bytes("ab"), false),
                 client_frame(ws_opcode::binary, protocol::as_bytes("cd"))}),
         ws_errc::bad_continuation},
        {"fragmented ping", ws_role::server, fragmented_ping, ws_errc::bad_control_frame},
        {"ping over 125 bytes", ws_role::server, client_frame(ws_opcode::ping, test::pattern(126)),
         ws_errc::bad_control_frame},
        {"close with a 1-byte payload", ws_role::client, hex("880103"), ws_errc::bad_control_frame},
        {"16-bit length under 126", ws_role::client, hex("827e0005") , ws_errc::bad_length},
        {"64-bit length under 65536", ws_role::client, hex("827f000000000000ffff"), ws_errc::bad_length},
        {"64-bit length with the top bit", ws_role::client, hex("827f8000000000000000"), ws_errc::bad_length},
    };
    for (const auto& c : cases) {
        ws_frame_decoder d(c.role);
        const auto r = decode_pieces(d, c.bytes);
        EXPECT_EQ(r.ec, c.ec) << c.what << ": " << r.ec.message();
        EXPECT_EQ(ws_close_code(r.ec), c.ec == ws_errc::text_frame ? 1003 : 1002) << c.what;
        boost::system::error_code again;
        std::array<std::byte, 1> more{};
        EXPECT_EQ(d.decode(more, again).what, ws_input::error) << c.what << ": the error sticks";
        EXPECT_EQ(again, c.ec) << c.what;
    }
}

TEST(ws_frame_decoder, a_message_over_the_limit_is_refused_before_its_payload) {
    const auto frame = client_frame(ws_opcode::binary, test::pattern(200));
    ws_frame_decoder d(ws_role::server, 100);
    const auto header = static_cast<std::ptrdiff_t>(ws_header_size(200, true));  // 8 bytes, the payload not sent
    const auto r = decode_pieces(d, protocol::byte_buffer(frame.begin(), frame.begin() + header));
    EXPECT_EQ(r.ec, ws_errc::message_too_big);
    EXPECT_EQ(ws_close_code(r.ec), 1009);
    // Over several fragments, counted per message: 60 + 60 > 100, while 60 then 60 is fine.
    const auto sixty = test::pattern(60);
    const auto split = decode_all(ws_role::server,
                                  concat({client_frame(ws_opcode::binary, sixty, false),
                                          client_frame(ws_opcode::continuation, sixty)}), 100);
    EXPECT_EQ(split.ec, ws_errc::message_too_big);
    const auto two = decode_all(ws_role::server, concat({client_frame(ws_opcode::binary, sixty),
                                                         client_frame(ws_opcode::binary, sixty)}), 100);
    EXPECT_FALSE(two.ec) << two.ec.message();
    EXPECT_EQ(two.payload.size(), 120u);
}

}  // namespace

TEST(ws_frame_decoder, at_a_message_boundary_only_between_whole_messages) {
    // A takeover moves a WebSocket connection only there: a fresh decoder must read on the same.
    const auto frame = hex(test::ice_isa_frame_hex);
    for (std::size_t split = 1; split < frame.size(); ++split) {
        ws_frame_decoder d(ws_role::server);
        EXPECT_TRUE(d.at_message_boundary());
        decode_pieces(d, protocol::byte_buffer(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(split)));
        EXPECT_FALSE(d.at_message_boundary()) << "a frame cut at " << split;
    }
    ws_frame_decoder whole(ws_role::server);
    decode_pieces(whole, frame);
    EXPECT_TRUE(whole.at_message_boundary());

    // A fragmented message: not at a boundary between its frames, even between two whole frames.
    const auto message = test::pattern(30, 3);
    const protocol::byte_view m(message);
    ws_frame_decoder d(ws_role::server);
    decode_pieces(d, client_frame(ws_opcode::binary, m.first(10), false));
    EXPECT_FALSE(d.at_message_boundary());
    decode_pieces(d, client_frame(ws_opcode::continuation, m.subspan(10)));
    EXPECT_TRUE(d.at_message_boundary());
}

}  // namespace moraine::transport
