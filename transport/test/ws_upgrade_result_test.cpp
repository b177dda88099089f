// ws_upgrade_result's contract, as both handshake sides must keep it: which fields each status
// fills, and that the bytes past `consumed` are the frame stream (ws_frame_decoder reads them).
#include <moraine/transport/ws_upgrade_result.hpp>

#include <moraine/transport/ws_client_upgrade.hpp>
#include <moraine/transport/ws_error.hpp>
#include <moraine/transport/ws_frame_decoder.hpp>
#include <moraine/transport/ws_server_upgrade.hpp>

#include "ws_test_bytes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moraine::transport {
namespace {

/// The checks every result must pass, whichever side made it from `input_size` bytes.
void expect_consistent(const ws_upgrade_result& r, std::size_t input_size, bool server_side, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_LE(r.consumed, input_size);
    switch (r.status) {
    case ws_upgrade_status::need_more:
        EXPECT_EQ(r.consumed, input_size) << "need_more keeps every byte given";
        EXPECT_TRUE(r.answer.empty());
        EXPECT_TRUE(r.why.empty());
        EXPECT_FALSE(r.ec);
        break;
    case ws_upgrade_status::accepted:
        EXPECT_TRUE(r.why.empty());
        EXPECT_FALSE(r.ec);
        if (server_side) {
            EXPECT_EQ(r.answer.rfind("HTTP/1.1 101 ", 0), 0u) << r.answer;
        } else {
            EXPECT_TRUE(r.answer.empty());
        }
        break;
    case ws_upgrade_status::refused:
        EXPECT_FALSE(r.why.empty()) << "a refusal names its cause";
        EXPECT_TRUE(r.ec);
        EXPECT_EQ(&r.ec.category(), &ws_category());
        if (server_side) {
            if (!r.answer.empty()) {
                EXPECT_EQ(r.answer.rfind("HTTP/1.1 4", 0), 0u) << r.answer;
            }
        } else {
            EXPECT_TRUE(r.answer.empty()) << "a client never answers";
        }
        break;
    }
}

const std::string good_request =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1:4065\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Protocol: ice.zeroc.com\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Key: gwa0KJOvl4hRSb3AE1yS7g==\r\n\r\n";

TEST(ws_upgrade_result, a_fresh_result_asks_for_more) {
    const ws_upgrade_result r;
    EXPECT_EQ(r.status, ws_upgrade_status::need_more);
    EXPECT_EQ(r.consumed, 0u);
    expect_consistent(r, 0, true, "default");
}

TEST(ws_upgrade_result, the_server_side_keeps_the_contract_for_every_input) {
    const std::vector<std::string> inputs = {
        good_request,
        good_request.substr(0, 20),                                          // need more
        good_request + "\x82\x8e",                                           // a frame follows
        "GET / HTTP/1.1\r\nHost: h\r\n\r\n",                                 // no upgrade
        "POST / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n",          // not GET
        "IceP\x01\x01\r\n\r\n",                                            // not HTTP, then a blank line
        "GET / HTTP/1.1\r\n" + std::string(9000, 'x'),                       // head over 8 KiB
    };
    for (const auto& in : inputs) {
        ws_server_upgrade u;
        expect_consistent(u.put(protocol::as_bytes(in)), in.size(), true, in.substr(0, 40));
    }
}

TEST(ws_upgrade_result, the_client_side_keeps_the_contract_for_every_input) {
    const std::vector<std::string> answers = {
        "HTTP/1.1 101 Switching Protocols\r\n",                        // need more
        "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",       // refused
        "SSH-2.0-OpenSSH_9.2\r\n\r\n",                                 // not HTTP
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"   // wrong accept key
        "Connection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n",
    };
    for (const auto& in : answers) {
        ws_client_upgrade c("127.0.0.1", 4065, "/");
        expect_consistent(c.put(protocol::as_bytes(in)), in.size(), false, in.substr(0, 40));
    }
    // And an accepted answer: our own server's.
    ws_client_upgrade c("127.0.0.1", 4065, "/");
    ws_server_upgrade s;
    const auto sr = s.put(protocol::as_bytes(c.request()));
    expect_consistent(sr, c.request().size(), true, "server accepts our request");
    expect_consistent(c.put(protocol::as_bytes(sr.answer)), sr.answer.size(), false, "client accepts the answer");
}

TEST(ws_upgrade_result, the_bytes_past_consumed_are_the_first_frame) {
    // glacier2router sends its validate connection frame in the same write as the 101 answer
    // (docs/transports.md §1.2): the client's decoder must get exactly the bytes past `consumed`.
    ws_client_upgrade c("127.0.0.1", 4065, "/");
    ws_server_upgrade s;
    const auto sr = s.put(protocol::as_bytes(c.request()));
    ASSERT_EQ(sr.status, ws_upgrade_status::accepted) << sr.why;
    const auto answer = protocol::as_bytes(sr.answer);
    protocol::byte_buffer read(answer.begin(), answer.end());
    const auto frame = test::hex(test::validate_frame_hex);
    read.insert(read.end(), frame.begin(), frame.end());

    const auto cr = c.put(read);
    ASSERT_EQ(cr.status, ws_upgrade_status::accepted) << cr.why;
    ASSERT_EQ(cr.consumed, sr.answer.size());
    ws_frame_decoder decoder(ws_role::client);
    boost::system::error_code ec;
    const auto d = decoder.decode(std::span<std::byte>(read).subspan(cr.consumed), ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(d.what, ws_input::payload);
    EXPECT_EQ(d.consumed, frame.size());
    EXPECT_EQ(test::to_hex(d.payload), std::string(test::validate_frame_hex.substr(4)));
}

}  // namespace
}  // namespace moraine::transport
