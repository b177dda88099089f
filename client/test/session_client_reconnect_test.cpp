// session_client with session_options::reconnect against the in-process fake router: the
// router drops the connection, refuses connects, comes back, refuses the new session.
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
using kind = session_event_kind;

protocol::proxy hello() { return *protocol::proxy_from_string("hello:tcp -h 127.0.0.1 -p 9"); }
call say_hello() { return {hello(), "sayHello", encode_string_params("bob")}; }

session_options fast_reconnect(unsigned max_attempts = 0) {
    session_options so;
    so.reconnect = reconnect_options{.backoff = {.initial_delay = 20ms, .max_delay = 80ms}, .max_attempts = max_attempts};
    return so;
}

/// A fake router whose sessions have category "cat<N>" (N: the connection's number) and server
/// endpoints; sayHello is answered, `ring <target>` makes the router call `<target>` on the
/// client (request id 77) before it answers.
void script_router(fake_router& fr) {
    fr.answer = [&fr](const protocol::request_view& r, int) -> std::vector<byte_buffer> {
        if (r.operation == "getCategoryForClient")
            return {ok_reply(r.request_id, encode_string_params("cat" + std::to_string(fr.accepted)))};
        if (r.operation == "getServerProxy")
            return {ok_reply(r.request_id, encode_params([](protocol::output_stream& o) {
                protocol::write_proxy(o, *protocol::proxy_from_string("x:tcp -h 127.0.0.1 -p 4064"));
            }))};
        if (r.operation == "sayHello") return {ok_reply(r.request_id, encode_string_params("hello"))};
        if (r.operation == "ring") {
            auto target = decode_string_result(r.params.bytes);
            auto id = protocol::identity_from_string(target.value_or(""));
            protocol::output_stream out;
            out.start_message(protocol::message_type::request);
            out.write_int(77);
            out.write_identity(id ? id->view() : protocol::identity{}.view());
            out.write_facet("");
            out.write_string("ping");
            out.write_byte(0);
            out.write_context({});
            out.write_bytes(empty_params());
            out.end_message();
            return {out.take(), ok_reply(r.request_id, empty_params())};
        }
        return {};
    };
}

/// Waits (polling every 5 ms, at most `limit`) until `pred()` holds. @return pred().
template <class Pred>
asio::awaitable<bool> eventually(Pred pred, std::chrono::milliseconds limit = 3000ms) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    for (auto end = std::chrono::steady_clock::now() + limit; !pred() && std::chrono::steady_clock::now() < end;) {
        t.expires_after(5ms);
        co_await t.async_wait(nothrow_awaitable);
    }
    co_return pred();
}

std::vector<kind> kinds(const std::vector<session_event>& evs) {
    std::vector<kind> out;
    for (const auto& e : evs) out.push_back(e.kind);
    return out;
}

bool has(const std::vector<session_event>& evs, kind k) {
    return std::any_of(evs.begin(), evs.end(), [k](const session_event& e) { return e.kind == k; });
}

