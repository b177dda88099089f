// rpc-load: the load client of perf/rpc_compare.py. Opens K Glacier2 sessions through a router
// (one connection each, all in one communicator: connection ids s0..sK-1 on the router proxy and
// on the routed Bench::Target proxy), then keeps at most Q twoway calls outstanding per session (AMI)
// for --warmup + --window seconds and reports requests/s and latency over the window.
//
//   rpc-load --router "ssl -h 127.0.0.1 -p 4063" --target "echo:ssl -h 127.0.0.1 -p 4070"
//            [--sessions 100] [--outstanding 4] [--rate 0] [--op echo|ping] [--payload 16]
//            [--pacing ms|even] [--warmup 3] [--window 20] [--user perf] [--password perf]
//            [--Ice.Config=FILE]
//
// --rate 0 (default): closed loop, every reply sends the session's next call at once (the router
// runs as fast as the machine lets it). --rate R: R calls/s in all, paced every millisecond over
// the sessions in turn, still at most Q outstanding per session (calls that find every session
// full are not sent: `unsent` in the result). --pacing even: one call every 1/R s instead, as
// independent clients send (each call alone on the wire, the router wakes up for it).
// ssl endpoints need the IceSSL plugin's properties in --Ice.Config (Ice.Plugin.IceSSL, IceSSL.*).
//
// Output (stdout, one line each, flushed): `sessions K up in S s`, `status T completed N errors E`
// every second, `window-start N`, `window-end N`, then `result {json}`. The caller reads the
// window lines to sample the router's CPU: requests in the window = the difference of their N.
// Latency = AMI call to its reply callback (steady_clock), for the replies received in the window.
#include <Bench.h>
#include <Glacier2/Glacier2.h>
#include <Ice/Ice.h>
#include <Ice/RegisterPlugins.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/prctl.h>

using clk = std::chrono::steady_clock;

namespace {

struct options {
    std::string router, target, op = "echo", user = "perf", password = "perf", pacing = "ms";
    int sessions = 100, outstanding = 4, payload = 16;
    double rate = 0, warmup = 3, window = 20;
};

struct session {
    std::shared_ptr<Bench::TargetPrx> echo;
    std::atomic<int> outstanding{0};
};

class load {
public:
    load(const options& o) : opt_(o), payload_(static_cast<std::size_t>(o.payload), 'x') { lat_.reserve(1 << 21); }

    std::vector<std::unique_ptr<session>> sessions;
    std::atomic<bool> running{true}, recording{false};
    std::atomic<unsigned long long> issued{0}, completed{0}, errors{0}, unsent{0};
    std::string first_error;

    void issue(session& s) {
        s.outstanding.fetch_add(1, std::memory_order_relaxed);
        issued.fetch_add(1, std::memory_order_relaxed);
        const auto t0 = clk::now();
        auto ex = [this, &s](std::exception_ptr e) { failed(s, e); };
        if (opt_.op == "ping")
            s.echo->pingAsync([this, &s, t0]() { done(s, t0); }, ex);
        else
            s.echo->echoAsync(payload_, [this, &s, t0](std::string) { done(s, t0); }, ex);
    }

    std::vector<std::uint32_t> take_latencies() {
        std::lock_guard<std::mutex> lk(mu_);
        return std::move(lat_);
    }

private:
    void done(session& s, clk::time_point t0) {
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(clk::now() - t0).count();
        if (recording.load(std::memory_order_relaxed)) {
            std::lock_guard<std::mutex> lk(mu_);
            lat_.push_back(static_cast<std::uint32_t>(us));
        }
        completed.fetch_add(1, std::memory_order_relaxed);
        s.outstanding.fetch_sub(1, std::memory_order_relaxed);
        if (opt_.rate <= 0 && running.load(std::memory_order_relaxed)) issue(s);
    }

    void failed(session& s, std::exception_ptr e) {
        if (errors.fetch_add(1) == 0) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                std::lock_guard<std::mutex> lk(mu_);
                first_error = ex.what();
            }
        }
        s.outstanding.fetch_sub(1, std::memory_order_relaxed);  // the session loses this slot
    }

    const options& opt_;
    const std::string payload_;
    std::mutex mu_;
    std::vector<std::uint32_t> lat_;
};

double pct(const std::vector<std::uint32_t>& v, double p) {
    if (v.empty()) return 0;
    const auto i = std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
    return v[i];
}

