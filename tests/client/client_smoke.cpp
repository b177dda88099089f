// Integration test of moraine::client against a running router (moraine-router or glacier2router)
// and the Python Demo back end of tests/interop (Demo.ice). Driven by run_client_tests.py.
//
//   client_smoke --router "tcp -h 127.0.0.1 -p 4063" --hello "hello:tcp -h 127.0.0.1 -p 4061"
//                [--user alice] [--password secret] [--sessions 200] [--idle SECONDS] [--no-callbacks]
//                [--measure N [--hold SECONDS]] [--open-only [--expect-error TEXT]]
//                [--tls-ca FILE] [--tls-cert FILE] [--tls-key FILE] [--tls-key-password P]
//                [--tls-server-name NAME] [--secure]
//
// Prints one `ok <step>` line per check that held, and exits 1 at the first that did not.
// --idle: only the keep-alive check (a router with a short SessionTimeout): a session with
// heartbeats survives SECONDS of silence, one without them is dropped.
// --measure: only opens N idle sessions at once and prints the RSS they added per session.
// --hold: then waits SECONDS, the sessions still open, before destroying them (for a heap
// profiler: kill the process by its PID meanwhile, and what it held is reported as leaked).
// --open-only: no back end (no --hello): opens --sessions sessions at once on one thread, then
// destroys them, and the same once with std::future from another thread. With --expect-error,
// opens one session that must fail with a message containing TEXT.
// TLS: a `--router "ssl -h H -p P"` (or `wss`) endpoint needs --tls-ca (else the library refuses it:
// errc::tls_not_configured); --tls-cert/--tls-key: the client certificate; --tls-server-name:
// also check the router certificate's name. --secure: createSessionFromSecureConnection
// (authenticated by the client certificate) instead of createSession(user, password); the
// wrong-password check is then skipped.

#include "check.hpp"

#include <moraine/client/params.hpp>
#include <moraine/client/session_client.hpp>
#include <moraine/client/tls_context.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <chrono>
#include <malloc.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = moraine::client::asio;
namespace client = moraine::client;
namespace protocol = moraine::protocol;
using client::errc;
using namespace std::chrono_literals;

struct options {
    std::string router, hello, user = "alice", password = "secret";
    int sessions = 200;
    int idle = 0;
    int measure = 0;
    int hold = 0;  // --measure: seconds to wait, sessions open, after measuring
    bool callbacks = true;
    bool open_only = false;
    std::optional<std::string> expect_error;
    client::tls_options tls;
    bool tls_given = false;  // any --tls-* option
    bool secure = false;
    bool forward_context = false;  // the router forwards contexts (Glacier2.Client.ForwardContext=1)
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
        else if (a == "--sessions") o.sessions = std::stoi(value());
        else if (a == "--idle") o.idle = std::stoi(value());
        else if (a == "--no-callbacks") o.callbacks = false;
        else if (a == "--measure") o.measure = std::stoi(value());
        else if (a == "--hold") o.hold = std::stoi(value());
        else if (a == "--open-only") o.open_only = true;
        else if (a == "--expect-error") o.expect_error = value();
        else if (a == "--tls-ca") o.tls.ca_file = value(), o.tls_given = true;
        else if (a == "--tls-cert") o.tls.cert_file = value(), o.tls_given = true;
        else if (a == "--tls-key") o.tls.key_file = value(), o.tls_given = true;
        else if (a == "--tls-key-password") o.tls.key_password = value(), o.tls_given = true;
        else if (a == "--tls-server-name") o.tls.server_name = value(), o.tls_given = true;
        else if (a == "--secure") o.secure = true;
        else if (a == "--forward-context") o.forward_context = true;
        else fail("args", "unknown option " + a);
    }
    if (o.router.empty()) fail("args", "--router is required");
    if (o.hello.empty() && !o.open_only) fail("args", "--hello is required (or --open-only)");
    if (o.expect_error && !o.open_only) fail("args", "--expect-error needs --open-only");
    return o;
}

long rss_kib() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return 0;
}

struct fixture {
    options opt;
    client::router_address router;
    protocol::proxy hello;
    client::session_options session_opts;
};

/// Opens `s` as the options say: createSessionFromSecureConnection with --secure, else
/// createSession(user, password). Any completion token.
template <class Token>
auto open_with(const fixture& f, client::session_client& s, Token&& token) {
    if (f.opt.secure) return s.async_open_secure(f.router, std::forward<Token>(token));
    return s.async_open(f.router, f.opt.user, f.opt.password, std::forward<Token>(token));
}

