// The server's upgrade against docs/transports.md §1.1-1.3 (requests from the captures).
#include <moraine/transport/ws_server_upgrade.hpp>

#include <moraine/transport/ws_error.hpp>

#include <gtest/gtest.h>

namespace moraine::transport {
namespace {

// [ws-upgrade-ice37]: the request of an Ice 3.7.8 Python client, and glacier2router's answer.
const std::string ice37_request =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1:45103\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Protocol: ice.zeroc.com\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Key: gwa0KJOvl4hRSb3AE1yS7g==\r\n\r\n";
const std::string ice37_answer =
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Protocol: ice.zeroc.com\r\nSec-WebSocket-Accept: VXgua0rvY/ttw2xumPuwUl8aa24=\r\n\r\n";
// The lines every request below starts from ([ws-upgrade-variants] case 1's key).
const std::string base = "GET / HTTP/1.1\r\nHost: 127.0.0.1:45103\r\n";
const std::string key = "Sec-WebSocket-Key: x+09A4SNFs2w7YjDsKsf5w==\r\n";
const std::string upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\n";
const std::string v13 = "Sec-WebSocket-Version: 13\r\n";

ws_upgrade_result upgrade_once(const std::string& request) {
    ws_server_upgrade u;
    return u.put(protocol::as_bytes(request));
}

TEST(ws_server_upgrade, answers_an_ice_client_with_glacier2s_exact_bytes) {
    const auto r = upgrade_once(ice37_request);
    ASSERT_EQ(r.status, ws_upgrade_status::accepted) << r.why;
    EXPECT_EQ(r.answer, ice37_answer);
    EXPECT_EQ(r.answer.size(), 168u);
    EXPECT_EQ(r.consumed, ice37_request.size());
}

TEST(ws_server_upgrade, a_request_split_at_every_byte_gives_the_same_answer) {
    for (std::size_t split = 1; split < ice37_request.size(); ++split) {
        ws_server_upgrade u;
        const auto first = u.put(protocol::as_bytes(std::string_view(ice37_request).substr(0, split)));
        ASSERT_EQ(first.status, ws_upgrade_status::need_more) << split;
        EXPECT_EQ(first.consumed, split);
        const auto r = u.put(protocol::as_bytes(std::string_view(ice37_request).substr(split)));
        ASSERT_EQ(r.status, ws_upgrade_status::accepted) << split;
        EXPECT_EQ(r.answer, ice37_answer);
    }
}

TEST(ws_server_upgrade, bytes_after_the_head_are_left_for_the_frames) {
    const auto r = upgrade_once(ice37_request + "\x82\x8e");
    ASSERT_EQ(r.status, ws_upgrade_status::accepted);
    EXPECT_EQ(r.consumed, ice37_request.size());
}

TEST(ws_server_upgrade, no_protocol_is_accepted_without_a_protocol_line) {
    const auto r = upgrade_once(base + upgrade + v13 + key + "\r\n");
    ASSERT_EQ(r.status, ws_upgrade_status::accepted) << r.why;
    EXPECT_EQ(r.answer,  // [ws-upgrade-variants] case 1
              "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: w/pOMBWQ/JC8nBflUo/5RaX4FnU=\r\n\r\n");
}

TEST(ws_server_upgrade, an_extension_offer_is_never_accepted) {
    const auto r = upgrade_once(base + upgrade + "Sec-WebSocket-Protocol: ice.zeroc.com\r\n" + v13 + key +
                                "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n");
    ASSERT_EQ(r.status, ws_upgrade_status::accepted) << r.why;
    EXPECT_EQ(r.answer.find("Extensions"), std::string::npos) << r.answer;
    EXPECT_NE(r.answer.find("Sec-WebSocket-Protocol: ice.zeroc.com\r\n"), std::string::npos);
}

TEST(ws_server_upgrade, another_protocol_is_closed_without_an_answer) {
    for (const std::string p : {"foo", "foo, ice.zeroc.com"}) {  // not read as a list
        const auto r = upgrade_once(base + upgrade + "Sec-WebSocket-Protocol: " + p + "\r\n" + v13 + key + "\r\n");
        ASSERT_EQ(r.status, ws_upgrade_status::refused) << p;
        EXPECT_EQ(r.ec, ws_errc::unsupported_protocol);
        EXPECT_TRUE(r.answer.empty()) << r.answer;
        EXPECT_EQ(r.why, "WebSocket upgrade asks for protocol '" + p + "', not ice.zeroc.com");
    }
}

TEST(ws_server_upgrade, accepts_what_glacier2router_accepts) {
    // [ws-upgrade-variants]: method and path unchecked, Connection a token list, names and the
    // Upgrade value in any case.
    const std::string cases[] = {
        "POST / HTTP/1.1\r\nHost: h\r\n" + upgrade + v13 + key + "\r\n",
        "GET /other HTTP/1.1\r\nHost: h\r\n" + upgrade + v13 + key + "\r\n",
        base + "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n" + v13 + key + "\r\n",
        base + "upgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\n"
               "sec-websocket-key: x+09A4SNFs2w7YjDsKsf5w==\r\nsec-websocket-protocol: ice.zeroc.com\r\n\r\n",
        base + "Upgrade: WebSocket\r\nConnection: Upgrade\r\n" + v13 + key + "\r\n",
    };
    for (const auto& c : cases) {
        const auto r = upgrade_once(c);
        EXPECT_EQ(r.status, ws_upgrade_status::accepted) << c << r.why;
        EXPECT_NE(r.answer.find("Sec-WebSocket-Accept: w/pOMBWQ/JC8nBflUo/5RaX4FnU=\r\n"), std::string::npos) << c;
    }
    const auto lower = upgrade_once(cases[3]);
    EXPECT_NE(lower.answer.find("Sec-WebSocket-Protocol: ice.zeroc.com\r\n"), std::string::npos);
}

TEST(ws_server_upgrade, refuses_what_is_not_a_websocket_13_upgrade) {
    struct refusal {
        std::string request, status, why;
    };
    const refusal cases[] = {
        {base + upgrade + "Sec-WebSocket-Protocol: ice.zeroc.com\r\n" + v13 + "\r\n", "HTTP/1.1 400",
         "missing value for WebSocket key"},
        {base + upgrade + "Sec-WebSocket-Version: 8\r\n" + key + "\r\n", "HTTP/1.1 426",
         "unsupported WebSocket version '8'"},
        {"GET / HTTP/1.0\r\nHost: h\r\n" + upgrade + v13 + key + "\r\n", "HTTP/1.1 400", "unsupported HTTP version"},
        {base + "Connection: Upgrade\r\n" + v13 + key + "\r\n", "HTTP/1.1 400", "missing value for Upgrade field"},
        {base + "Upgrade: websocket\r\nConnection: keep-alive\r\n" + v13 + key + "\r\n", "HTTP/1.1 400",
         "missing Upgrade in the Connection field"},
        {"GET / HTTP/1.1\r\n" + upgrade + v13 + key + "\r\n", "HTTP/1.1 400", "missing Host field"},
        {base + upgrade + key + "\r\n", "HTTP/1.1 400", "missing WebSocket version"},
    };
    for (const auto& c : cases) {
        const auto r = upgrade_once(c.request);
        ASSERT_EQ(r.status, ws_upgrade_status::refused) << c.request;
        EXPECT_EQ(r.ec, ws_errc::bad_upgrade) << c.request;
        EXPECT_EQ(r.answer.rfind(c.status, 0), 0u) << r.answer;
        EXPECT_EQ(r.why, "WebSocket upgrade refused: " + c.why);
        EXPECT_NE(r.answer.find("\r\n\r\n" + c.why), std::string::npos) << "the reason is the body: " << r.answer;
    }
    EXPECT_NE(upgrade_once(cases[1].request).answer.find("Sec-WebSocket-Version: 13\r\n"), std::string::npos);
}

TEST(ws_server_upgrade, raw_ice_bytes_wait_for_a_head_and_garbage_is_closed) {
    ws_server_upgrade u;  // glacier2router keeps waiting for a head (docs/transports.md §1.3)
    EXPECT_EQ(u.put(protocol::as_bytes(std::string_view("IceP\x01\x00\x01\x00\x03\x00\x0e\x00\x00\x00", 14))).status,
              ws_upgrade_status::need_more);
    const auto r = upgrade_once("IceP garbage\r\n\r\n");
    ASSERT_EQ(r.status, ws_upgrade_status::refused);
    EXPECT_EQ(r.ec, ws_errc::bad_http);
    EXPECT_TRUE(r.answer.empty());
    EXPECT_EQ(r.why.rfind("bad WebSocket upgrade request: ", 0), 0u) << r.why;
}

TEST(ws_server_upgrade, a_head_over_8_kib_is_refused) {
    ws_server_upgrade u;
    const std::string head = base + "X-Filler: " + std::string(8200, 'a') + "\r\n";
    const auto r = u.put(protocol::as_bytes(head));
    ASSERT_EQ(r.status, ws_upgrade_status::refused);
    EXPECT_EQ(r.ec, ws_errc::bad_http);
    EXPECT_TRUE(r.answer.empty());
}

}  // namespace
}  // namespace moraine::transport
