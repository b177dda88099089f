// C++ takeover client of Moraine's tests (tests/ops/takeover_sessions.py), built against ZeroC
// Ice 3.7 (C++11 mapping): one Glacier2 session kept busy while the router is replaced.
//
//   moraine-interop-takeover-client ROUTER-PROXY HELLO-PROXY USER PASSWORD [--duration S] [--Ice.Prop=value ...]
//
// 1. createSession, getCategoryForClient, a callback adapter with the router and a Demo::Callback
//    servant "cb" in the session's category; prints
//    `ready category=C transport=T t=TIME` (T: the type of the router connection, tcp or ws);
// 2. loops until a `stop` line is read, stdin is closed (without --duration) or S seconds have
//    passed: a twoway sayHello, then a twoway callMeBack (the back end calls cb->ping through the
//    router before it replies), then a 50 ms pause. Ice.RetryIntervals=-1: a failure is not hidden by a retry.
//    Every call that raises is counted as failed and printed, `error call=N exc=TYPE what=...`
//    (the first 20). A `mark` line on stdin is answered with
//    `mark calls=N failed=F callbacks=K t=TIME` (the counts so far, so the driver can tell what
//    happened after a point in time);
// 3. getCategoryForClient again, then one summary line:
//    `summary calls=N failed=F callbacks=K category_start=C category_end=C2 t=TIME`;
//    exits 0 if no call failed and the category is unchanged, else 1.
// A failure before the loop prints `FAIL step: reason` and exits 1. TIME: CLOCK_MONOTONIC seconds.

#include <Demo.h>
#include <Glacier2/Glacier2.h>
#include <Ice/Ice.h>

#include "bounded_properties.hpp"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