TEST(session_client_reconnect, restores_session_rekeys_servants_and_routes_again) {
    fake_router fr;
    script_router(fr);
    fr.run(
        [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
            std::vector<session_event> evs;
            s->on_session_event([&](const session_event& e) { evs.push_back(e); });
            bool closed = false;
            s->on_close([&](const error_info&) { closed = true; });
            EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
            EXPECT_EQ(s->category(), "cat1");
            std::vector<std::string> seen_by_servant;
            auto first = s->add_servant("cb", [&](const incoming_request& r) {
                seen_by_servant.push_back(std::string(r.id.category));
                return dispatch_result::ok();
            });
            EXPECT_EQ(first.id.category, "cat1");
            EXPECT_TRUE((co_await s->async_invoke(say_hello(), asio::use_awaitable)).ok());

            fr.drop_all();  // the router's end of the connection goes: the client reads EOF
            EXPECT_TRUE(co_await eventually([&] { return has(evs, kind::restored); }));
            EXPECT_EQ(kinds(evs), (std::vector<kind>{kind::lost, kind::reconnecting, kind::restored}));
            EXPECT_EQ(evs[0].error.code, errc::connection_lost) << evs[0].error.message();
            EXPECT_EQ(evs[0].lost_category, "cat1");
            EXPECT_EQ(evs[1].attempt, 1u);
            EXPECT_LE(evs[1].delay, 20ms);
            EXPECT_GE(evs[1].delay, 10ms);
            EXPECT_FALSE(evs[1].error);
            EXPECT_EQ(evs[2].attempt, 1u);
            EXPECT_EQ(evs[2].category, "cat2");
            EXPECT_EQ(evs[2].lost_category, "cat1");
            EXPECT_TRUE(s->is_open());
            EXPECT_FALSE(s->is_reconnecting());
            EXPECT_EQ(s->category(), "cat2");
            EXPECT_EQ(s->server_proxy("cb").id.category, "cat2") << "the servant's new proxy";

            // Calls work again, through a new addProxies: the new session's routing table is empty.
            EXPECT_TRUE((co_await s->async_invoke(say_hello(), asio::use_awaitable)).ok());
            // The servant answers under the new category only.
            call ring_new{hello(), "ring", encode_string_params("cat2/cb")};
            EXPECT_TRUE((co_await s->async_invoke(std::move(ring_new), asio::use_awaitable)).ok());
            call ring_old{hello(), "ring", encode_string_params("cat1/cb")};
            EXPECT_TRUE((co_await s->async_invoke(std::move(ring_old), asio::use_awaitable)).ok());
            EXPECT_TRUE(co_await eventually([&] { return fr.replies.size() == 2; }));
            EXPECT_EQ(seen_by_servant, (std::vector<std::string>{"cat2"}));
            EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
            co_await asio::post(s->get_executor(), asio::use_awaitable);
            EXPECT_TRUE(closed) << "on_close once the session ends for good";
            EXPECT_EQ(evs.size(), 3u) << "no event after a destroy";
        },
        fast_reconnect(), true);
    const std::vector<std::string> want{
        "createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient", "addProxies", "sayHello",
        "createSession", "getACMTimeout", "getServerProxy", "getCategoryForClient", "addProxies", "sayHello",
        "ring",          "ring",          "destroySession"};
    EXPECT_EQ(fr.ops, want);
    ASSERT_EQ(fr.replies.size(), 2u);
    EXPECT_EQ(fr.replies[0].second, protocol::reply_status::ok);
    EXPECT_EQ(fr.replies[1].second, protocol::reply_status::object_not_exist) << "old category: not ours any more";
    EXPECT_EQ(fr.accepted, 2);
}

