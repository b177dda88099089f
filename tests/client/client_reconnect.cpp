// Integration test of moraine::client's reconnection (session_options::reconnect) against a real
// router that the driver, tests/client/reconnect_test.py, kills and restarts, with the Python
// Demo back end of tests/interop (Demo.ice).
//
//   client_reconnect --router "tcp -h 127.0.0.1 -p 4063" --hello "hello:tcp -h 127.0.0.1 -p 4061"
//                    (--router may list several endpoints, `:`-separated: the session tries
//                    them in a random order, client::router_endpoints)
//                    [--user alice] [--password secret] [--initial-ms 100] [--max-ms 1000]
//                    [--max-attempts 8]
//
// Opens one session with reconnect on, hosts the servant `cb` and checks a callback reaches it
// (Demo::Hello::callMeBack), then prints `ready category=<c>` and waits for the router to go.
// It prints every session event as `event <kind> attempt=N delay=Dms category=C error=E`. While
// reconnecting, a call must fail at once with errc::reconnecting (`ok fail-fast`). After each
// `restored`: a new category, sayHello works, a callback through the new proxy reaches the
// servant, one through the proxy of the lost session does not (`restored-ok n=<restores>`).
// After `gave_up`: the session is closed, on_close said why, calls fail with connection_lost;
// then `PASS` and exit 0. Any check that does not hold: `FAIL <step>: <why>`, exit 1.

#include "check.hpp"

#include <moraine/client/params.hpp>
#include <moraine/client/session_client.hpp>
#include <moraine/protocol/proxy.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace asio = moraine::client::asio;
namespace client = moraine::client;
namespace protocol = moraine::protocol;
using client::errc;
using kind = client::session_event_kind;
using namespace std::chrono_literals;

struct options {
    std::string router, hello, user = "alice", password = "secret";
    int initial_ms = 100, max_ms = 1000;
    unsigned max_attempts = 8;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&] {
            if (i + 1 >= argc) fail("args", a + " needs a value");
            return std::string(argv[++i]);
        };
        if (a == "--router") o.router = value();
        else if (a == "--hello") o.hello = value();
        else if (a == "--user") o.user = value();
        else if (a == "--password") o.password = value();
        else if (a == "--initial-ms") o.initial_ms = std::stoi(value());
        else if (a == "--max-ms") o.max_ms = std::stoi(value());
        else if (a == "--max-attempts") o.max_attempts = static_cast<unsigned>(std::stoul(value()));
        else fail("args", "unknown option " + a);
    }
    if (o.router.empty() || o.hello.empty()) fail("args", "--router and --hello are required");
    return o;
}

/// The session under test and what its servant and callbacks saw.
struct state {
    options opt;
    protocol::proxy hello;
    std::shared_ptr<client::session_client> s;
    std::vector<std::string> pings;  // (category, message) seen by the servant, as "cat/msg"
    std::optional<client::error_info> closed;
    std::string category;            // of the session open now (or lost last)
    int restores = 0;
    bool checked_fail_fast = false;
    asio::steady_timer* done = nullptr;  // cancelled once gave_up was checked
};

/// callMeBack(cb, msg) on the back end: it calls cb->ping(msg) through the router.
asio::awaitable<client::call_result> ring(state& st, const protocol::proxy& cb, const std::string& msg) {
    auto params = client::encode_params([&](protocol::output_stream& out) {
        protocol::write_proxy(out, cb);
        out.write_string(msg);
    });
    client::call c{st.hello, "callMeBack", std::move(params)};
    co_return co_await st.s->async_invoke(std::move(c), asio::use_awaitable);
}

bool pinged(const state& st, const std::string& cat, const std::string& msg) {
    for (const auto& p : st.pings)
        if (p == cat + "/" + msg) return true;
    return false;
}

asio::awaitable<void> check_callback(state& st, const std::string& step) {
    const auto cb = st.s->server_proxy("cb");
    expect(!cb.is_nil() && cb.id.category == st.s->category(), step, "no server proxy under the session category");
    const std::string msg = "ring-" + std::to_string(st.restores);
    auto r = co_await ring(st, cb, msg);
    expect(r.ok(), step, "callMeBack: " + r.error.message());
    expect(pinged(st, st.s->category(), msg), step, "the servant did not get '" + msg + "'");
}

/// After `restored`: a new session that works, callbacks under the new category only.
asio::awaitable<void> check_restored(state& st, std::string lost_category) {
    const std::string step = "restored";
    expect(st.s->is_open(), step, "not open");
    expect(!st.s->category().empty() && st.s->category() != lost_category, step,
           "category unchanged: '" + st.s->category() + "'");
    client::call hi{st.hello, "sayHello", client::encode_string_params("again")};
    auto r = co_await st.s->async_invoke(std::move(hi), asio::use_awaitable);
    expect(r.ok(), step, "sayHello: " + r.error.message());
    expect(client::decode_string_result(r.encaps) == "hello again", step, "wrong sayHello answer");
    co_await check_callback(st, step);
    // The proxy handed out before the loss names the old category: no session of the new
    // router has it, so the back end's callback fails and our servant sees nothing.
    auto stale = st.s->server_proxy("cb");
    stale.id.category = lost_category;
    const std::string msg = "stale-" + std::to_string(st.restores);
    r = co_await ring(st, stale, msg);
    expect(!r.ok(), step, "a callback through the lost session's proxy succeeded");
    expect(!pinged(st, lost_category, msg), step, "the servant answered under the lost category");
    std::cout << "restored-ok n=" << st.restores << " category=" << st.s->category()
              << " stale-callback=" << r.error.message() << std::endl;
}

