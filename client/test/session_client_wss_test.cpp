// session_client over a `wss` address (WebSocket over TLS) against the in-process WebSocket
// router of ws_router.hpp behind asio::ssl: the TLS handshake, then the upgrade and the frames
// inside TLS; messages larger than a TLS record and a read; ping and close over TLS; the
// refusals (no TLS settings, an untrusted certificate, a router that is not TLS, a client
// certificate the router requires).
#include "tls_session_options.hpp"
#include "ws_router.hpp"

#include <moraine/client/tls_context.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;
using protocol::byte_buffer;
using test::test_pki;
using test::tls_session_options;
using test::ws_router;

/// echo(string) -> string, answered by the router itself: the reply is as large as the request.
std::vector<byte_buffer> echo_answer(const protocol::request_view& r) {
    if (r.operation != "echo") return {};
    const auto params = r.params.bytes;
    return {test::server_frame(test::ok_reply(r.request_id, byte_buffer(params.begin(), params.end())))};
}

call echo(const std::string& s) {
    return {*protocol::proxy_from_string("hello:tcp -h 127.0.0.1 -p 9"), "echo", encode_string_params(s)};
}

/// A string of `n` bytes that differs all along.
std::string payload(std::size_t n) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7) % 26);
    return s;
}

TEST(session_client_wss, opens_calls_and_destroys_one_message_per_frame_inside_tls) {
    ws_router wr;
    wr.use_tls();
    wr.extra = echo_answer;
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        EXPECT_TRUE(s->is_open());
        call hi = echo("over wss");  // named: g++ 12 and temporaries in co_await (README)
        auto r = co_await s->async_invoke(std::move(hi), asio::use_awaitable);
        EXPECT_TRUE(r.ok()) << r.error.message();
        EXPECT_EQ(decode_string_result(r.encaps), "over wss");
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    }, tls_session_options(test_pki::get().ca()));
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient",
                                        "addProxies", "echo", "destroySession"};
    EXPECT_EQ(wr.ops, want);
    EXPECT_EQ(wr.frames, 8) << "seven requests and the close connection message, each its own frame";
    EXPECT_TRUE(wr.tls_errors.empty());
}

TEST(session_client_wss, messages_larger_than_a_tls_record_and_a_read) {
    ws_router wr;
    wr.use_tls();
    wr.extra = echo_answer;
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable));
        // 100 KB both ways: several TLS records, several reads, frames cut across them.
        const std::string big = payload(100'000);
        call c = echo(big);
        auto r = co_await s->async_invoke(std::move(c), asio::use_awaitable);
        EXPECT_TRUE(r.ok()) << r.error.message();
        EXPECT_TRUE(decode_string_result(r.encaps) == big);
        s->close();
    }, tls_session_options(test_pki::get().ca()));
    EXPECT_EQ(wr.ops.back(), "echo");
}

TEST(session_client_wss, answers_a_ping_and_a_close_inside_tls) {
    ws_router wr;
    wr.use_tls();
    wr.extra = [](const protocol::request_view& r) -> std::vector<byte_buffer> {
        if (r.operation == "getACMTimeout")  // ping "hi"
            return {byte_buffer{std::byte{0x89}, std::byte{0x02}, std::byte{'h'}, std::byte{'i'}}};
        if (r.operation == "echo")  // close 1000
            return {byte_buffer{std::byte{0x88}, std::byte{0x02}, std::byte{0x03}, std::byte{0xe8}}};
        return {};
    };
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable)) << "the ping answered";
        call c = echo("x");
        auto r = co_await s->async_invoke(std::move(c), asio::use_awaitable);
        EXPECT_FALSE(r.ok());
        EXPECT_EQ(r.error.code, errc::connection_lost) << r.error.message();
    }, tls_session_options(test_pki::get().ca()));
    EXPECT_EQ(wr.closes, std::vector<std::uint16_t>{1000}) << "the client answered the router's close";
}

