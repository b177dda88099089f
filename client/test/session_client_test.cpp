// session_client against an in-process fake router on loopback: the I/O paths a real router
// rarely exercises (timeouts, the ice_add_proxy retry, bad bytes, refused connections).
#include "fake_router.hpp"

#include <moraine/protocol/user_exception.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;
using protocol::byte_buffer;
using test::fake_router;
using test::ok_reply;

protocol::proxy hello() { return *protocol::proxy_from_string("hello:tcp -h 127.0.0.1 -p 9"); }
call say_hello() { return {hello(), "sayHello", encode_string_params("bob")}; }

TEST(session_client, open_call_destroy) {
    fake_router fr;
    fr.answer = [](const protocol::request_view& r, int) -> std::vector<byte_buffer> {
        if (r.operation == "sayHello") return {ok_reply(r.request_id, encode_string_params("hello bob"))};
        return {};
    };
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_FALSE(err) << err.message();
        EXPECT_EQ(s->heartbeat_period(), 15s);
        EXPECT_TRUE(s->server_proxy("cb").is_nil());
        auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_EQ(decode_string_result(r.encaps), "hello bob");
        r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_TRUE(r.ok());
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    });
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient",
                                        "addProxies", "sayHello", "sayHello", "destroySession"};
    EXPECT_EQ(fr.ops, want) << "addProxies once per identity";
}

TEST(session_client, calls_carry_their_context_and_compression) {
    fake_router fr;
    fr.answer = [](const protocol::request_view& r, int) -> std::vector<byte_buffer> {
        if (r.operation == "sayHello") return {ok_reply(r.request_id, encode_string_params("hi"))};
        return {};
    };
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
        call big{hello(), "sayHello", encode_string_params(std::string(5000, 'a'))};
        big.compress = true;
        big.context = {{"_fwd", "t"}, {"k", "v"}};
        EXPECT_TRUE((co_await s->async_invoke(std::move(big), asio::use_awaitable)).ok());
        call small = say_hello();
        small.compress = true;
        EXPECT_TRUE((co_await s->async_invoke(std::move(small), asio::use_awaitable)).ok());
        EXPECT_TRUE((co_await s->async_invoke(say_hello(), asio::use_awaitable)).ok());
        EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
    });
    const std::vector<std::string> want_ops{"createSession", "getACMTimeout", "getServerProxy",
                                            "getCategoryForClient", "addProxies", "sayHello",
                                            "sayHello", "sayHello", "destroySession"};
    ASSERT_EQ(fr.ops, want_ops);
    // 5,000 bytes: bzip2 (status 2); a small compressed call: status 1; a plain one: 0.
    EXPECT_EQ(fr.compression[5], 2);
    EXPECT_EQ(fr.compression[6], 1);
    EXPECT_EQ(fr.compression[7], 0);
    EXPECT_EQ(fr.contexts[5], (protocol::context{{"_fwd", "t"}, {"k", "v"}}));
    EXPECT_TRUE(fr.contexts[6].empty());
}

TEST(session_client, ice_add_proxy_readds_and_retries_once) {
    fake_router fr;
    fr.answer = [](const protocol::request_view& r, int nth) -> std::vector<byte_buffer> {
        if (r.operation != "sayHello") return {};
        byte_buffer out;
        if (nth < 2)
            protocol::write_reply_not_exist(out, r.request_id, protocol::reply_status::object_not_exist, r.id, "",
                                            "ice_add_proxy");
        else
            protocol::write_reply_ok(out, r.request_id, encode_string_params("hi"));
        return {out};
    };
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
        // First call: ONE, re-add, ONE again: given up after one retry.
        auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_EQ(r.error.code, errc::object_not_exist);
        // Second call: re-added, then answered.
        r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_TRUE(r.ok()) << r.error.message();
        s->close();
    });
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient",
                                        "addProxies",    "sayHello",             "addProxies",
                                        "sayHello",      "addProxies",           "sayHello"};
    EXPECT_EQ(fr.ops, want);
}

TEST(session_client, concurrent_first_calls_share_one_add_proxies) {
    fake_router fr;
    fr.answer = [](const protocol::request_view& r, int) -> std::vector<byte_buffer> {
        if (r.operation == "sayHello") return {ok_reply(r.request_id, encode_string_params("x"))};
        return {};
    };
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
        int done = 0;
        asio::steady_timer all(s->get_executor(), std::chrono::steady_clock::time_point::max());
        for (int i = 0; i < 3; ++i)
            s->async_invoke(say_hello(), [&](call_result r) {
                EXPECT_TRUE(r.ok());
                if (++done == 3) all.cancel();
            });
        co_await all.async_wait(nothrow_awaitable);
        s->close();
    });
    EXPECT_EQ(std::count(fr.ops.begin(), fr.ops.end(), "addProxies"), 1);
    EXPECT_EQ(std::count(fr.ops.begin(), fr.ops.end(), "sayHello"), 3);
}

