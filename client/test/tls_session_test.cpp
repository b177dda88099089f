// session_client over TLS (`ssl` router addresses) against an in-process fake router that speaks
// TLS with asio::ssl: handshake, certificate checks, createSessionFromSecureConnection, refusals,
// messages larger than a TLS read, and many TLS sessions on one thread.
#include <moraine/client/params.hpp>
#include <moraine/client/session_client.hpp>
#include <moraine/client/tls_context.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/protocol/user_exception.hpp>

#include "test_pki.hpp"
#include "tls_session_options.hpp"

#include <boost/asio/ssl.hpp>
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;
using protocol::byte_buffer;
using test::test_pki;
using test::tls_session_options;
namespace ssl = asio::ssl;

byte_buffer ok_reply(std::int32_t id, const byte_buffer& encaps) {
    byte_buffer out;
    protocol::write_reply_ok(out, id, encaps);
    return out;
}

byte_buffer permission_denied(std::int32_t id, std::string_view reason) {
    protocol::output_stream members;
    members.write_string(reason);
    byte_buffer encaps, out;
    protocol::write_user_exception_encaps(encaps, protocol::encoding_1_1, "::Glacier2::PermissionDeniedException",
                                          members.view(), true);
    protocol::write_reply_user_exception(out, id, encaps);
    return out;
}

/// What the fake router saw of one request.
struct seen_request {
    std::string operation;
    byte_buffer params;  // the whole encapsulation
};

/// A Glacier2 stand-in on 127.0.0.1 whose client endpoint is ssl (or tcp, `plain`), serving any
/// number of connections on the test's own thread.
struct fake_tls_router {
    asio::io_context ioc{1};
    ssl::context ctx{ssl::context::tls_server};
    tcp::acceptor acceptor{ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
    bool plain = false;
    bool secure_denied = false;           // createSessionFromSecureConnection → PermissionDenied
    std::vector<seen_request> requests;   // every request, all connections, in arrival order
    std::vector<std::string> client_cns;  // subject CN of each verified client certificate ("" = none)
    int accepted = 0;
    std::vector<std::weak_ptr<ssl::stream<tcp::socket>>> live;  // TLS connections, for drop_all

    explicit fake_tls_router(bool require_client_cert = false) {
        const auto& pki = test_pki::get();
        ctx.use_certificate_chain_file(pki.server_cert());
        ctx.use_private_key_file(pki.server_key(), ssl::context::pem);
        ctx.load_verify_file(pki.ca());
        ctx.set_verify_mode(ssl::verify_peer | (require_client_cert ? ssl::verify_fail_if_no_peer_cert : 0));
    }

    router_address address() const { return {"127.0.0.1", acceptor.local_endpoint().port(), !plain}; }

    std::vector<std::string> ops() const {
        std::vector<std::string> out;
        for (const auto& r : requests) out.push_back(r.operation);
        return out;
    }

    std::vector<byte_buffer> answer(const protocol::request_view& r) {
        const auto& op = r.operation;
        if (op == "createSession" || op == "createSessionFromSecureConnection") {
            if (op != "createSession" && secure_denied)
                return {permission_denied(r.request_id, "no configured ssl permissions verifier")};
            return {ok_reply(r.request_id, encode_params([](protocol::output_stream& o) { o.write_short(0); }))};
        }
        if (op == "getCategoryForClient") return {ok_reply(r.request_id, encode_string_params(""))};
        if (op == "getACMTimeout")
            return {ok_reply(r.request_id, encode_params([](protocol::output_stream& o) { o.write_int(30); }))};
        if (op == "addProxies")
            return {ok_reply(r.request_id, encode_params([](protocol::output_stream& o) { o.write_size(0); }))};
        if (op == "destroySession") return {ok_reply(r.request_id, empty_params())};
        if (op == "echo")  // echo(string) -> string: the reply is as large as the request
            return {ok_reply(r.request_id, encode_string_params(decode_string_result(r.params.bytes).value_or("?")))};
        return {};
    }

    template <class Stream>
    asio::awaitable<void> serve_messages(Stream& s) {
        const auto& hello = protocol::validate_connection_message;
        co_await asio::async_write(s, asio::buffer(hello.data(), hello.size()), nothrow_awaitable);
        byte_buffer in;
        std::array<std::byte, 4096> chunk;
        for (;;) {
            auto [ec, n] = co_await s.async_read_some(asio::buffer(chunk), nothrow_awaitable);
            if (ec) co_return;
            in.insert(in.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
            boost::system::error_code perr;
            while (auto f = protocol::parse_frame(in, protocol::limits{}, perr)) {
                if (f->header.type == protocol::message_type::close_connection) co_return;
                std::vector<byte_buffer> out;
                if (f->header.type == protocol::message_type::request) {
                    auto r = protocol::decode_request(f->body());
                    if (!r) co_return;
                    const auto params = r->params.bytes;
                    requests.push_back({std::string(r->operation), byte_buffer(params.begin(), params.end())});
                    out = answer(*r);
                }
                in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(f->size()));
                for (auto& m : out) co_await asio::async_write(s, asio::buffer(m), nothrow_awaitable);
            }
            if (perr) co_return;
        }
    }

    asio::awaitable<void> serve(tcp::socket sock) {
        if (plain) co_return co_await serve_messages(sock);
        auto sp = std::make_shared<ssl::stream<tcp::socket>>(std::move(sock), ctx);
        live.push_back(sp);
        auto& s = *sp;
        auto [ec] = co_await s.async_handshake(ssl::stream_base::server, nothrow_awaitable);
        if (ec) co_return;
        std::string cn;
        if (X509* peer = SSL_get1_peer_certificate(s.native_handle())) {
            std::array<char, 256> buf{};
            X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf.data(), buf.size());
            cn = buf.data();
            X509_free(peer);
        }
        client_cns.push_back(cn);
        co_await serve_messages(s);
    }