TEST(session_client_wss, wss_address_without_tls_settings_is_refused) {
    ws_router wr;
    wr.use_tls();
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_not_configured);
        EXPECT_EQ(err.message(), "TLS not configured: the router address 127.0.0.1:" +
                                     std::to_string(wr.address().port) + " is wss but session_options::tls is not set");
        EXPECT_FALSE(s->is_open());
    });  // no session_options::tls
    EXPECT_EQ(wr.accepted, 0) << "refused before connecting: never over ws instead";
}

TEST(session_client_wss, a_router_without_tls_is_never_spoken_to_in_plain_ws) {
    ws_router wr;  // a plain ws router behind a wss address: it waits for an HTTP head that never comes
    auto so = tls_session_options(test_pki::get().ca());
    so.connect_timeout = 300ms;
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        router_address a = wr.address();
        a.tls = true;
        auto err = co_await s->async_open(a, "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::timeout) << "the TLS handshake got no answer: " << err.message();
        EXPECT_FALSE(s->is_open());
    }, so);
    EXPECT_EQ(wr.accepted, 1);
    EXPECT_TRUE(wr.ops.empty()) << "no upgrade and no Ice message without TLS";
}

TEST(session_client_wss, untrusted_router_certificate) {
    ws_router wr;
    wr.use_tls();
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_handshake_failed) << err.message();
        EXPECT_NE(err.detail.find("certificate verify failed"), std::string::npos) << err.detail;
    }, tls_session_options(test_pki::get().foreign_ca()));
    EXPECT_TRUE(wr.ops.empty());
}

TEST(session_client_wss, a_router_requiring_a_client_certificate_refuses_during_the_upgrade) {
    ws_router wr;
    wr.use_tls(true);
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        // TLS 1.3: our handshake completes first; the router's alert answers the upgrade request.
        auto err = co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_handshake_failed) << err.message();
        EXPECT_NE(err.detail.find("the router refused the connection: "), std::string::npos) << err.detail;
        EXPECT_NE(err.detail.find("certificate required"), std::string::npos) << err.detail;
    }, tls_session_options(test_pki::get().ca()));
    EXPECT_EQ(wr.tls_errors.size(), 1u);
    ws_router with_cert;
    with_cert.use_tls(true);
    with_cert.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(with_cert.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        s->close();
    }, tls_session_options(test_pki::get().ca(), true));
    EXPECT_TRUE(with_cert.tls_errors.empty());
}

TEST(session_client_wss, reconnects_over_wss_after_the_router_dropped_the_connection) {
    ws_router wr;
    wr.use_tls();
    wr.extra = echo_answer;
    auto so = tls_session_options(test_pki::get().ca());
    so.reconnect = reconnect_options{.backoff = {.initial_delay = 10ms, .max_delay = 50ms}};
    wr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        std::vector<session_event_kind> kinds;
        s->on_session_event([&](const session_event& e) { kinds.push_back(e.kind); });
        EXPECT_FALSE(co_await s->async_open(wr.address(), "u", "p", asio::use_awaitable));
        call first = echo("one");
        EXPECT_TRUE((co_await s->async_invoke(std::move(first), asio::use_awaitable)).ok());
        wr.drop_all();
        asio::steady_timer t(co_await asio::this_coro::executor);
        for (int i = 0; i < 400 && kinds.size() < 3; ++i) {
            t.expires_after(5ms);
            co_await t.async_wait(nothrow_awaitable);
        }
        const std::vector<session_event_kind> want{session_event_kind::lost, session_event_kind::reconnecting,
                                                   session_event_kind::restored};
        EXPECT_EQ(kinds, want);
        call again = echo(payload(20'000));  // a fresh TLS and WebSocket layer under the new session
        auto r = co_await s->async_invoke(std::move(again), asio::use_awaitable);
        EXPECT_TRUE(r.ok()) << r.error.message();
        EXPECT_TRUE(decode_string_result(r.encaps) == payload(20'000));
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    }, so);
    EXPECT_EQ(wr.accepted, 2);
    EXPECT_EQ(std::count(wr.ops.begin(), wr.ops.end(), "createSession"), 2) << "the same credentials again";
}

}  // namespace
}  // namespace moraine::client