client::call say_hello(const protocol::proxy& target, std::string name) {
    return {target, "sayHello", client::encode_string_params(name)};
}

std::string result_string(const client::call_result& r) {
    auto s = client::decode_string_result(r.encaps);
    return s ? *s : "<not a string>";
}

asio::awaitable<std::shared_ptr<client::session_client>> open_session(const fixture& f, std::string step,
                                                                      client::session_options so) {
    auto ex = co_await asio::this_coro::executor;
    auto s = client::session_client::create(ex, so);
    auto err = co_await open_with(f, *s, asio::use_awaitable);
    expect(!err, step, "async_open: " + err.message());
    co_return s;
}

asio::awaitable<void> check_denied(const fixture& f) {
    auto s = client::session_client::create(co_await asio::this_coro::executor, f.session_opts);
    auto err = co_await s->async_open(f.router, f.opt.user, "wrong-password", asio::use_awaitable);
    expect(err.code == errc::permission_denied, "permission_denied", "got " + err.message());
    expect(!err.detail.empty(), "permission_denied", "no reason");
    pass("permission_denied reason='" + err.detail + "'");
}

asio::awaitable<void> check_twoway(const fixture& f, client::session_client& s) {
    auto r = co_await s.async_invoke(say_hello(f.hello, "bob"), asio::use_awaitable);
    expect(r.ok(), "sayHello", r.error.message());
    expect(result_string(r) == "hello bob", "sayHello", "got '" + result_string(r) + "'");
    pass("sayHello -> '" + result_string(r) + "'");
    // The same identity again: served from the routing cache (no second addProxies).
    r = co_await s.async_invoke(say_hello(f.hello, "again"), asio::use_awaitable);
    expect(r.ok() && result_string(r) == "hello again", "sayHello(cached)", r.error.message());
    pass("sayHello again");
}

asio::awaitable<void> check_user_exception(const fixture& f, client::session_client& s) {
    // A named call, not a braced temporary inside co_await: g++ 12 relocates such temporaries
    // bitwise into the coroutine frame, which breaks std::string (see client/README.md).
    client::call fail_call{f.hello, "fail", client::encode_string_params("kaboom")};
    auto r = co_await s.async_invoke(std::move(fail_call), asio::use_awaitable);
    expect(r.error.code == errc::user_exception, "fail", "got " + r.error.message());
    expect(r.error.detail == "::Demo::Boom", "fail", "type id '" + r.error.detail + "'");
    auto ex = protocol::decode_user_exception(r.encaps);
    expect(ex.has_value(), "fail", "undecodable exception");
    protocol::input_stream in(ex->members);
    expect(in.read_string() == "kaboom" && in.ok(), "fail", "Boom.why is not 'kaboom'");
    pass("fail -> ::Demo::Boom(kaboom)");
}