    /// Closes every TLS connection's socket at once, without close_notify (a router that died).
    void drop_all() {
        for (auto& w : live)
            if (auto sp = w.lock()) {
                boost::system::error_code ignored;
                sp->lowest_layer().close(ignored);
            }
        live.clear();
    }

    asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, sock] = co_await acceptor.async_accept(nothrow_awaitable);
            if (ec) co_return;
            ++accepted;
            asio::co_spawn(ioc, serve(std::move(sock)), asio::detached);
        }
    }

    /// Runs `test` (given the io_context's executor) until it finishes; at most 10 s.
    void run(std::function<asio::awaitable<void>()> test) {
        asio::co_spawn(ioc, accept_loop(), asio::detached);
        bool finished = false;
        asio::co_spawn(ioc, test(), [&](std::exception_ptr e) {
            finished = true;
            acceptor.close();
            ioc.stop();
            if (e) std::rethrow_exception(e);
        });
        ioc.run_for(10s);
        EXPECT_TRUE(finished) << "test coroutine did not finish";
    }
};

call echo(std::string s) {
    return {*protocol::proxy_from_string("hello:tcp -h 127.0.0.1 -p 9"), "echo", encode_string_params(s)};
}

/// A string of `n` bytes that differs per `seed` all along.
std::string payload(std::size_t n, int seed) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>('a' + (i * 7 + static_cast<std::size_t>(seed) * 13) % 26);
    return s;
}

TEST(tls_session, open_call_destroy) {
    fake_tls_router fr;
    fr.run([&]() -> asio::awaitable<void> {
        auto s = session_client::create(fr.ioc.get_executor(), tls_session_options(test_pki::get().ca()));
        auto err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        EXPECT_TRUE(s->is_open());
        // Larger than the 8 KiB TLS read buffer and than a TLS record, both ways.
        const std::string big = payload(100'000, 1);
        auto r = co_await s->async_invoke(echo(big), asio::use_awaitable);
        EXPECT_TRUE(r.ok()) << r.error.message();
        EXPECT_TRUE(decode_string_result(r.encaps) == big);
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
        EXPECT_FALSE(s->is_open());
    });
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient",
                                        "addProxies", "echo", "destroySession"};
    EXPECT_EQ(fr.ops(), want);
    EXPECT_EQ(fr.client_cns, std::vector<std::string>{""}) << "no client certificate configured";
}