asio::awaitable<void> check_fail_fast(state& st) {
    const auto t0 = std::chrono::steady_clock::now();
    client::call hi{st.hello, "sayHello", client::encode_string_params("meanwhile")};
    auto r = co_await st.s->async_invoke(std::move(hi), asio::use_awaitable);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    if (!st.s->is_reconnecting()) co_return;  // restored meanwhile: nothing to conclude
    expect(r.error.code == errc::reconnecting, "fail-fast", "a call while reconnecting: " + r.error.message());
    expect(ms < 500ms, "fail-fast", "took " + std::to_string(ms.count()) + " ms");
    std::cout << "ok fail-fast " << ms.count() << "ms: " << r.error.message() << std::endl;
}

asio::awaitable<void> check_gave_up(state& st) {
    const std::string step = "gave_up";
    asio::steady_timer t(st.s->get_executor(), 20ms);
    co_await t.async_wait(asio::use_awaitable);  // on_close is posted after the event
    expect(!st.s->is_open() && !st.s->is_reconnecting(), step, "still open or reconnecting");
    expect(st.closed.has_value(), step, "on_close not called");
    expect(st.closed->code == errc::connection_lost, step, "on_close: " + st.closed->message());
    client::call hi{st.hello, "sayHello", client::encode_string_params("late")};
    auto r = co_await st.s->async_invoke(std::move(hi), asio::use_awaitable);
    expect(r.error.code == errc::connection_lost, step, "a call after gave_up: " + r.error.message());
    std::cout << "gave-up-ok on_close=" << st.closed->message() << std::endl;
    st.done->cancel();
}

void on_event(state& st, const client::session_event& e) {
    std::cout << "event " << client::to_string(e.kind) << " attempt=" << e.attempt << " delay=" << e.delay.count()
              << "ms category=" << e.category << " lost_category=" << e.lost_category
              << " error=" << (e.error ? e.error.message() : "-") << std::endl;
    auto ex = st.s->get_executor();
    auto report = [](std::exception_ptr p) {
        if (p) try { std::rethrow_exception(p); } catch (const std::exception& x) { fail("run", x.what()); }
    };
    switch (e.kind) {
    case kind::lost:
        expect(e.lost_category == st.category, "lost", "lost_category '" + e.lost_category + "'");
        expect(!st.s->is_open(), "lost", "still open");
        break;
    case kind::reconnecting:
        if (!st.checked_fail_fast) {
            st.checked_fail_fast = true;
            asio::co_spawn(ex, check_fail_fast(st), report);
        }
        break;
    case kind::restored:
        ++st.restores;
        st.category = e.category;
        expect(e.category == st.s->category(), "restored", "event category differs from category()");
        asio::co_spawn(ex, check_restored(st, e.lost_category), report);
        break;
    case kind::gave_up:
        expect(e.attempt == st.opt.max_attempts, "gave_up", "after " + std::to_string(e.attempt) + " attempts");
        expect(bool(e.error), "gave_up", "no error");
        asio::co_spawn(ex, check_gave_up(st), report);
        break;
    }
}

asio::awaitable<void> run(state& st, client::router_endpoints router) {
    auto ex = co_await asio::this_coro::executor;
    client::session_options so;
    so.call_timeout = 10s;
    so.connect_timeout = 3s;
    so.reconnect = client::reconnect_options{
        .backoff = {.initial_delay = std::chrono::milliseconds(st.opt.initial_ms),
                    .max_delay = std::chrono::milliseconds(st.opt.max_ms)},
        .max_attempts = st.opt.max_attempts};
    st.s = client::session_client::create(ex, so);
    st.s->on_session_event([&st](const client::session_event& e) { on_event(st, e); });
    st.s->on_close([&st](const client::error_info& why) { st.closed = why; });
    auto err = co_await st.s->async_open(router, st.opt.user, st.opt.password, asio::use_awaitable);
    expect(!err, "open", err.message());
    st.category = st.s->category();
    st.s->add_servant("cb", [&st](const client::incoming_request& r) {
        if (r.operation != "ping") return client::dispatch_result::not_exist(protocol::reply_status::operation_not_exist);
        std::string msg;
        (void)client::decode_results(r.params.bytes, [&](protocol::input_stream& in) { msg = in.read_string(); });
        st.pings.push_back(std::string(r.id.category) + "/" + msg);
        return client::dispatch_result::ok();
    });
    co_await check_callback(st, "open");
    std::cout << "ready category=" << st.category << " heartbeat=" << st.s->heartbeat_period().count() << "ms"
              << std::endl;
    asio::steady_timer done(ex, std::chrono::steady_clock::time_point::max());
    st.done = &done;
    co_await done.async_wait(asio::as_tuple(asio::use_awaitable));  // until gave_up was checked
}

}  // namespace

int main(int argc, char** argv) {
    state st;
    st.opt = parse(argc, argv);
    auto router = client::parse_router_endpoints(st.opt.router);
    if (!router) fail("args", "bad router endpoint " + st.opt.router);
    auto hello = protocol::proxy_from_string(st.opt.hello);
    if (!hello) fail("args", "bad proxy " + st.opt.hello);
    st.hello = *hello;
    asio::io_context ioc(1);
    bool finished = false;
    asio::co_spawn(ioc, run(st, *router), [&](std::exception_ptr e) {
        if (e) try { std::rethrow_exception(e); } catch (const std::exception& x) { fail("run", x.what()); }
        finished = true;
    });
    ioc.run();
    expect(finished, "run", "the event loop ended early");
    std::cout << "PASS" << std::endl;
    return 0;
}
