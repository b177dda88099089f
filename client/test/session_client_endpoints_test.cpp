// session_client over several router endpoints (router_endpoints): a random order per connection
// attempt, failover to the next endpoint on a refused connect or a router that never validates,
// the last error when none answers, and reconnection through a surviving router.
#include "fake_router.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

namespace moraine::client {
namespace {

using namespace std::chrono_literals;
using test::fake_router;

/// A loopback port nobody listens on: connects to it are refused at once.
std::uint16_t dead_port(asio::io_context& ioc) {
    tcp::acceptor a(ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    return a.local_endpoint().port();  // closed on return
}

router_address dead_address(asio::io_context& ioc) { return {"127.0.0.1", dead_port(ioc)}; }

/// Opens `n` sessions one after the other with `routers`, on `ioc`; runs it until they are all
/// opened (or `limit`). @return each open's result; the sessions stay open in `sessions`.
std::vector<error_info> open_n(asio::io_context& ioc, const router_endpoints& routers, std::size_t n,
                               std::vector<std::shared_ptr<session_client>>& sessions, session_options so = {},
                               std::chrono::milliseconds limit = 10s) {
    std::vector<error_info> results;
    bool finished = false;
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> {
        for (std::size_t i = 0; i < n; ++i) {
            auto s = session_client::create(ioc.get_executor(), so);
            sessions.push_back(s);
            results.push_back(co_await s->async_open(routers, "u", "p", asio::use_awaitable));
        }
        finished = true;
    }, asio::detached);
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!finished && std::chrono::steady_clock::now() < end) ioc.run_one_for(50ms);
    EXPECT_TRUE(finished) << "the opens did not finish within " << limit.count() << " ms";
    return results;
}

/// Closes the sessions and lets their coroutines end.
void close_all(asio::io_context& ioc, std::vector<std::shared_ptr<session_client>>& sessions) {
    for (auto& s : sessions) s->close();
    sessions.clear();
    ioc.run_for(20ms);
}

TEST(session_client_endpoints, a_dead_endpoint_in_the_list_is_skipped) {
    asio::io_context ioc(1);
    fake_router live(ioc);
    asio::co_spawn(ioc, live.serve_all(), asio::detached);
    // Two dead endpoints and one live one: with a random order per attempt, 20 opens try a dead
    // one first about 13 times (never: probability (1/3)^20), and each must still open.
    const router_endpoints routers{dead_address(ioc), live.address(), dead_address(ioc)};
    std::vector<std::shared_ptr<session_client>> sessions;
    const auto results = open_n(ioc, routers, 20, sessions);
    for (const auto& r : results) EXPECT_FALSE(r) << r.message();
    for (const auto& s : sessions) EXPECT_TRUE(s->is_open());
    EXPECT_EQ(live.accepted, 20) << "every session on the live router, one connection each";
    EXPECT_EQ(std::count(live.ops.begin(), live.ops.end(), "createSession"), 20);
    close_all(ioc, sessions);
}

TEST(session_client_endpoints, a_router_that_never_validates_costs_one_connect_timeout) {
    asio::io_context ioc(1);
    fake_router silent(ioc), live(ioc);
    silent.greeting.clear();  // accepts, never sends validate connection
    asio::co_spawn(ioc, silent.serve_all(), asio::detached);
    asio::co_spawn(ioc, live.serve_all(), asio::detached);
    session_options so;
    so.connect_timeout = 150ms;
    std::vector<std::shared_ptr<session_client>> sessions;
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = open_n(ioc, {silent.address(), live.address()}, 8, sessions, so);
    const auto took = std::chrono::steady_clock::now() - t0;
    for (const auto& r : results) EXPECT_FALSE(r) << r.message();
    EXPECT_EQ(std::count(live.ops.begin(), live.ops.end(), "createSession"), 8);
    EXPECT_GT(silent.accepted, 0) << "8 opens never tried the silent router first (probability 1/256)";
    // Each try of the silent router costs one connect_timeout, then the live router is tried.
    EXPECT_GE(took, so.connect_timeout * silent.accepted);
    EXPECT_LT(took, so.connect_timeout * silent.accepted + 400ms) << "a timeout is per endpoint, not more";
    close_all(ioc, sessions);
}

TEST(session_client_endpoints, sessions_spread_over_live_routers) {
    asio::io_context ioc(1);
    fake_router a(ioc), b(ioc);
    asio::co_spawn(ioc, a.serve_all(), asio::detached);
    asio::co_spawn(ioc, b.serve_all(), asio::detached);
    std::vector<std::shared_ptr<session_client>> sessions;
    const auto results = open_n(ioc, {a.address(), b.address()}, 40, sessions);
    for (const auto& r : results) EXPECT_FALSE(r) << r.message();
    const auto on_a = std::count(a.ops.begin(), a.ops.end(), "createSession");
    const auto on_b = std::count(b.ops.begin(), b.ops.end(), "createSession");
    EXPECT_EQ(on_a + on_b, 40);
    EXPECT_EQ(a.accepted + b.accepted, 40) << "a live first choice is kept: one connection per session";
    // Random order per attempt: all 40 on one router has probability 2 x 2^-40.
    EXPECT_GT(on_a, 0) << "no session on router a: the order is not random";
    EXPECT_GT(on_b, 0) << "no session on router b: the order is not random";
    std::cout << "[          ] 40 sessions: " << on_a << " on a, " << on_b << " on b\n";
    close_all(ioc, sessions);
}

TEST(session_client_endpoints, all_dead_reports_the_last_error_and_closes) {
    asio::io_context ioc(1);
    std::vector<std::shared_ptr<session_client>> sessions;
    std::optional<error_info> closed;
    const router_endpoints routers{dead_address(ioc), dead_address(ioc), dead_address(ioc)};
    bool finished = false;
    error_info result;
    auto s = session_client::create(ioc.get_executor());
    s->on_close([&](const error_info& e) { closed = e; });
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> {
        result = co_await s->async_open(routers, "u", "p", asio::use_awaitable);
        finished = true;
    }, asio::detached);
    ioc.run_for(2s);
    ASSERT_TRUE(finished);
    EXPECT_EQ(result.code, asio::error::connection_refused) << result.message();
    EXPECT_FALSE(s->is_open());
    ASSERT_TRUE(closed) << "on_close once, after the last endpoint failed";
    EXPECT_EQ(closed->code, asio::error::connection_refused);
}

