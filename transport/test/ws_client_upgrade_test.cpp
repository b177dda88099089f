// The client's upgrade: the request Ice 3.7 sends (docs/transports.md §1.1) and the answer's checks.
#include <moraine/transport/ws_client_upgrade.hpp>

#include <moraine/transport/ws_accept_key.hpp>
#include <moraine/transport/ws_error.hpp>
#include <moraine/transport/ws_server_upgrade.hpp>

#include <gtest/gtest.h>

#include <regex>

namespace moraine::transport {
namespace {

std::string key_of(const std::string& request) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(request, m, std::regex("Sec-WebSocket-Key: ([^\r]*)\r\n")));
    return m[1];
}

std::string answer_for(const std::string& request, const std::string& protocol_line = "Sec-WebSocket-Protocol: ice.zeroc.com\r\n") {
    return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + protocol_line +
           "Sec-WebSocket-Accept: " + ws_accept_key(key_of(request)) + "\r\n\r\n";
}

TEST(ws_client_upgrade, sends_the_seven_lines_of_an_ice_client) {
    ws_client_upgrade u("127.0.0.1", 45103, "");
    const std::string key = key_of(u.request());
    EXPECT_EQ(key.size(), 24u);
    EXPECT_EQ(u.request(), "GET / HTTP/1.1\r\nHost: 127.0.0.1:45103\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Protocol: ice.zeroc.com\r\nSec-WebSocket-Version: 13\r\n"
                           "Sec-WebSocket-Key: " + key + "\r\n\r\n");
    EXPECT_NE(key, key_of(ws_client_upgrade("127.0.0.1", 45103, "").request())) << "a fresh key each time";
    EXPECT_EQ(ws_client_upgrade("::1", 4065, "/ice").request().rfind("GET /ice HTTP/1.1\r\nHost: [::1]:4065\r\n", 0), 0u);
}

TEST(ws_client_upgrade, our_server_accepts_our_request_and_we_accept_its_answer) {
    ws_client_upgrade c("router.example", 4065, "/");
    ws_server_upgrade s;
    const auto sr = s.put(protocol::as_bytes(c.request()));
    ASSERT_EQ(sr.status, ws_upgrade_status::accepted) << sr.why;
    const std::string read = sr.answer + "\x82\x0eIceP";  // the validate frame may come in the same read
    const auto cr = c.put(protocol::as_bytes(read));
    ASSERT_EQ(cr.status, ws_upgrade_status::accepted) << cr.why;
    EXPECT_EQ(cr.consumed, sr.answer.size());
}

TEST(ws_client_upgrade, an_answer_split_at_every_byte_is_accepted) {
    ws_client_upgrade probe("h", 1, "/");
    const std::string answer = answer_for(probe.request(), "");
    for (std::size_t split = 1; split < answer.size(); ++split) {
        ws_client_upgrade c = probe;
        ASSERT_EQ(c.put(protocol::as_bytes(std::string_view(answer).substr(0, split))).status, ws_upgrade_status::need_more);
        const auto r = c.put(protocol::as_bytes(std::string_view(answer).substr(split)));
        ASSERT_EQ(r.status, ws_upgrade_status::accepted) << split << r.why;
        EXPECT_EQ(r.consumed, answer.size() - split);
    }
}

TEST(ws_client_upgrade, refuses_a_wrong_answer) {
    ws_client_upgrade probe("h", 1, "/");
    const std::string good = answer_for(probe.request());
    struct refusal {
        std::string answer;
        ws_errc ec;
    };
    const refusal cases[] = {
        {"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", ws_errc::upgrade_refused},
        {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", ws_errc::bad_accept_key},
        {answer_for(probe.request(), "Sec-WebSocket-Protocol: foo\r\n"), ws_errc::unsupported_protocol},
        {answer_for(probe.request(), "Sec-WebSocket-Extensions: permessage-deflate\r\n"), ws_errc::upgrade_refused},
        {"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n", ws_errc::upgrade_refused},
        {"SSH-2.0-OpenSSH\r\n\r\n", ws_errc::bad_http},
    };
    for (const auto& c : cases) {
        ws_client_upgrade u = probe;
        const auto r = u.put(protocol::as_bytes(c.answer));
        ASSERT_EQ(r.status, ws_upgrade_status::refused) << c.answer;
        EXPECT_EQ(r.ec, c.ec) << c.answer;
        EXPECT_FALSE(r.why.empty());
    }
    ws_client_upgrade u = probe;
    EXPECT_EQ(u.put(protocol::as_bytes(good)).status, ws_upgrade_status::accepted) << "the probe's own answer passes";
}

}  // namespace
}  // namespace moraine::transport