// A 20,000-byte request sent compressed (bzip2, status 2): the router inflates it and the back
// end answers the whole name.
asio::awaitable<void> check_compressed(const fixture& f, client::session_client& s) {
    const std::string name(20'000, 'z');
    client::call c = say_hello(f.hello, name);
    c.compress = true;
    auto r = co_await s.async_invoke(std::move(c), asio::use_awaitable);
    expect(r.ok(), "compressed", r.error.message());
    expect(result_string(r) == "hello " + name, "compressed", "wrong answer to a compressed request");
    pass("sayHello(20,000 bytes) sent compressed -> answered");
}

// The call's context reaches the back end only when the router forwards contexts.
asio::awaitable<void> check_context(const fixture& f, client::session_client& s) {
    client::call c = say_hello(f.hello, "ctx");
    c.context = {{"k", "v"}, {"trace", "client-smoke"}};
    auto r = co_await s.async_invoke(std::move(c), asio::use_awaitable);
    expect(r.ok(), "context", r.error.message());
    client::call last{f.hello, "lastContext", client::empty_params()};
    r = co_await s.async_invoke(std::move(last), asio::use_awaitable);
    expect(r.ok(), "context", "lastContext: " + r.error.message());
    std::map<std::string, std::string> seen;
    const auto ec = client::decode_results(r.encaps, [&](protocol::input_stream& in) {
        const auto n = in.read_size();
        for (std::int32_t i = 0; i < n && in.ok(); ++i) {
            std::string k(in.read_string());
            seen[k] = std::string(in.read_string());
        }
    });
    expect(!ec, "context", "undecodable lastContext result");
    const std::map<std::string, std::string> want =
        f.opt.forward_context ? std::map<std::string, std::string>{{"k", "v"}, {"trace", "client-smoke"}}
                              : std::map<std::string, std::string>{};
    expect(seen == want, "context", "the back end saw " + std::to_string(seen.size()) + " context entries");
    pass(f.opt.forward_context ? "context {k: v, trace: client-smoke} reached the back end"
                               : "context not forwarded (ForwardContext=0)");
}

asio::awaitable<void> check_not_exist(const fixture& f, client::session_client& s) {
    auto nobody = f.hello;
    nobody.id = protocol::identity{"nobody", ""};
    auto r = co_await s.async_invoke(say_hello(nobody, "x"), asio::use_awaitable);
    expect(r.error.code == errc::object_not_exist, "object_not_exist", "got " + r.error.message());
    expect(r.not_exist && r.not_exist->id.name == "nobody" && r.not_exist->operation == "sayHello",
           "object_not_exist", "detail " + r.error.detail);
    pass("unknown identity -> object_not_exist (" + r.error.detail + ")");
}

asio::awaitable<void> check_oneway(const fixture& f, client::session_client& s) {
    const std::string tag = "client-smoke-" + std::to_string(::getpid());
    for (int i = 0; i < 5; ++i) {
        client::call note{f.hello, "note", client::encode_string_params(tag)};
        auto err = co_await s.async_send_oneway(std::move(note), asio::use_awaitable);
        expect(!err, "oneway", err.message());
    }
    asio::steady_timer t(co_await asio::this_coro::executor);
    int count = 0;
    for (int tries = 0; tries < 50 && count < 5; ++tries) {
        client::call count_of{f.hello, "countOf", client::encode_string_params(tag)};
        auto r = co_await s.async_invoke(std::move(count_of), asio::use_awaitable);
        expect(r.ok(), "oneway", "countOf: " + r.error.message());
        (void)client::decode_results(r.encaps, [&](protocol::input_stream& in) { count = in.read_int(); });
        if (count < 5) {
            t.expires_after(100ms);
            co_await t.async_wait(asio::use_awaitable);
        }
    }
    expect(count == 5, "oneway", "countOf = " + std::to_string(count));
    pass("5 oneway notes arrived");
}

/// Waits up to 5 s for `got` to contain `msg`.
asio::awaitable<bool> wait_for(const std::vector<std::string>& got, const std::string& msg) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    for (int i = 0; i < 100; ++i) {
        for (const auto& g : got)
            if (g == msg) co_return true;
        t.expires_after(50ms);
        co_await t.async_wait(asio::use_awaitable);
    }
    co_return false;
}

asio::awaitable<void> check_callbacks(const fixture& f, client::session_client& s) {
    auto got = std::make_shared<std::vector<std::string>>();
    const auto cb = s.add_servant("cb", [got](const client::incoming_request& r) {
        if (r.operation != "ping") return client::dispatch_result::not_exist(protocol::reply_status::operation_not_exist);
        std::string msg;
        (void)client::decode_results(r.params.bytes, [&](protocol::input_stream& in) { msg = in.read_string(); });
        got->push_back(msg);
        return client::dispatch_result::ok();
    });
    expect(!cb.is_nil() && cb.id.category == s.category(), "callback", "no server proxy");
    auto params = [&](const std::string& msg) {
        return client::encode_params([&](protocol::output_stream& out) {
            protocol::write_proxy(out, cb);
            out.write_string(msg);
        });
    };
    client::call ring{f.hello, "callMeBack", params("ring")};
    auto r = co_await s.async_invoke(std::move(ring), asio::use_awaitable);
    expect(r.ok(), "callback", "callMeBack: " + r.error.message());
    expect(!got->empty() && got->back() == "ring", "callback", "servant did not get 'ring'");
    pass("callMeBack -> servant got 'ring' (category " + std::to_string(s.category().size()) + " chars)");
    client::call ring_oneway{f.hello, "callMeBackOneway", params("ring-oneway")};
    r = co_await s.async_invoke(std::move(ring_oneway), asio::use_awaitable);
    expect(r.ok(), "callback_oneway", r.error.message());
    expect(co_await wait_for(*got, "ring-oneway"), "callback_oneway", "servant did not get 'ring-oneway'");
    pass("callMeBackOneway -> servant got 'ring-oneway'");
    // A callback to a name we do not host: the back end gets ObjectNotExist, and tells us so.
    auto ghost = cb;
    ghost.id.name = "ghost";
    auto gp = client::encode_params([&](protocol::output_stream& out) {
        protocol::write_proxy(out, ghost);
        out.write_string("boo");
    });
    client::call ghost_call{f.hello, "callMeBack", gp};
    r = co_await s.async_invoke(std::move(ghost_call), asio::use_awaitable);
    expect(r.error.code == errc::unknown_local || r.error.code == errc::object_not_exist, "callback_unknown",
           "got " + r.error.message());
    expect(r.error.detail.find("ObjectNotExist") != std::string::npos || r.error.code == errc::object_not_exist,
           "callback_unknown", "detail " + r.error.detail);
    pass("callback to an unhosted name -> ObjectNotExist at the back end");
}