/// The pacing loop's sleep: 20 ms in a closed loop (status only), else 1 ms ("ms": the calls
/// due each millisecond leave together) or 1/R s ("even": one call per wake-up).
clk::duration pacing_tick(const options& o) {
    if (o.rate <= 0) return std::chrono::milliseconds(20);
    if (o.pacing == "even")
        return std::max<clk::duration>(std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(1.0 / o.rate)),
                                       std::chrono::microseconds(1));
    return std::chrono::milliseconds(1);
}

int usage(const char* why) {
    std::cerr << "rpc-load: " << why
              << "\nusage: rpc-load --router ENDPOINT --target PROXY [--sessions K] [--outstanding Q] [--rate R]"
                 " [--pacing ms|even] [--op echo|ping] [--payload BYTES] [--warmup S] [--window S] [--user U]"
                 " [--password P]"
                 " [--Ice.Config=FILE]\n";
    return 2;
}

}  // namespace

int main(int argc, char* argv[]) {
    Ice::registerIceSSL(false);  // loaded only when Ice.Plugin.IceSSL is set
    options opt;
    Ice::InitializationData init;
    init.properties = Ice::createProperties(argc, argv);  // takes --Ice.* out of argv
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        for (std::size_t i = 0; i < args.size(); ++i) {
            const std::string& a = args[i];
            if (i + 1 >= args.size()) return usage(("missing value for " + a).c_str());
            const std::string& v = args[++i];
            if (a == "--router") opt.router = v;
            else if (a == "--target") opt.target = v;
            else if (a == "--sessions") opt.sessions = std::stoi(v);
            else if (a == "--outstanding") opt.outstanding = std::stoi(v);
            else if (a == "--rate") opt.rate = std::stod(v);
            else if (a == "--pacing") opt.pacing = v;
            else if (a == "--op") opt.op = v;
            else if (a == "--payload") opt.payload = std::stoi(v);
            else if (a == "--warmup") opt.warmup = std::stod(v);
            else if (a == "--window") opt.window = std::stod(v);
            else if (a == "--user") opt.user = v;
            else if (a == "--password") opt.password = v;
            else return usage(("unknown option " + a).c_str());
        }
    } catch (const std::exception&) {
        return usage("bad number");
    }
    if (opt.router.empty() || opt.target.empty()) return usage("--router and --target are required");
    if (opt.sessions < 1 || opt.outstanding < 1 || (opt.op != "echo" && opt.op != "ping") ||
        (opt.pacing != "ms" && opt.pacing != "even"))
        return usage("bad --sessions, --outstanding, --op or --pacing");

    int rc = 0;
    try {
        Ice::CommunicatorHolder ich(init);
        auto ic = ich.communicator();
        load L(opt);

        // Sessions: one connection each (connection id), created concurrently.
        const auto t_setup = clk::now();
        std::vector<std::shared_ptr<Glacier2::RouterPrx>> routers;
        std::vector<std::future<std::shared_ptr<Glacier2::SessionPrx>>> pending;
        auto base = Ice::uncheckedCast<Glacier2::RouterPrx>(ic->stringToProxy("Glacier2/router:" + opt.router));
        auto target = Ice::uncheckedCast<Bench::TargetPrx>(ic->stringToProxy(opt.target));
        for (int i = 0; i < opt.sessions; ++i) {
            const std::string cid = "s" + std::to_string(i);
            routers.push_back(base->ice_connectionId(cid));
            pending.push_back(routers.back()->createSessionAsync(opt.user, opt.password));
        }
        for (int i = 0; i < opt.sessions; ++i) {
            pending[i].get();  // throws CannotCreateSessionException / PermissionDeniedException / ...
            auto s = std::make_unique<session>();
            s->echo = target->ice_router(routers[i])->ice_connectionId("s" + std::to_string(i));
            L.sessions.push_back(std::move(s));
        }
        // The first call of each session adds the target to the router's routing table.
        for (auto& s : L.sessions) s->echo->ice_ping();
        const double setup_s = std::chrono::duration<double>(clk::now() - t_setup).count();
        std::printf("sessions %d up in %.3f s\n", opt.sessions, setup_s);
        std::fflush(stdout);

        const auto t0 = clk::now();
        if (opt.rate <= 0) {
            for (auto& s : L.sessions)
                for (int q = 0; q < opt.outstanding; ++q) L.issue(*s);
        }
        const auto t_start = t0 + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(opt.warmup));
        const auto t_end = t_start + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(opt.window));
        auto next_status = t0 + std::chrono::seconds(1);
        bool started = false;
        unsigned long long c_start = 0, e_start = 0, c_end = 0, e_end = 0;
        clk::time_point w0, w1;
        std::size_t rr = 0;
        unsigned long long paced = 0;
        const auto tick = pacing_tick(opt);
        if (opt.pacing == "even") prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // wake on time, not 50 us late
        for (auto now = clk::now();; now = clk::now()) {
            if (opt.rate > 0) {  // pacing: calls due so far, spread over the sessions in turn
                const auto due = static_cast<unsigned long long>(opt.rate * std::chrono::duration<double>(now - t0).count());
                while (paced < due) {
                    std::size_t tried = 0;
                    while (tried < L.sessions.size() &&
                           L.sessions[rr]->outstanding.load(std::memory_order_relaxed) >= opt.outstanding) {
                        rr = (rr + 1) % L.sessions.size();
                        ++tried;
                    }
                    ++paced;
                    if (tried == L.sessions.size()) {
                        L.unsent.fetch_add(1);
                        continue;
                    }
                    L.issue(*L.sessions[rr]);
                    rr = (rr + 1) % L.sessions.size();
                }
            }
            if (!started && now >= t_start) {
                started = true;
                L.recording = true;
                w0 = clk::now();
                c_start = L.completed.load();
                e_start = L.errors.load();
                std::printf("window-start %llu\n", c_start);
                std::fflush(stdout);
            }
            if (started && now >= t_end) {
                L.recording = false;
                w1 = clk::now();
                c_end = L.completed.load();
                e_end = L.errors.load();
                std::printf("window-end %llu\n", c_end);
                std::fflush(stdout);
                break;
            }
            if (now >= next_status) {
                std::printf("status %.0f completed %llu errors %llu\n",
                            std::chrono::duration<double>(now - t0).count(), L.completed.load(), L.errors.load());
                std::fflush(stdout);
                next_status += std::chrono::seconds(1);
            }
            if (opt.pacing == "even" && opt.rate > 0)  // wake when the next call is due
                std::this_thread::sleep_until(t0 + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(
                                                       static_cast<double>(paced + 1) / opt.rate)));
            else
                std::this_thread::sleep_until(now + tick);
        }
        L.running = false;
        auto lat = L.take_latencies();
        std::sort(lat.begin(), lat.end());
        const double secs = std::chrono::duration<double>(w1 - w0).count();
        const unsigned long long n = c_end - c_start;
        std::ostringstream js;
        js << "{\"sessions\": " << opt.sessions << ", \"outstanding\": " << opt.outstanding << ", \"rate\": " << opt.rate
           << ", \"pacing\": \"" << opt.pacing << "\", \"op\": \"" << opt.op << "\", \"payload\": " << opt.payload << ", \"setup_s\": " << setup_s
           << ", \"window_s\": " << secs << ", \"requests\": " << n << ", \"requests_per_s\": " << (secs > 0 ? n / secs : 0)
           << ", \"latencies\": " << lat.size() << ", \"p50_us\": " << pct(lat, 0.5) << ", \"p90_us\": " << pct(lat, 0.9)
           << ", \"p99_us\": " << pct(lat, 0.99) << ", \"p999_us\": " << pct(lat, 0.999)
           << ", \"max_us\": " << (lat.empty() ? 0 : lat.back()) << ", \"errors\": " << (e_end - e_start)
           << ", \"errors_total\": " << L.errors.load() << ", \"unsent\": " << L.unsent.load() << "}";
        std::printf("result %s\n", js.str().c_str());
        if (L.errors.load()) std::printf("first error: %s\n", L.first_error.c_str());
        std::fflush(stdout);
        // Let the calls in flight finish (bounded), then the communicator closes every connection.
        const auto drain = clk::now() + std::chrono::seconds(5);
        auto in_flight = [&] {
            int sum = 0;
            for (auto& s : L.sessions) sum += s->outstanding.load();
            return sum;
        };
        while (in_flight() > 0 && clk::now() < drain) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        rc = e_end - e_start ? 1 : 0;
        ic->destroy();  // before L goes: no callback may run on it afterwards
    } catch (const std::exception& e) {
        std::cerr << "rpc-load: " << e.what() << std::endl;
        return 1;
    }
    return rc;
}