TEST(session_client_reconnect, calls_in_flight_fail_then_new_calls_fail_fast_until_restored) {
    fake_router fr;
    script_router(fr);
    auto answer = fr.answer;
    fr.answer = [answer](const protocol::request_view& r, int nth) -> std::vector<byte_buffer> {
        if (r.operation == "slow") return {};  // never answered
        return answer(r, nth);
    };
    auto so = fast_reconnect();
    so.call_timeout = 5s;
    fr.run(
        [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
            std::vector<session_event> evs;
            s->on_session_event([&](const session_event& e) { evs.push_back(e); });
            EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
            call slow{hello(), "slow", empty_params()};
            std::optional<call_result> in_flight;
            s->async_invoke(std::move(slow), [&](call_result r) { in_flight = std::move(r); });
            EXPECT_TRUE(co_await eventually([&] { return std::count(fr.ops.begin(), fr.ops.end(), "slow") == 1; }));
            fr.stop_listening();
            const auto t0 = std::chrono::steady_clock::now();
            fr.drop_all();
            EXPECT_TRUE(co_await eventually([&] { return in_flight.has_value(); }));
            EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << "not after the call timeout";
            EXPECT_EQ(in_flight->error.code, errc::connection_lost) << in_flight->error.message();
            EXPECT_TRUE(co_await eventually([&] { return evs.size() >= 4; }));  // lost + 3 attempts
            EXPECT_TRUE(s->is_reconnecting());
            EXPECT_FALSE(s->is_open());
            EXPECT_EQ(s->category(), "");
            EXPECT_TRUE(s->server_proxy("cb").is_nil());
            // Fail fast while reconnecting; nothing is queued for later.
            const auto t1 = std::chrono::steady_clock::now();
            auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
            EXPECT_EQ(r.error.code, errc::reconnecting) << r.error.message();
            EXPECT_LT(std::chrono::steady_clock::now() - t1, 500ms) << "at once, not after a call timeout (5 s)";
            call note{hello(), "note", empty_params()};
            EXPECT_EQ((co_await s->async_send_oneway(std::move(note), asio::use_awaitable)).code, errc::reconnecting);
            // The attempts so far were refused, and say so.
            EXPECT_EQ(evs[2].kind, kind::reconnecting);
            EXPECT_EQ(evs[2].attempt, 2u);
            EXPECT_EQ(evs[2].error.code, asio::error::connection_refused) << evs[2].error.message();
            for (std::size_t i = 1; i < evs.size(); ++i) EXPECT_LE(evs[i].delay, 80ms) << "max_delay";
            fr.listen_again();
            EXPECT_TRUE(co_await eventually([&] { return has(evs, kind::restored); }));
            EXPECT_TRUE((co_await s->async_invoke(say_hello(), asio::use_awaitable)).ok());
            EXPECT_EQ(std::count(fr.ops.begin(), fr.ops.end(), "note"), 0);
            s->close();
        },
        so, true);
}

TEST(session_client_reconnect, gives_up_after_max_attempts) {
    fake_router fr;
    script_router(fr);
    fr.run(
        [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
            std::vector<session_event> evs;
            s->on_session_event([&](const session_event& e) { evs.push_back(e); });
            std::optional<error_info> closed;
            s->on_close([&](const error_info& e) { closed = e; });
            EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
            fr.stop_listening();
            fr.drop_all();
            EXPECT_TRUE(co_await eventually([&] { return closed.has_value(); }));
            EXPECT_EQ(kinds(evs), (std::vector<kind>{kind::lost, kind::reconnecting, kind::reconnecting,
                                                     kind::reconnecting, kind::gave_up}));
            EXPECT_EQ(evs.back().attempt, 3u);
            EXPECT_EQ(evs.back().lost_category, "cat1");
            EXPECT_EQ(evs.back().error.code, asio::error::connection_refused) << evs.back().error.message();
            EXPECT_EQ(closed->code, errc::connection_lost);
            EXPECT_NE(closed->detail.find("gave up reconnecting after 3 attempts"), std::string::npos) << closed->detail;
            EXPECT_FALSE(s->is_open());
            EXPECT_FALSE(s->is_reconnecting());
            auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
            EXPECT_EQ(r.error.code, errc::connection_lost) << "later calls say why the session ended";
            EXPECT_NE(r.error.detail.find("gave up"), std::string::npos) << r.error.detail;
        },
        fast_reconnect(3), true);
}

TEST(session_client_reconnect, refused_session_is_a_failed_attempt) {
    fake_router fr;
    script_router(fr);
    auto answer = fr.answer;
    fr.answer = [&fr, answer](const protocol::request_view& r, int nth) -> std::vector<byte_buffer> {
        if (r.operation == "createSession" && fr.accepted == 2) {  // the first reconnection only
            protocol::output_stream members;
            members.write_string("try later");
            byte_buffer encaps, out;
            protocol::write_user_exception_encaps(encaps, protocol::encoding_1_1,
                                                  "::Glacier2::CannotCreateSessionException", members.view(), true);
            protocol::write_reply_user_exception(out, r.request_id, encaps);
            return {out};
        }
        return answer(r, nth);
    };
    fr.run(
        [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
            std::vector<session_event> evs;
            s->on_session_event([&](const session_event& e) { evs.push_back(e); });
            EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
            fr.drop_all();
            EXPECT_TRUE(co_await eventually([&] { return has(evs, kind::restored); }));
            EXPECT_EQ(kinds(evs), (std::vector<kind>{kind::lost, kind::reconnecting, kind::reconnecting, kind::restored}));
            EXPECT_EQ(evs[2].error.code, errc::cannot_create_session);
            EXPECT_EQ(evs[2].error.detail, "try later");
            EXPECT_EQ(evs[3].attempt, 2u);
            EXPECT_EQ(evs[3].category, "cat3");
            s->close();
        },
        fast_reconnect(), true);
    EXPECT_EQ(std::count(fr.ops.begin(), fr.ops.end(), "createSession"), 3);
    EXPECT_EQ(fr.accepted, 3);
}

