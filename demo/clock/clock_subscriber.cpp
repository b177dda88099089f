// clock-subscriber: opens N sessions through a Glacier2-compatible router with the Moraine client
// library; each subscribes its own Demo::Clock servant to an IceStorm topic and measures the
// latency and loss of the ticks it receives. One thread, many sessions. Over TLS with
// `--router "ssl -h H -p P" --tls-ca FILE [--tls-cert FILE --tls-key FILE] [--secure]` (or wss).
// `--reconnect`: sessions whose router connection is lost reconnect (session_options::reconnect)
// and subscribe their servant again, under the new session's category.
// Several routers: `--router "tcp -h A -p 4063:tcp -h B -p 4063"`: each session tries the
// endpoints in a random order (client::router_endpoints), so the sessions spread over the
// routers, and with --reconnect the sessions of a router that dies come back through the others.
#include "clock/tick.hpp"
#include "clock/tick_counts.hpp"

#include <moraine/client/params.hpp>
#include <moraine/client/session_client.hpp>
#include <moraine/client/tls_context.hpp>
#include <moraine/protocol/proxy.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

namespace po = boost::program_options;
namespace asio = boost::asio;
using namespace moraine;
using namespace std::chrono_literals;

namespace {

struct settings {
    client::router_endpoints routers;  // --router: every endpoint of the list
    std::string user, password, topic, topic_manager;
    std::size_t sessions = 1;
    std::size_t concurrency = 256;  // sessions being opened at once
    double duration = 60;           // seconds after all sessions are up
    client::session_options session;  // .tls set for an ssl or wss --router
    bool secure = false;              // createSessionFromSecureConnection instead of user/password
    bool reconnect = false;           // cfg.session.reconnect is set: report reconnections
};

/// Opens `s` with createSessionFromSecureConnection (--secure) or createSession(user, password).
asio::awaitable<client::error_info> open_session(client::session_client& s, const settings& cfg) {
    if (cfg.secure) co_return co_await s.async_open_secure(cfg.routers, asio::use_awaitable);
    co_return co_await s.async_open(cfg.routers, cfg.user, cfg.password, asio::use_awaitable);
}

/// What every session's servant updates: one thread, so plain counters.
struct totals {
    std::size_t up = 0, failed = 0, closed = 0;
    std::size_t down = 0, restored = 0, resubscribe_failed = 0;  // --reconnect: sessions reconnecting now, ...
    std::string first_error;
    demo::tick_counts counts;
    std::uint64_t lost = 0;              // by sessions that never lost their router
    std::uint64_t lost_reconnected = 0;  // by sessions that had to reconnect (the outage included)
    std::uint64_t duplicates = 0;        // ticks at or before the last one a session saw (sent again)
    std::int64_t max_gap_window_us = 0;  // the longest wait of a session for its next tick, this second
    std::int64_t max_gap_us = 0;         // ... over the run
};

/// One subscriber session and the last tick it saw.
struct subscriber {
    std::shared_ptr<client::session_client> session;
    std::uint64_t last_seq = 0;
    std::chrono::steady_clock::time_point last_arrival{};  // of its last tick; none yet: epoch
    bool reconnected = false;  // lost its router once: its losses are counted apart
};

client::dispatch_result on_tick(totals& t, subscriber& sub, const client::incoming_request& req) {
    if (req.operation != "tick") return client::dispatch_result::not_exist(protocol::reply_status::operation_not_exist);
    std::optional<std::string> time;
    protocol::input_stream in(req.params.payload(), req.params.encoding);
    const auto text = in.read_string();
    auto tick = in.ok() ? demo::parse_tick(text) : std::nullopt;
    if (!tick) {
        ++t.counts.bad;
        return client::dispatch_result::ok();
    }
    const auto now = std::chrono::steady_clock::now();
    if (sub.last_arrival != std::chrono::steady_clock::time_point{})
        t.max_gap_window_us = std::max<std::int64_t>(
            t.max_gap_window_us, std::chrono::duration_cast<std::chrono::microseconds>(now - sub.last_arrival).count());
    sub.last_arrival = now;
    if (sub.last_seq != 0 && tick->seq <= sub.last_seq) ++t.duplicates;
    (sub.reconnected ? t.lost_reconnected : t.lost) += t.counts.received(*tick, sub.last_seq);
    return client::dispatch_result::ok();
}

void fail(totals& t, const std::string& why) {
    if (t.failed++ == 0) t.first_error = why;
}

/// IceStorm::TopicManager::retrieve(topic), creating it if needed, through session `s`.
asio::awaitable<std::optional<protocol::proxy>> topic_proxy(client::session_client& s, const settings& cfg) {
    auto manager = protocol::proxy_from_string("IceStorm/TopicManager:" + cfg.topic_manager);
    if (!manager) co_return std::nullopt;
    const auto params = client::encode_string_params(cfg.topic);
    // retrieve is ["nonmutating"] idempotent (mode 1 on the wire): a real IceStorm refuses
    // another mode with a MarshalException. create is a normal operation.
    using mode = protocol::operation_mode;
    const std::pair<const char*, mode> attempts[] = {
        {"retrieve", mode::nonmutating}, {"create", mode::normal}, {"retrieve", mode::nonmutating}};
    for (const auto& [op, op_mode] : attempts) {
        // A named call, not a temporary inside co_await: g++ 12 destroys such temporaries twice.
        client::call c{*manager, op, params, op_mode};
        auto r = co_await s.async_invoke(std::move(c), asio::use_awaitable);
        if (!r.ok()) continue;  // NoSuchTopic, then TopicExists if another client won the race
        std::optional<protocol::proxy> topic;
        client::decode_results(r.encaps, [&](protocol::input_stream& in) { topic = protocol::read_proxy(in); });
        co_return topic;
    }
    co_return std::nullopt;
}

/// Subscribes the Clock servant of `s` (oneway, its current category) to `topic`.
asio::awaitable<client::call_result> subscribe(client::session_client& s, const protocol::proxy& topic) {
    auto prx = s.server_proxy("clock");
    prx.mode = static_cast<std::uint8_t>(protocol::proxy_mode::oneway);
    auto params = client::encode_params([&](protocol::output_stream& os) {
        os.write_size(0);  // QoS: {}
        protocol::write_proxy(os, prx);
    });
    client::call c{topic, "subscribeAndGetPublisher", std::move(params)};
    co_return co_await s.async_invoke(std::move(c), asio::use_awaitable);
}

/// After a reconnection: the servant under its new category, on the Topic proxy it had (as an
/// Ice client keeps its topic proxy): one call. The new router names its topics alike (the same
/// published TopicManager address). Only if that topic does not exist there (a restarted
/// moraine-router lost its topics: ObjectNotExist) is it retrieved or created, then subscribed.
asio::awaitable<void> resubscribe(std::shared_ptr<client::session_client> s, protocol::proxy known, const settings& cfg,
                                  totals& t) {
    auto r = co_await subscribe(*s, known);
    if (r.ok()) co_return;
    if (r.error.code != client::errc::object_not_exist) {
        ++t.resubscribe_failed;
        co_return;
    }
    auto topic = co_await topic_proxy(*s, cfg);
    if (!topic || !(co_await subscribe(*s, *topic)).ok()) ++t.resubscribe_failed;
}

/// --reconnect: counts sessions down and restored, and subscribes again once restored.
void watch_reconnects(const std::shared_ptr<client::session_client>& s, subscriber& sub, const protocol::proxy& topic,
                      const settings& cfg, totals& t) {
    s->on_session_event([w = std::weak_ptr(s), &sub, topic, &cfg, &t](const client::session_event& e) {
        using kind = client::session_event_kind;
        if (e.kind == kind::lost) {
            ++t.down;
            sub.reconnected = true;
        }
        if (e.kind == kind::gave_up) --t.down;
        if (e.kind != kind::restored) return;
        --t.down;
        ++t.restored;
        if (auto s = w.lock())
            asio::co_spawn(s->get_executor(), resubscribe(s, topic, cfg, t), [&t](std::exception_ptr e) {
                if (e) ++t.resubscribe_failed;
            });
    });
}

/// Opens session `i`, hosts its Clock servant and subscribes it (oneway) to the topic.
asio::awaitable<void> open_one(std::size_t i, const settings& cfg, const protocol::proxy& topic,
                               std::vector<subscriber>& subs, totals& t) {
    auto ex = co_await asio::this_coro::executor;
    auto s = client::session_client::create(ex, cfg.session);
    subs[i].session = s;
    auto err = co_await open_session(*s, cfg);
    const char* op = cfg.secure ? "createSessionFromSecureConnection: " : "createSession: ";
    if (err) co_return fail(t, op + err.message());
    auto& sub = subs[i];
    s->add_servant("clock", [&t, &sub](const client::incoming_request& r) { return on_tick(t, sub, r); });
    auto r = co_await subscribe(*s, topic);
    if (!r.ok()) co_return fail(t, "subscribeAndGetPublisher: " + r.error.message());
    s->on_close([&t](const client::error_info& e) {
        if (e) ++t.closed;
    });
    if (cfg.reconnect) watch_reconnects(s, sub, topic, cfg, t);
    ++t.up;
}

/// Opens sessions [next, n) with at most cfg.concurrency in flight (a fixed set of workers).
asio::awaitable<void> open_worker(std::size_t& next, const settings& cfg, const protocol::proxy& topic,
                                  std::vector<subscriber>& subs, totals& t) {
    while (next < subs.size()) co_await open_one(next++, cfg, topic, subs, t);
}

void print_status(totals& t, double elapsed, bool final_line, bool reconnect) {
    char extra[240] = "";
    int n = 0;
    if (reconnect)
        n = std::snprintf(extra, sizeof extra, "  lost after reconnect %llu  reconnecting %zu  restored %zu",
                          static_cast<unsigned long long>(t.lost_reconnected), t.down, t.restored);
    // The longest a session waited for its next tick among the ticks of this second (the clock's
    // stop: the publisher's period when nothing stalls), and the ticks that came twice so far.
    std::snprintf(extra + n, sizeof extra - static_cast<std::size_t>(n), "  max gap %lld ms  duplicates %llu",
                  static_cast<long long>(t.max_gap_window_us / 1000), static_cast<unsigned long long>(t.duplicates));
    t.max_gap_us = std::max(t.max_gap_us, t.max_gap_window_us);
    t.max_gap_window_us = 0;
    t.counts.print_status(elapsed, t.up, t.failed, t.closed, t.lost, final_line, extra);
}

/// The figures of the run as one line, `result {json}`, for scripts (perf/cluster.py).
void print_result(totals& t) {
    std::printf("result {\"sessions_up\": %zu, \"failed\": %zu, \"dropped\": %zu, \"ticks\": %llu, \"lost\": %llu, "
                "\"lost_reconnected\": %llu, \"restored\": %zu, \"reconnecting\": %zu, \"p50_ms\": %.3f, "
                "\"p99_ms\": %.3f, \"duplicates\": %llu, \"max_gap_ms\": %.1f}\n",
                t.up, t.failed, t.closed, static_cast<unsigned long long>(t.counts.ticks),
                static_cast<unsigned long long>(t.lost), static_cast<unsigned long long>(t.lost_reconnected), t.restored,
                t.down, t.counts.all.percentile(50) / 1000.0, t.counts.all.percentile(99) / 1000.0,
                static_cast<unsigned long long>(t.duplicates), static_cast<double>(t.max_gap_us) / 1000.0);
}

asio::awaitable<int> run(const settings& cfg, const bool& stop_requested) {
    auto ex = co_await asio::this_coro::executor;
    totals t;
    std::vector<subscriber> subs(cfg.sessions);
    const auto t0 = std::chrono::steady_clock::now();

    // The first session also finds the topic; the others reuse the Topic proxy.
    auto first = client::session_client::create(ex, cfg.session);
    if (auto err = co_await open_session(*first, cfg)) {
        std::cerr << "clock-subscriber: cannot open a session: " << err.message() << "\n";
        co_return 1;
    }
    auto topic = co_await topic_proxy(*first, cfg);
    co_await first->async_destroy(asio::use_awaitable);
    if (!topic) {
        std::cerr << "clock-subscriber: cannot retrieve or create topic `" << cfg.topic << "'\n";
        co_return 1;
    }

    std::size_t next = 0;
    std::size_t workers = std::min(cfg.concurrency, cfg.sessions);
    auto opened = std::make_shared<std::size_t>(0);
    for (std::size_t w = 0; w < workers; ++w)
        asio::co_spawn(ex, open_worker(next, cfg, *topic, subs, t), [opened](std::exception_ptr) { ++*opened; });

    asio::steady_timer timer(ex);
    auto tick_at = std::chrono::steady_clock::now();
    std::optional<std::chrono::steady_clock::time_point> all_up;
    for (;;) {
        tick_at += 1s;
        timer.expires_at(tick_at);
        co_await timer.async_wait(asio::use_awaitable);
        const auto now = std::chrono::steady_clock::now();
        print_status(t, std::chrono::duration<double>(now - t0).count(), false, cfg.reconnect);
        if (!all_up && *opened == workers) {
            all_up = now;
            std::printf("\n%zu sessions up in %.2f s (%.0f sessions/s)\n", t.up,
                        std::chrono::duration<double>(now - t0).count(),
                        t.up / std::chrono::duration<double>(now - t0).count());
        }
        if (stop_requested || (all_up && now - *all_up >= std::chrono::duration<double>(cfg.duration))) break;
    }
    print_status(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), true, cfg.reconnect);
    std::printf("summary: sessions %zu up, %zu failed%s%s, %zu dropped by the router; ticks received %llu, lost %llu, "
                "malformed %llu; latency p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms\n",
                t.up, t.failed, t.failed ? " (first: " : "", t.failed ? (t.first_error + ")").c_str() : "", t.closed,
                static_cast<unsigned long long>(t.counts.ticks), static_cast<unsigned long long>(t.lost),
                static_cast<unsigned long long>(t.counts.bad), t.counts.all.percentile(50) / 1000.0,
                t.counts.all.percentile(99) / 1000.0, t.counts.all.percentile(99.9) / 1000.0, t.counts.all.max() / 1000.0);
    if (cfg.reconnect)
        std::printf("reconnections: %zu sessions restored, %zu reconnecting at the end, %zu failed to subscribe again\n",
                    t.restored, t.down, t.resubscribe_failed);
    print_result(t);
    std::fflush(stdout);
    for (auto& s : subs)
        if (s.session) s.session->close();
    co_return t.failed == 0 && t.up == cfg.sessions ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts("clock-subscriber options");
    opts.add_options()("help,h", "print this help")(
        "router", po::value<std::string>()->default_value("tcp -h 127.0.0.1 -p 4063"),
        "router client endpoint (tcp, ssl, ws or wss), or a ':'-separated list of several routers' "
        "(\"tcp -h A -p 4063:tcp -h B -p 4063\"): each session tries them in a random order, so the "
        "sessions spread over the routers and, with --reconnect, come back through the survivors")(
        "user", po::value<std::string>()->default_value("demo"), "session user id")(
        "password", po::value<std::string>()->default_value("demo"), "session password")(
        "topic-manager", po::value<std::string>()->default_value("tcp -h 127.0.0.1 -p 10000"),
        "TopicManager endpoint, reached through the router")(
        "topic", po::value<std::string>()->default_value("time"), "topic name")(
        "sessions", po::value<std::size_t>()->default_value(1), "number of sessions (subscribers)")(
        "concurrency", po::value<std::size_t>()->default_value(256), "sessions being opened at once")(
        "duration", po::value<double>()->default_value(60), "seconds to run once all sessions are up")(
        "tls-ca", po::value<std::string>(), "PEM CA file the router's certificate must chain to (ssl or wss --router)")(
        "tls-cert", po::value<std::string>(), "PEM client certificate (chain) for the router")(
        "tls-key", po::value<std::string>(), "PEM key of --tls-cert (default: in --tls-cert)")(
        "tls-key-password", po::value<std::string>(), "password of an encrypted --tls-key")(
        "tls-server-name", po::value<std::string>(), "also check the router certificate is for this name or IP")(
        "secure", po::bool_switch(), "createSessionFromSecureConnection (client certificate) instead of user/password")(
        "reconnect", po::bool_switch(),
        "sessions that lose the router reconnect (back-off 100 ms doubling to 10 s, jittered, never giving up) "
        "and subscribe again");
    po::variables_map vm;
    settings cfg;
    try {
        po::store(po::parse_command_line(argc, argv, opts), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << opts;
            return 0;
        }
        auto routers = client::parse_router_endpoints(vm["router"].as<std::string>());
        if (!routers)
            throw std::runtime_error(
                "bad --router endpoint (tcp, ssl, ws or wss -h HOST -p PORT, ':'-separated for several)");
        cfg = settings{*routers,
                       vm["user"].as<std::string>(),
                       vm["password"].as<std::string>(),
                       vm["topic"].as<std::string>(),
                       vm["topic-manager"].as<std::string>(),
                       std::max<std::size_t>(1, vm["sessions"].as<std::size_t>()),
                       std::max<std::size_t>(1, vm["concurrency"].as<std::size_t>()),
                       vm["duration"].as<double>(),
                       {},
                       vm["secure"].as<bool>(),
                       vm["reconnect"].as<bool>()};
        if (cfg.reconnect) cfg.session.reconnect = client::reconnect_options{};
        auto opt = [&](const char* name) { return vm.count(name) ? vm[name].as<std::string>() : std::string(); };
        const bool any_ssl = std::any_of(routers->begin(), routers->end(), [](const auto& a) { return a.tls; });
        if (any_ssl && !vm.count("tls-ca"))
            throw std::runtime_error("--router has an ssl or wss endpoint: --tls-ca FILE is required");
        if (vm.count("tls-ca")) {  // used for ssl and wss routers only; a tcp or ws --router ignores it
            client::error_info err;
            cfg.session.tls = client::tls_context::create({.ca_file = opt("tls-ca"),
                                                           .cert_file = opt("tls-cert"),
                                                           .key_file = opt("tls-key"),
                                                           .key_password = opt("tls-key-password"),
                                                           .server_name = opt("tls-server-name")},
                                                          err);
            if (!cfg.session.tls) throw std::runtime_error(err.message());
        } else if (vm.count("tls-cert") || vm.count("tls-key") || vm.count("tls-key-password") ||
                   vm.count("tls-server-name")) {
            throw std::runtime_error("--tls-cert, --tls-key, --tls-key-password and --tls-server-name need --tls-ca");
        }
    } catch (const std::exception& e) {
        std::cerr << "clock-subscriber: " << e.what() << "\n" << opts;
        return 2;
    }
    asio::io_context io(1);
    int rc = 1;
    bool stop_requested = false;  // SIGINT / SIGTERM: end at the next status line, with the summary
    asio::co_spawn(io, run(cfg, stop_requested), [&](std::exception_ptr e, int r) {
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                std::cerr << "clock-subscriber: " << ex.what() << "\n";
            }
        }
        rc = r;
        io.stop();
    });
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](auto, int) {
        stop_requested = true;
        signals.async_wait([&](auto, int) { io.stop(); });  // a second signal: stop at once
    });
    io.run();
    return rc;
}