/// Opens `n` sessions at once on this thread, one sayHello each, then destroys them.
asio::awaitable<void> check_many(const fixture& f, int n) {
    auto ex = co_await asio::this_coro::executor;
    const long rss_before = rss_kib();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<client::session_client>> sessions;
    int pending = n, failures = 0;
    std::string first_error;
    asio::steady_timer done(ex, std::chrono::steady_clock::time_point::max());
    auto finish = [&](const std::string& err) {
        if (!err.empty() && failures++ == 0) first_error = err;
        if (--pending == 0) done.cancel();
    };
    for (int i = 0; i < n; ++i) {
        auto s = client::session_client::create(ex, f.session_opts);
        sessions.push_back(s);
        // Callback completion style: the whole chain runs with plain handlers.
        open_with(f, *s, [&, s, i](client::error_info err) {
            if (err) return finish("open: " + err.message());
            s->async_invoke(say_hello(f.hello, "s" + std::to_string(i)), [&, i](client::call_result r) {
                if (!r.ok()) return finish("sayHello: " + r.error.message());
                const auto want = "hello s" + std::to_string(i);
                finish(result_string(r) == want ? "" : "got '" + result_string(r) + "'");
            });
        });
    }
    co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    expect(failures == 0, "many_sessions", std::to_string(failures) + " failed, first: " + first_error);
    const long rss_after = rss_kib();
    pass(std::to_string(n) + " concurrent sessions opened + 1 call each in " + std::to_string(ms.count()) +
         " ms; RSS +" + std::to_string(rss_after - rss_before) + " KiB = " +
         std::to_string((rss_after - rss_before) * 1024 / n) + " B per session (incl. routing cache, 1 call)");
    int destroyed = 0;
    for (auto& s : sessions) {
        auto err = co_await s->async_destroy(asio::use_awaitable);
        if (!err) ++destroyed;
    }
    expect(destroyed == n, "many_sessions_destroy", std::to_string(n - destroyed) + " destroy failures");
    pass(std::to_string(n) + " sessions destroyed");
}

asio::awaitable<void> check_destroy(const fixture& f, std::shared_ptr<client::session_client> s) {
    bool closed_cb = false;
    s->on_close([&](const client::error_info& why) { closed_cb = !why; });
    auto err = co_await s->async_destroy(asio::use_awaitable);
    expect(!err, "destroy", err.message());
    expect(!s->is_open(), "destroy", "still open");
    auto r = co_await s->async_invoke(say_hello(f.hello, "late"), asio::use_awaitable);
    expect(r.error.code == errc::not_connected, "destroy", "call after destroy: " + r.error.message());
    asio::steady_timer t(co_await asio::this_coro::executor, 10ms);
    co_await t.async_wait(asio::use_awaitable);
    expect(closed_cb, "destroy", "on_close not called with an empty error");
    pass("destroySession + graceful close; later call -> not_connected");
}