TEST(tls_session, open_secure_calls_create_session_from_secure_connection) {
    fake_tls_router fr;
    fr.run([&]() -> asio::awaitable<void> {
        auto s = session_client::create(fr.ioc.get_executor(), tls_session_options(test_pki::get().ca(), true));
        auto err = co_await s->async_open_secure(fr.address(), asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        EXPECT_TRUE(s->is_open());
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    });
    ASSERT_FALSE(fr.requests.empty());
    EXPECT_EQ(fr.requests[0].operation, "createSessionFromSecureConnection");
    EXPECT_EQ(fr.requests[0].params, empty_params()) << "no in-parameters: an empty 1.1 encapsulation";
    EXPECT_EQ(fr.client_cns, std::vector<std::string>{"moraine-test-client"});
}

TEST(tls_session, open_secure_permission_denied) {
    fake_tls_router fr;
    fr.secure_denied = true;
    fr.run([&]() -> asio::awaitable<void> {
        auto s = session_client::create(fr.ioc.get_executor(), tls_session_options(test_pki::get().ca(), true));
        auto err = co_await s->async_open_secure(fr.address(), asio::use_awaitable);
        EXPECT_EQ(err.code, errc::permission_denied) << err.message();
        EXPECT_EQ(err.detail, "no configured ssl permissions verifier");
        EXPECT_FALSE(s->is_open());
    });
}

TEST(tls_session, ssl_address_without_tls_settings_is_refused) {
    fake_tls_router fr;
    fr.run([&]() -> asio::awaitable<void> {
        auto s = session_client::create(fr.ioc.get_executor());  // no session_options::tls
        error_info closed_with;
        s->on_close([&](const error_info& e) { closed_with = e; });
        auto err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_not_configured);
        EXPECT_EQ(err.message(), "TLS not configured: the router address 127.0.0.1:" +
                                     std::to_string(fr.address().port) + " is ssl but session_options::tls is not set");
        EXPECT_FALSE(s->is_open());
        auto secure = session_client::create(fr.ioc.get_executor());
        err = co_await secure->async_open_secure(fr.address(), asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_not_configured);
        co_await asio::post(fr.ioc.get_executor(), asio::use_awaitable);
        EXPECT_EQ(closed_with.code, errc::tls_not_configured) << "on_close reports it";
    });
    EXPECT_EQ(fr.accepted, 0) << "refused before connecting: never over tcp instead";
}

TEST(tls_session, untrusted_router_certificate) {
    fake_tls_router fr;
    fr.run([&]() -> asio::awaitable<void> {
        auto s = session_client::create(fr.ioc.get_executor(), tls_session_options(test_pki::get().foreign_ca()));
        auto err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_handshake_failed) << err.message();
        EXPECT_EQ(err.detail.rfind("127.0.0.1:" + std::to_string(fr.address().port) + ": ", 0), 0u) << err.detail;
        // Then the verdict (this router sends its CA too: "self-signed certificate in certificate chain").
        const std::string reason = "certificate verify failed: ";
        const auto at = err.detail.find(reason);
        EXPECT_TRUE(at != std::string::npos && err.detail.size() > at + reason.size()) << err.detail;
        EXPECT_FALSE(s->is_open());
    });
    EXPECT_TRUE(fr.requests.empty());
}

TEST(tls_session, server_name_is_checked_when_given) {
    fake_tls_router fr;
    fr.run([&]() -> asio::awaitable<void> {
        const auto& ca = test_pki::get().ca();
        auto wrong =
            session_client::create(fr.ioc.get_executor(), tls_session_options(ca, false, "router.example.com"));
        auto err = co_await wrong->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_handshake_failed);
        EXPECT_NE(err.detail.find("hostname mismatch"), std::string::npos) << err.detail;
        auto wrong_ip = session_client::create(fr.ioc.get_executor(), tls_session_options(ca, false, "10.1.2.3"));
        err = co_await wrong_ip->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::tls_handshake_failed);
        EXPECT_NE(err.detail.find("IP address mismatch"), std::string::npos) << err.detail;
        for (const char* good : {"127.0.0.1", "localhost"}) {
            auto s = session_client::create(fr.ioc.get_executor(), tls_session_options(ca, false, good));
            err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
            EXPECT_FALSE(err) << good << ": " << err.message();
            s->close();
        }
    });
}

TEST(tls_session, router_requiring_a_client_certificate) {
    fake_tls_router fr(true);
    fr.run([&]() -> asio::awaitable<void> {
        const auto& ca = test_pki::get().ca();
        auto without = session_client::create(fr.ioc.get_executor(), tls_session_options(ca));
        auto err = co_await without->async_open(fr.address(), "u", "p", asio::use_awaitable);
        // TLS 1.3: our handshake completes first; the router's alert is the first read.
        EXPECT_EQ(err.code, errc::tls_handshake_failed) << err.message();
        EXPECT_NE(err.detail.find("the router refused the connection: "), std::string::npos) << err.detail;
        EXPECT_NE(err.detail.find("certificate required"), std::string::npos) << err.detail;
        auto with = session_client::create(fr.ioc.get_executor(), tls_session_options(ca, true));
        err = co_await with->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        with->close();
    });
}