namespace {

constexpr auto call_pause = std::chrono::milliseconds(50);
constexpr int errors_printed = 20;

std::mutex out_mutex;

// One line on stdout, whole (the stdin thread prints too).
void say(const std::string& line) {
    std::lock_guard<std::mutex> lock(out_mutex);
    std::cout << line << std::endl;
}

std::string stamp() {
    char buf[32];
    std::snprintf(buf, sizeof buf, "t=%.6f",
                  std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count());
    return buf;
}

std::string oneLine(std::string s, std::size_t max) {
    for (auto& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s.substr(0, max);
}

/// Demo::Callback::ping: counts the callbacks the back end sent through the router.
class CountingCallback : public Demo::Callback {
public:
    void ping(std::string, const Ice::Current&) override { ++got; }
    std::atomic<long> got{0};
};

struct Counts {
    std::atomic<long> calls{0}, failed{0};
};

// Reads stdin lines until EOF, `stop`, or `done` is set: `mark` prints the counts so far. EOF
// stops the calls too unless a duration was given (then stdin may be /dev/null).
void readCommands(std::atomic<bool>& stop, const std::atomic<bool>& done, const Counts& counts,
                  const CountingCallback& servant, bool timed) {
    std::string pending;
    char buf[256];
    while (!done) {
        pollfd pfd{STDIN_FILENO, POLLIN, 0};
        int n = ::poll(&pfd, 1, 100);
        if (n <= 0) continue;
        ssize_t r = ::read(STDIN_FILENO, buf, sizeof buf);
        if (r <= 0) break;  // EOF or error
        pending.append(buf, static_cast<std::size_t>(r));
        for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
            std::string cmd = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            if (cmd == "mark") {
                say("mark calls=" + std::to_string(counts.calls) + " failed=" + std::to_string(counts.failed) +
                    " callbacks=" + std::to_string(servant.got) + " " + stamp());
            } else if (cmd == "stop") {
                stop = true;
                return;
            }
        }
    }
    if (!timed) stop = true;
}

int run(const std::shared_ptr<Ice::Communicator>& ic, const std::string& helloProxy, const std::string& user,
        const std::string& password, double duration) {
    std::string step = "session";
    std::shared_ptr<Glacier2::RouterPrx> router;
    std::shared_ptr<Demo::HelloPrx> hello;
    std::shared_ptr<Demo::CallbackPrx> cb;
    auto servant = std::make_shared<CountingCallback>();
    std::string categoryStart;
    try {
        router = Ice::checkedCast<Glacier2::RouterPrx>(ic->getDefaultRouter());
        if (!router) throw std::runtime_error("checkedCast to Glacier2::Router failed");
        router->createSession(user, password);
        categoryStart = router->getCategoryForClient();
        step = "callback adapter";
        auto adapter = ic->createObjectAdapterWithRouter("", router);
        cb = Ice::uncheckedCast<Demo::CallbackPrx>(adapter->add(servant, Ice::Identity{"cb", categoryStart}));
        adapter->activate();
        hello = Ice::uncheckedCast<Demo::HelloPrx>(ic->stringToProxy(helloProxy));
        say("ready category=" + categoryStart + " transport=" + hello->ice_getConnection()->type() + " " + stamp());
    } catch (const std::exception& e) {
        say("FAIL " + step + ": " + oneLine(e.what(), 300));
        return 1;
    }

    Counts counts;
    std::atomic<bool> stop{false}, done{false};
    std::thread commands(readCommands, std::ref(stop), std::cref(done), std::cref(counts), std::cref(*servant),
                         duration > 0);
    const auto end = duration > 0 ? std::chrono::steady_clock::now() + std::chrono::duration_cast<
                                        std::chrono::steady_clock::duration>(std::chrono::duration<double>(duration))
                                  : std::chrono::steady_clock::time_point::max();
    long n = 0;
    while (!stop && std::chrono::steady_clock::now() < end) {
        for (int which = 0; which < 2; ++which) {
            ++n;
            try {
                if (which == 0) {
                    hello->sayHello("cpp call " + std::to_string(n));
                } else {
                    hello->callMeBack(cb, "cpp callback " + std::to_string(n));
                }
                ++counts.calls;
            } catch (const std::exception& e) {
                if (++counts.failed <= errors_printed) {
                    auto ice = dynamic_cast<const Ice::Exception*>(&e);
                    say("error call=" + std::to_string(n) + " exc=" + (ice ? ice->ice_id() : std::string("std")) +
                        " what=" + oneLine(e.what(), 200));
                }
            }
        }
        std::this_thread::sleep_for(call_pause);
    }
    done = true;
    commands.join();

    std::string categoryEnd;
    try {
        categoryEnd = router->getCategoryForClient();
    } catch (const std::exception& e) {
        ++counts.failed;
        say("error call=getCategoryForClient what=" + oneLine(e.what(), 200));
    }
    say("summary calls=" + std::to_string(counts.calls) + " failed=" + std::to_string(counts.failed) +
        " callbacks=" + std::to_string(servant->got) + " category_start=" + categoryStart +
        " category_end=" + categoryEnd + " " + stamp());
    return counts.failed == 0 && categoryEnd == categoryStart ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
    try {
        Ice::InitializationData init;
        init.properties = boundedProperties(false);  // no silent retries
        // --Ice.* options on the command line win over the above and are removed from args.
        auto args = init.properties->parseIceCommandLineOptions(Ice::argsToStringSeq(argc, argv));
        double duration = 0;
        if (args.size() == 7 && args[5] == "--duration") {
            duration = std::stod(args[6]);
            args.resize(5);
        }
        if (args.size() != 5) {
            std::cerr << "usage: " << argv[0]
                      << " ROUTER-PROXY HELLO-PROXY USER PASSWORD [--duration S] [--Ice.Prop=value ...]\n";
            return 2;
        }
        init.properties->setProperty("Ice.Default.Router", args[1]);
        Ice::CommunicatorHolder ich(init);
        return run(ich.communicator(), args[2], args[3], args[4], duration);
    } catch (const std::exception& e) {
        say("FAIL start: " + oneLine(e.what(), 300));
        return 1;
    }
}
