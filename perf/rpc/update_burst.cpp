// update-burst: the sending side of perf/buffered_compare.py. Fires one burst of oneway
// Bench::Updates::update calls through a router, as fast as Ice sends them, in one of two roles:
//
//   client:   update-burst --router "tcp -h 127.0.0.1 -p 4063" --target "updates:tcp -h 127.0.0.1 -p 4070"
//             K Glacier2 sessions (one connection each: connection ids s0..sK-1), each updating the
//             routed --target (the slow back end): direction client -> back end.
//   back end: update-burst --server "tcp -h 127.0.0.1 -p 4064" --categories FILE
//             one connection to the router's server endpoint, a callback proxy <category>/updates
//             per line of FILE (the slow clients' categories): direction back end -> client.
//
//   common:   [--sessions K] [--updates B] [--keys N] [--payload BYTES] [--fwd O] [--override]
//             [--user perf] [--password perf] [--Ice.Config=FILE]
//
// Each of the K targets gets B updates, seq 0..B-1, key "s<i>/k<seq % N>", issued round-robin over
// the targets (all in flight at once, AMI). --fwd X adds the context _fwd=X to every update (O: the
// router forwards it as a batch oneway); --override adds _ovrd=<key> (a buffered router may replace
// a still-queued update of the same key). The consumer knows an update is its key's last one by
// seq >= B - N.
//
// Protocol with the caller (stdout, one line each, flushed; times are CLOCK_MONOTONIC ns, the
// clock of Python's time.monotonic_ns()):
//   `ready K setup S`                          sessions/proxies ready (S seconds), then waits for SIGUSR1;
//   `burst-start T`                            on SIGUSR1, right before the first update;
//   `burst-issued T`                           every update handed to Ice;
//   `burst-sent T sent N errors E`             every update written to the router's connection(s);
//   then it idles (keeping the sessions) until SIGTERM or SIGINT, and exits 0.
#include <Glacier2/Glacier2.h>
#include <Ice/Ice.h>
#include <Updates.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;

struct options {
    std::string router, target, server, categories, fwd, user = "perf", password = "perf";
    int sessions = 100, updates = 1000, keys = 4, payload = 128;
    bool override_ = false;
};

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now().time_since_epoch()).count();
}

void say(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

// Counts sent updates and failures; wakes the main thread when every update is accounted for.
class tally {
public:
    void sent() { bump(sent_); }
    void failed(std::exception_ptr e) {
        if (errors_.load() == 0) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                std::lock_guard<std::mutex> lk(mu_);
                first_error_ = ex.what();
            }
        }
        bump(errors_);
    }
    // True when sent + errors reached `total` before `deadline`.
    bool wait(unsigned long long total, clk::time_point deadline) {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_until(lk, deadline, [&] { return sent_.load() + errors_.load() >= total; });
    }
    unsigned long long sent_count() const { return sent_.load(); }
    unsigned long long error_count() const { return errors_.load(); }
    std::string first_error() {
        std::lock_guard<std::mutex> lk(mu_);
        return first_error_;
    }

private:
    void bump(std::atomic<unsigned long long>& c) {
        c.fetch_add(1);
        std::lock_guard<std::mutex> lk(mu_);  // pairs with wait(): no lost wake-up
        cv_.notify_all();
    }
    std::atomic<unsigned long long> sent_{0}, errors_{0};
    std::mutex mu_;
    std::condition_variable cv_;
    std::string first_error_;
};

// Role client: K sessions through the router, each with its routed proxy to the target. The first
// (twoway) ice_ping of each adds the target to the session's routing table and opens the router's
// connection to the back end, so neither is part of the burst.
std::vector<std::shared_ptr<Bench::UpdatesPrx>> session_targets(const Ice::CommunicatorPtr& ic, const options& o) {
    auto base = Ice::uncheckedCast<Glacier2::RouterPrx>(ic->stringToProxy("Glacier2/router:" + o.router));
    auto target = Ice::uncheckedCast<Bench::UpdatesPrx>(ic->stringToProxy(o.target));
    std::vector<std::shared_ptr<Glacier2::RouterPrx>> routers;
    std::vector<std::future<std::shared_ptr<Glacier2::SessionPrx>>> pending;
    for (int i = 0; i < o.sessions; ++i) {
        routers.push_back(base->ice_connectionId("s" + std::to_string(i)));
        pending.push_back(routers.back()->createSessionAsync(o.user, o.password));
    }
    std::vector<std::shared_ptr<Bench::UpdatesPrx>> out;
    for (int i = 0; i < o.sessions; ++i) {
        pending[i].get();  // throws CannotCreateSessionException / PermissionDeniedException / ...
        out.push_back(target->ice_router(routers[i])->ice_connectionId("s" + std::to_string(i)));
    }
    std::vector<std::future<void>> pings;  // concurrent: a buffered router holds each for its SleepTime
    for (auto& p : out) pings.push_back(p->ice_pingAsync());
    for (auto& f : pings) f.get();
    for (auto& p : out) p = p->ice_oneway();
    return out;
}