TEST(session_client_endpoints, an_empty_list_is_refused) {
    asio::io_context ioc(1);
    auto s = session_client::create(ioc.get_executor());
    auto f = s->async_open(router_endpoints{}, "u", "p", asio::use_future);
    ioc.run_for(200ms);
    EXPECT_EQ(f.get().code, errc::bad_endpoint);
}

TEST(session_client_endpoints, an_ssl_endpoint_anywhere_in_the_list_needs_tls_options) {
    asio::io_context ioc(1);
    fake_router live(ioc);
    asio::co_spawn(ioc, live.serve_all(), asio::detached);
    auto s = session_client::create(ioc.get_executor());
    router_address ssl{"127.0.0.1", dead_port(ioc), true};
    auto f = s->async_open(router_endpoints{live.address(), ssl}, "u", "p", asio::use_future);
    ioc.run_for(200ms);
    EXPECT_EQ(f.get().code, errc::tls_not_configured) << "never tried over tcp instead";
    EXPECT_EQ(live.accepted, 0) << "refused before connecting anywhere";
}

TEST(session_client_endpoints, a_session_whose_router_dies_reconnects_through_the_other) {
    asio::io_context ioc(1);
    fake_router a(ioc), b(ioc);
    asio::co_spawn(ioc, a.serve_all(), asio::detached);
    asio::co_spawn(ioc, b.serve_all(), asio::detached);
    session_options so;
    so.reconnect = reconnect_options{.backoff = {.initial_delay = 20ms, .max_delay = 80ms}, .max_attempts = 0};
    // Several sessions, so that both routers hold some (2 x 2^-10 that they do not) and the
    // survivor must take the others' sessions, whichever order each attempt draws.
    std::vector<std::shared_ptr<session_client>> sessions;
    const auto results = open_n(ioc, {a.address(), b.address()}, 10, sessions, so);
    for (const auto& r : results) EXPECT_FALSE(r) << r.message();
    int lost = 0, restored = 0;
    for (auto& s : sessions)
        s->on_session_event([&](const session_event& e) {
            lost += e.kind == session_event_kind::lost;
            restored += e.kind == session_event_kind::restored;
        });
    const int on_a = a.accepted;
    ASSERT_GT(on_a, 0);
    ASSERT_LT(on_a, 10);
    a.stop_listening();  // router a dies: its connections end, its port refuses
    a.drop_all();
    for (auto end = std::chrono::steady_clock::now() + 5s; restored < on_a && std::chrono::steady_clock::now() < end;)
        ioc.run_one_for(20ms);
    EXPECT_EQ(lost, on_a);
    EXPECT_EQ(restored, on_a) << "every session of router a restored";
    EXPECT_TRUE(std::all_of(sessions.begin(), sessions.end(), [](const auto& s) { return s->is_open(); }));
    EXPECT_EQ(a.accepted, on_a) << "nothing reached the dead router";
    EXPECT_EQ(b.accepted, 10) << "router b took the " << on_a << " sessions of router a";
    close_all(ioc, sessions);
}

}  // namespace
}  // namespace moraine::client