TEST(session_client, first_call_goes_with_its_add_proxies) {
    // addProxies is answered only once sayHello has arrived: a client that waited for the answer
    // before sending the call would time out (and the reply to the call comes last anyway).
    fake_router fr;
    std::int32_t add_id = 0;
    fr.answer = [&](const protocol::request_view& r, int) -> std::vector<byte_buffer> {
        const auto& hb = protocol::validate_connection_message;
        if (r.operation == "addProxies") {
            add_id = r.request_id;
            return {byte_buffer(hb.begin(), hb.end())};  // a heartbeat, no answer yet
        }
        if (r.operation != "sayHello") return {};
        return {ok_reply(add_id, encode_params([](protocol::output_stream& o) { o.write_size(0); })),
                ok_reply(r.request_id, encode_string_params("hi"))};
    };
    session_options so;
    so.call_timeout = 1s;
    fr.run(
        [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
            EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
            auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
            EXPECT_TRUE(r.ok()) << r.error.message();
            // The identity is in the cache now: no addProxies for the next call or a oneway.
            r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
            EXPECT_TRUE(r.ok()) << r.error.message();
            EXPECT_FALSE(co_await s->async_send_oneway(say_hello(), asio::use_awaitable));
            EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
        },
        so);
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient",
                                        "addProxies",    "sayHello",      "sayHello",       "sayHello",
                                        "destroySession"};
    EXPECT_EQ(fr.ops, want);
}

TEST(session_client, a_failed_add_proxies_is_the_first_calls_error) {
    // The call went behind the addProxies the router refused: the router did not route it
    // (ObjectNotExist "ice_add_proxy"), and the caller learns why addProxies failed, as when the
    // call waited for it. The next call adds the identity again.
    fake_router fr;
    fr.answer = [](const protocol::request_view& r, int nth) -> std::vector<byte_buffer> {
        byte_buffer out;
        if (r.operation == "addProxies" && nth == 0)
            protocol::write_reply_unknown(out, r.request_id, protocol::reply_status::unknown_local_exception, "no");
        else if (r.operation == "sayHello" && nth == 0)
            protocol::write_reply_not_exist(out, r.request_id, protocol::reply_status::object_not_exist, r.id, "",
                                            "ice_add_proxy");
        else if (r.operation == "sayHello")
            protocol::write_reply_ok(out, r.request_id, encode_string_params("hi"));
        if (out.empty()) return {};
        return {out};
    };
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
        auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_EQ(r.error.code, errc::unknown_local) << r.error.message();
        r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_TRUE(r.ok()) << r.error.message();
        s->close();
    });
    const std::vector<std::string> want{"createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient",
                                        "addProxies",    "sayHello",      "addProxies",     "sayHello"};
    EXPECT_EQ(fr.ops, want);
}

TEST(session_client, twoway_times_out_and_late_reply_is_ignored) {
    fake_router fr;  // sayHello is never answered
    session_options so;
    so.call_timeout = 200ms;
    fr.run(
        [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
            EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
            const auto t0 = std::chrono::steady_clock::now();
            auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
            EXPECT_EQ(r.error.code, errc::timeout);
            EXPECT_GE(std::chrono::steady_clock::now() - t0, 200ms);
            EXPECT_TRUE(s->is_open()) << "a timeout does not close the session";
            s->close();
        },
        so);
}

TEST(session_client, permission_denied_reason) {
    fake_router fr;
    fr.answer = [](const protocol::request_view& r, int) -> std::vector<byte_buffer> {
        if (r.operation != "createSession") return {};
        protocol::output_stream members;
        members.write_string("permission denied");
        byte_buffer encaps, out;
        protocol::write_user_exception_encaps(encaps, protocol::encoding_1_1, "::Glacier2::PermissionDeniedException",
                                              members.view(), true);
        protocol::write_reply_user_exception(out, r.request_id, encaps);
        return {out};
    };
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(fr.address(), "u", "bad", asio::use_awaitable);
        EXPECT_EQ(err.code, errc::permission_denied);
        EXPECT_EQ(err.detail, "permission denied");
        EXPECT_FALSE(s->is_open());
        auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_EQ(r.error.code, errc::not_connected);
    });
}

TEST(session_client, garbage_instead_of_validation_is_a_protocol_error) {
    fake_router fr;
    fr.greeting = byte_buffer(14, std::byte{'x'});
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        auto err = co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable);
        EXPECT_TRUE(err.code == errc::protocol_error || err.code == errc::connection_lost) << err.message();
    });
}

TEST(session_client, close_fails_pending_calls_and_reports_close) {
    fake_router fr;  // sayHello is never answered
    fr.run([&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
        EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
        error_info why = make_error(errc::timeout);
        s->on_close([&](const error_info& e) { why = e; });
        asio::steady_timer t(s->get_executor(), 50ms);
        t.async_wait([s](auto) { s->close(); });
        auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
        EXPECT_EQ(r.error.code, errc::connection_lost);
        co_await asio::post(s->get_executor(), asio::use_awaitable);
        EXPECT_FALSE(why) << "close() reports an empty error";
    });
}

TEST(session_client, connection_refused) {
    asio::io_context ioc;
    std::uint16_t port;
    {
        tcp::acceptor a(ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
        port = a.local_endpoint().port();
    }
    auto s = session_client::create(ioc.get_executor());
    auto f = s->async_open({"127.0.0.1", port}, "u", "p", asio::use_future);
    ioc.run_for(5s);
    const auto err = f.get();
    EXPECT_EQ(err.code, asio::error::connection_refused) << err.message();
}

}  // namespace
}  // namespace moraine::client