asio::awaitable<void> check_keepalive(const fixture& f) {
    auto with = co_await open_session(f, "keepalive", f.session_opts);
    auto no_hb = f.session_opts;
    no_hb.keep_alive = false;
    auto without = co_await open_session(f, "keepalive", no_hb);
    expect(with->heartbeat_period().count() > 0, "keepalive", "no heartbeat period");
    auto r1 = co_await with->async_invoke(say_hello(f.hello, "a"), asio::use_awaitable);
    auto r2 = co_await without->async_invoke(say_hello(f.hello, "b"), asio::use_awaitable);
    expect(r1.ok() && r2.ok(), "keepalive", "first calls failed");
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::seconds(f.opt.idle));
    co_await t.async_wait(asio::use_awaitable);
    r1 = co_await with->async_invoke(say_hello(f.hello, "a2"), asio::use_awaitable);
    expect(r1.ok(), "keepalive", "session with heartbeats (every " + std::to_string(with->heartbeat_period().count()) +
                                     " ms) lost after idling: " + r1.error.message());
    r2 = co_await without->async_invoke(say_hello(f.hello, "b2"), asio::use_awaitable);
    expect(!r2.ok(), "keepalive", "session without heartbeats survived: the test proves nothing");
    expect(r2.error.code == errc::connection_lost, "keepalive", "dropped session: " + r2.error.message());
    pass("idle " + std::to_string(f.opt.idle) + " s: with heartbeats every " +
         std::to_string(with->heartbeat_period().count()) + " ms alive; without: " + r2.error.message());
    (void)co_await with->async_destroy(asio::use_awaitable);
}

/// Opens `n` sessions concurrently, makes no call, and reports the RSS growth per idle session.
asio::awaitable<void> measure_idle(const fixture& f, int n) {
    auto ex = co_await asio::this_coro::executor;
    const long before = rss_kib();
    const auto heap_before = ::mallinfo2().uordblks;
    std::vector<std::shared_ptr<client::session_client>> sessions;
    sessions.reserve(n);
    int pending = n, failures = 0;
    std::map<std::string, int> errors;
    asio::steady_timer done(ex, std::chrono::steady_clock::time_point::max());
    for (int i = 0; i < n; ++i) {
        sessions.push_back(client::session_client::create(ex, f.session_opts));
        open_with(f, *sessions.back(), [&](client::error_info err) {
            if (err) ++failures, ++errors[err.message()];
            if (--pending == 0) done.cancel();
        });
    }
    co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
    std::string why;
    for (const auto& [e, count] : errors) why += " [" + std::to_string(count) + "x " + e + "]";
    expect(failures == 0, "measure", std::to_string(failures) + " opens failed:" + why);
    const long peak = rss_kib();
    ::malloc_trim(0);  // give back what the set-up calls freed: what stays is what idle sessions hold
    const long after = rss_kib();
    const auto heap = (::mallinfo2().uordblks - heap_before) / static_cast<std::size_t>(n);
    pass(std::to_string(n) + " idle sessions: heap in use " + std::to_string(heap) + " B per session");
    pass(std::to_string(n) + " idle sessions: RSS +" + std::to_string(peak - before) + " KiB after opening, +" +
         std::to_string(after - before) + " KiB after malloc_trim = " +
         std::to_string((after - before) * 1024 / n) + " B per session (user space; kernel socket buffers not included)");
    if (f.opt.hold > 0) {
        std::cout << "holding " << f.opt.hold << " s" << std::endl;
        std::this_thread::sleep_for(std::chrono::seconds(f.opt.hold));  // blocks the loop: nothing changes
    }
    for (auto& s : sessions) (void)co_await s->async_destroy(asio::use_awaitable);
}

/// --open-only --expect-error: one open that must fail, with TEXT in its message.
asio::awaitable<void> check_open_fails(const fixture& f, const std::string& text) {
    auto s = client::session_client::create(co_await asio::this_coro::executor, f.session_opts);
    auto err = co_await open_with(f, *s, asio::use_awaitable);
    expect(bool(err), "open_fails", "the session opened");
    expect(err.message().find(text) != std::string::npos, "open_fails",
           "message '" + err.message() + "' lacks '" + text + "'");
    expect(!s->is_open(), "open_fails", "session open after a failed open");
    pass("open failed as expected: " + err.message());
}