TEST(session_client_reconnect, close_or_destroy_while_reconnecting_ends_it) {
    for (const bool destroy : {false, true}) {
        fake_router fr;
        script_router(fr);
        fr.run(
            [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
                std::vector<session_event> evs;
                s->on_session_event([&](const session_event& e) { evs.push_back(e); });
                std::optional<error_info> closed;
                s->on_close([&](const error_info& e) { closed = e; });
                EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
                fr.stop_listening();
                fr.drop_all();
                EXPECT_TRUE(co_await eventually([&] { return evs.size() >= 3; }));
                if (destroy) EXPECT_FALSE(co_await s->async_destroy(asio::use_awaitable));
                else s->close();
                EXPECT_TRUE(co_await eventually([&] { return closed.has_value(); }));
                EXPECT_FALSE(*closed) << "closed as asked: " << closed->message();
                const auto n = evs.size();
                asio::steady_timer t(s->get_executor(), 200ms);  // several back-off periods
                co_await t.async_wait(nothrow_awaitable);
                EXPECT_EQ(evs.size(), n) << "no attempt after close";
                EXPECT_FALSE(s->is_reconnecting());
                auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
                EXPECT_EQ(r.error.code, errc::not_connected) << r.error.message();
            },
            fast_reconnect(), true);
        EXPECT_EQ(fr.accepted, 1);
    }
}

TEST(session_client_reconnect, without_the_option_a_loss_ends_the_session) {
    fake_router fr;
    script_router(fr);
    fr.run(
        [&](std::shared_ptr<session_client> s) -> asio::awaitable<void> {
            int events = 0;
            s->on_session_event([&](const session_event&) { ++events; });
            std::optional<error_info> closed;
            s->on_close([&](const error_info& e) { closed = e; });
            EXPECT_FALSE(co_await s->async_open(fr.address(), "u", "p", asio::use_awaitable));
            fr.drop_all();
            EXPECT_TRUE(co_await eventually([&] { return closed.has_value(); }));
            EXPECT_EQ(closed->code, errc::connection_lost);
            EXPECT_FALSE(s->is_reconnecting());
            auto r = co_await s->async_invoke(say_hello(), asio::use_awaitable);
            EXPECT_EQ(r.error.code, errc::connection_lost);
            EXPECT_EQ(events, 0);
        },
        session_options{}, true);
    EXPECT_EQ(fr.accepted, 1);
}

TEST(session_client_reconnect, a_failed_open_is_not_retried) {
    asio::io_context ioc;
    std::uint16_t port;
    {
        tcp::acceptor a(ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
        port = a.local_endpoint().port();
    }
    auto s = session_client::create(ioc.get_executor(), fast_reconnect());
    int events = 0;
    s->on_session_event([&](const session_event&) { ++events; });
    auto f = s->async_open({"127.0.0.1", port}, "u", "p", asio::use_future);
    ioc.run_for(300ms);
    EXPECT_EQ(f.get().code, asio::error::connection_refused);
    EXPECT_FALSE(s->is_reconnecting());
    EXPECT_EQ(events, 0);
}

TEST(session_client_reconnect, event_kind_names) {
    EXPECT_STREQ(to_string(kind::lost), "lost");
    EXPECT_STREQ(to_string(kind::reconnecting), "reconnecting");
    EXPECT_STREQ(to_string(kind::restored), "restored");
    EXPECT_STREQ(to_string(kind::gave_up), "gave_up");
}

}  // namespace
}  // namespace moraine::client