// Role back end: one oneway callback proxy per category, all on one connection to the router's
// server endpoint (as a back end such as IceStorm has), opened before the burst.
std::vector<std::shared_ptr<Bench::UpdatesPrx>> callback_targets(const Ice::CommunicatorPtr& ic, options& o) {
    std::ifstream in(o.categories);
    if (!in) throw std::runtime_error("cannot read " + o.categories);
    auto base = Ice::uncheckedCast<Bench::UpdatesPrx>(ic->stringToProxy("updates:" + o.server))->ice_oneway();
    std::vector<std::shared_ptr<Bench::UpdatesPrx>> out;
    for (std::string cat; std::getline(in, cat);)
        if (!cat.empty()) out.push_back(Ice::uncheckedCast<Bench::UpdatesPrx>(base->ice_identity(Ice::Identity{"updates", cat})));
    if (out.empty()) throw std::runtime_error(o.categories + " names no category");
    o.sessions = static_cast<int>(out.size());
    base->ice_getConnection();
    return out;
}

// The burst: B rounds, one update to each target per round. Keys and contexts are made first,
// so the loop measures Ice's sending and not string building.
void burst(const std::vector<std::shared_ptr<Bench::UpdatesPrx>>& targets, const options& o, tally& t) {
    const std::size_t k = targets.size(), n = static_cast<std::size_t>(o.keys);
    std::vector<std::string> keys(k * n);
    std::vector<Ice::Context> ctxs(k * n);
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            auto& key = keys[i * n + j];
            key = "s" + std::to_string(i) + "/k" + std::to_string(j);
            if (!o.fwd.empty()) ctxs[i * n + j]["_fwd"] = o.fwd;
            if (o.override_) ctxs[i * n + j]["_ovrd"] = key;
        }
    const Bench::Bytes payload(static_cast<std::size_t>(o.payload), 0x5a);
    auto on_error = [&t](std::exception_ptr e) { t.failed(e); };
    auto on_sent = [&t](bool) { t.sent(); };
    say("burst-start " + std::to_string(now_ns()));
    for (int seq = 0; seq < o.updates; ++seq) {
        const std::size_t j = static_cast<std::size_t>(seq) % n;
        for (std::size_t i = 0; i < k; ++i)
            targets[i]->updateAsync(keys[i * n + j], seq, payload, [] {}, on_error, on_sent, ctxs[i * n + j]);
    }
    say("burst-issued " + std::to_string(now_ns()));
    const unsigned long long total = static_cast<unsigned long long>(k) * static_cast<unsigned long long>(o.updates);
    const bool all = t.wait(total, clk::now() + std::chrono::seconds(120));
    say("burst-sent " + std::to_string(now_ns()) + " sent " + std::to_string(t.sent_count()) + " errors " +
        std::to_string(t.error_count()) + (all ? "" : " incomplete"));
    if (t.error_count()) say("first-error " + t.first_error());
}

int wait_signal(const sigset_t& set) {
    int sig = 0;
    sigwait(&set, &sig);
    return sig;
}

int usage(const std::string& why) {
    std::cerr << "update-burst: " << why
              << "\nusage: update-burst (--router ENDPOINT --target PROXY | --server ENDPOINT --categories FILE)"
                 " [--sessions K] [--updates B] [--keys N] [--payload BYTES] [--fwd O] [--override]"
                 " [--user U] [--password P] [--Ice.Config=FILE]\n";
    return 2;
}

int parse(int argc, char* argv[], Ice::InitializationData& init, options& o) {
    init.properties = Ice::createProperties(argc, argv);  // takes --Ice.* out of argv
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        for (std::size_t i = 0; i < args.size(); ++i) {
            const std::string& a = args[i];
            if (a == "--override") {
                o.override_ = true;
                continue;
            }
            if (i + 1 >= args.size()) return usage("missing value for " + a);
            const std::string& v = args[++i];
            if (a == "--router") o.router = v;
            else if (a == "--target") o.target = v;
            else if (a == "--server") o.server = v;
            else if (a == "--categories") o.categories = v;
            else if (a == "--sessions") o.sessions = std::stoi(v);
            else if (a == "--updates") o.updates = std::stoi(v);
            else if (a == "--keys") o.keys = std::stoi(v);
            else if (a == "--payload") o.payload = std::stoi(v);
            else if (a == "--fwd") o.fwd = v;
            else if (a == "--user") o.user = v;
            else if (a == "--password") o.password = v;
            else return usage("unknown option " + a);
        }
    } catch (const std::exception&) {
        return usage("bad number");
    }
    const bool client = !o.router.empty() && !o.target.empty(), backend = !o.server.empty() && !o.categories.empty();
    if (client == backend) return usage("give either --router and --target, or --server and --categories");
    if (o.sessions < 1 || o.updates < 1 || o.keys < 1 || o.payload < 0) return usage("bad count");
    return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
    options o;
    Ice::InitializationData init;
    if (int rc = parse(argc, argv, init, o)) return rc;

    // Blocked before Ice starts its threads (they inherit the mask), so only sigwait() sees them.
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGUSR1, SIGTERM, SIGINT}) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    try {
        Ice::CommunicatorHolder ich(init);
        auto ic = ich.communicator();
        const auto t0 = clk::now();
        auto targets = o.router.empty() ? callback_targets(ic, o) : session_targets(ic, o);
        say("ready " + std::to_string(targets.size()) + " setup " +
            std::to_string(std::chrono::duration<double>(clk::now() - t0).count()));
        tally t;
        if (wait_signal(set) == SIGUSR1) {
            burst(targets, o, t);
            while (wait_signal(set) == SIGUSR1) {
            }
        }
        ic->destroy();  // before t goes: no callback may run on it afterwards
    } catch (const std::exception& e) {
        std::cerr << "update-burst: " << e.what() << std::endl;
        return 1;
    }
    return 0;
}