TEST(tls_session, handshake_is_bounded_by_connect_timeout) {
    asio::io_context ioc(1);
    tcp::acceptor silent(ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    tcp::socket held(ioc);
    silent.async_accept(held, [](boost::system::error_code) {});  // accepts, then never says a word
    auto so = tls_session_options(test_pki::get().ca());
    so.connect_timeout = 300ms;
    auto s = session_client::create(ioc.get_executor(), so);
    const auto t0 = std::chrono::steady_clock::now();
    auto f = s->async_open({"127.0.0.1", silent.local_endpoint().port(), true}, "u", "p", asio::use_future);
    ioc.run_for(5s);
    const auto err = f.get();
    EXPECT_EQ(err.code, errc::timeout) << err.message();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
    EXPECT_TRUE(held.is_open()) << "the TCP connection was made: it is the handshake that timed out";
}

TEST(tls_session, tcp_address_ignores_tls_settings) {
    fake_tls_router fr;
    fr.plain = true;
    fr.run([&]() -> asio::awaitable<void> {
        auto s = session_client::create(fr.ioc.get_executor(), tls_session_options(test_pki::get().ca()));
        auto err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        auto r = co_await s->async_invoke(echo("plain"), asio::use_awaitable);
        EXPECT_EQ(decode_string_result(r.encaps), "plain");
        s->close();
    });
    EXPECT_TRUE(fr.client_cns.empty()) << "no TLS handshake";
}

TEST(tls_session, many_tls_sessions_on_one_thread_keep_their_bytes_apart) {
    fake_tls_router fr;
    constexpr int n = 24;
    int good = 0;
    fr.run([&]() -> asio::awaitable<void> {
        const auto so = tls_session_options(test_pki::get().ca());
        std::vector<std::shared_ptr<session_client>> sessions;
        int pending = n;
        asio::steady_timer done(fr.ioc.get_executor(), std::chrono::steady_clock::time_point::max());
        for (int i = 0; i < n; ++i) {
            auto s = session_client::create(fr.ioc.get_executor(), so);
            sessions.push_back(s);
            s->async_open(fr.address(), "u", "p", [&, s, i](error_info err) {
                if (err) {
                    ADD_FAILURE() << err.message();
                    if (--pending == 0) done.cancel();
                    return;
                }
                // 20 KiB each, all in flight at once: replies interleave on the thread.
                s->async_invoke(echo(payload(20'000, i)), [&, i](call_result r) {
                    if (r.ok() && decode_string_result(r.encaps) == payload(20'000, i)) ++good;
                    if (--pending == 0) done.cancel();
                });
            });
        }
        co_await done.async_wait(nothrow_awaitable);
        for (auto& s : sessions) s->close();
    });
    EXPECT_EQ(good, n);
}

TEST(tls_session, reconnects_with_the_same_credentials) {
    for (const bool secure : {false, true}) {
        fake_tls_router fr;
        fr.run([&]() -> asio::awaitable<void> {
            auto so = tls_session_options(test_pki::get().ca(), true);
            so.reconnect = reconnect_options{.backoff = {.initial_delay = 10ms, .max_delay = 50ms}};
            auto s = session_client::create(fr.ioc.get_executor(), so);
            std::vector<session_event_kind> kinds;
            s->on_session_event([&](const session_event& e) { kinds.push_back(e.kind); });
            error_info err;
            if (secure) err = co_await s->async_open_secure(fr.address(), asio::use_awaitable);
            else err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
            EXPECT_FALSE(err) << err.message();
            call first = echo("one");  // named: g++ 12 and temporaries in co_await (README)
            EXPECT_TRUE((co_await s->async_invoke(std::move(first), asio::use_awaitable)).ok());
            fr.drop_all();
            asio::steady_timer t(fr.ioc.get_executor());
            for (int i = 0; i < 400 && kinds.size() < 3; ++i) {
                t.expires_after(5ms);
                co_await t.async_wait(nothrow_awaitable);
            }
            EXPECT_TRUE(s->is_open());
            call big = echo(payload(20'000, 3));
            auto r = co_await s->async_invoke(std::move(big), asio::use_awaitable);
            EXPECT_TRUE(r.ok()) << r.error.message();
            EXPECT_TRUE(decode_string_result(r.encaps) == payload(20'000, 3));
            const std::vector<session_event_kind> want{session_event_kind::lost, session_event_kind::reconnecting,
                                                       session_event_kind::restored};
            EXPECT_EQ(kinds, want);
            EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
        });
        const std::string create = secure ? "createSessionFromSecureConnection" : "createSession";
        std::vector<byte_buffer> creates;
        for (const auto& r : fr.requests)
            if (r.operation == create) creates.push_back(r.params);
        ASSERT_EQ(creates.size(), 2u) << create;
        EXPECT_EQ(creates[0], creates[1]) << "the same credentials again";
        EXPECT_EQ(fr.client_cns, (std::vector<std::string>{"moraine-test-client", "moraine-test-client"}));
    }
}

}  // namespace
}  // namespace moraine::client