/// --open-only: `n` sessions opened at once on this thread (no back-end call), then destroyed.
asio::awaitable<void> check_open_only(const fixture& f, int n) {
    auto ex = co_await asio::this_coro::executor;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<client::session_client>> sessions;
    int pending = n, failures = 0;
    std::string first_error;
    asio::steady_timer done(ex, std::chrono::steady_clock::time_point::max());
    for (int i = 0; i < n; ++i) {
        sessions.push_back(client::session_client::create(ex, f.session_opts));
        open_with(f, *sessions.back(), [&](client::error_info err) {
            if (err && failures++ == 0) first_error = err.message();
            if (--pending == 0) done.cancel();
        });
    }
    co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    expect(failures == 0, "open",
           std::to_string(failures) + " of " + std::to_string(n) + " failed, first: " + first_error);
    pass(std::to_string(n) + (f.opt.secure ? " createSessionFromSecureConnection" : " createSession") +
         " sessions open at once in " + std::to_string(ms.count()) + " ms (heartbeat " +
         std::to_string(sessions.front()->heartbeat_period().count()) + " ms)");
    int destroyed = 0;
    for (auto& s : sessions) {
        auto err = co_await s->async_destroy(asio::use_awaitable);
        if (!err) ++destroyed;
        else if (destroyed == 0) first_error = err.message();
    }
    expect(destroyed == n, "destroy", std::to_string(n - destroyed) + " destroy failures, first: " + first_error);
    pass(std::to_string(n) + " sessions destroyed");
}

asio::awaitable<void> run_all(const fixture& f) {
    if (f.opt.open_only && f.opt.expect_error) co_return co_await check_open_fails(f, *f.opt.expect_error);
    if (f.opt.open_only) co_return co_await check_open_only(f, f.opt.sessions);
    if (f.opt.measure > 0) co_return co_await measure_idle(f, f.opt.measure);
    if (f.opt.idle > 0) co_return co_await check_keepalive(f);
    if (!f.opt.secure) co_await check_denied(f);
    auto s = co_await open_session(f, "open", f.session_opts);
    pass("createSession (category '" + std::string(s->category().empty() ? "" : "…") + "', heartbeat " +
         std::to_string(s->heartbeat_period().count()) + " ms)");
    co_await check_twoway(f, *s);
    co_await check_user_exception(f, *s);
    co_await check_not_exist(f, *s);
    co_await check_compressed(f, *s);
    co_await check_context(f, *s);
    if (f.opt.forward_context) co_return;  // the context run stops here
    co_await check_oneway(f, *s);
    if (f.opt.callbacks) co_await check_callbacks(f, *s);
    co_await check_many(f, f.opt.sessions);
    co_await check_destroy(f, s);
}

/// From another thread: the same API with std::future completions.
void check_future(const fixture& f, asio::io_context& ioc) {
    auto s = client::session_client::create(ioc.get_executor(), f.session_opts);
    auto err = open_with(f, *s, asio::use_future).get();
    expect(!err, "future", "open: " + err.message());
    if (!f.opt.open_only) {
        auto r = s->async_invoke(say_hello(f.hello, "future"), asio::use_future).get();
        expect(r.ok() && result_string(r) == "hello future", "future", r.error.message());
    }
    err = s->async_destroy(asio::use_future).get();
    expect(!err, "future", "destroy: " + err.message());
    pass(f.opt.open_only ? "use_future from another thread: open, destroy"
                         : "use_future from another thread: open, sayHello, destroy");
}

}  // namespace

int main(int argc, char** argv) {
    fixture f;
    f.opt = parse(argc, argv);
    auto router = client::router_address::parse(f.opt.router);
    if (!router) fail("args", "bad router endpoint " + f.opt.router);
    f.router = *router;
    if (!f.opt.open_only) {
        auto hello = protocol::proxy_from_string(f.opt.hello);
        if (!hello) fail("args", "bad proxy " + f.opt.hello);
        f.hello = *hello;
    }
    if (f.opt.tls_given) {  // else an ssl or wss --router is refused by the library (errc::tls_not_configured)
        client::error_info err;
        f.session_opts.tls = client::tls_context::create(f.opt.tls, err);
        if (!f.session_opts.tls) fail("tls", err.message());
    }
    f.session_opts.call_timeout = 10s;
    f.session_opts.connect_timeout = 5s;
    if (f.opt.measure > 0) f.session_opts.call_timeout = 60s, f.session_opts.connect_timeout = 30s;  // thousands at once

    asio::io_context ioc(1);
    auto work = asio::make_work_guard(ioc);
    std::thread io([&] { ioc.run(); });
    auto done = asio::co_spawn(ioc, run_all(f), asio::use_future);
    try {
        done.get();
    } catch (const std::exception& e) {
        fail("run", std::string("exception: ") + e.what());
    }
    if (f.opt.idle == 0 && f.opt.measure == 0 && !f.opt.expect_error) check_future(f, ioc);
    work.reset();
    ioc.stop();
    io.join();
    std::cout << "PASS" << std::endl;
    return 0;
}
