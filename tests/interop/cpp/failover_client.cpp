// C++ failover client of Moraine's interop suite (tests/interop/failover.py), built against ZeroC
// Ice 3.7 (C++11 mapping). The same steps and output lines as tests/interop/failover_client.py:
//
//   moraine-interop-failover-client ROUTER-PROXY HELLO-PROXY USER PASSWORD [--Ice.Prop=value ...]
//
// 1. createSession, a callback adapter with the router, one callMeBack, 5 sayHello calls;
//    `ready session=1 port=P category=C t=T` (P: the remote port of the router connection,
//    T: CLOCK_MONOTONIC seconds, shared with the driver);
// 2. sayHello every 20 ms until one raises (the driver kills the router at P):
//    `failed exc=TYPE ok_calls=N t=T`;
// 3. a new session through the same router proxy and communicator, a new callback adapter under
//    its category, one callback: `session session=2 port=P category=C attempts=K t=T`,
//    `callback ok t=T`;
// 4. 5 more calls: `call ok t=T`, `calls ok n=5 t=T`; destroySession, `PASS`.
// Any other failure prints `FAIL step: reason` and exits 1.

#include <Demo.h>
#include <Glacier2/Glacier2.h>
#include <Ice/Ice.h>

#include "bounded_properties.hpp"
#include "callback_recorder.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

namespace {

constexpr int calls_before = 5, calls_after = 5;
constexpr auto call_interval = std::chrono::milliseconds(20);
constexpr auto failure_wait = std::chrono::seconds(30);

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void say(const std::string& line) { std::cout << line << std::endl; }

std::string stamp() {
    char buf[32];
    std::snprintf(buf, sizeof buf, "t=%.6f", now());
    return buf;
}

// The remote port of the connection prx's calls use (a routed proxy: the router connection).
int remotePort(const std::shared_ptr<Ice::ObjectPrx>& prx) {
    auto info = prx->ice_getConnection()->getInfo();
    while (info) {
        if (auto ip = std::dynamic_pointer_cast<Ice::IPConnectionInfo>(info)) return ip->remotePort;
        info = info->underlying;
    }
    return -1;
}

std::string typeOf(const Ice::Exception& e) {
    std::string id = e.ice_id();
    return id.rfind("::", 0) == 0 ? id.substr(2) : id;
}

struct Session {
    std::shared_ptr<Ice::ObjectAdapter> adapter;
    std::string category;
};

// createSession, then a callback adapter under the session's category checked with callMeBack.
Session openSession(const std::shared_ptr<Ice::Communicator>& ic, const std::shared_ptr<Glacier2::RouterPrx>& router,
                    const std::shared_ptr<Demo::HelloPrx>& hello, const std::string& user, const std::string& password,
                    const std::string& tag, const std::shared_ptr<Ice::ObjectAdapter>& old) {
    router->createSession(user, password);
    Session s;
    s.category = router->getCategoryForClient();
    if (old) old->destroy();  // bound to the lost session's category and router endpoints
    s.adapter = ic->createObjectAdapterWithRouter("", router);
    auto servant = std::make_shared<CallbackRecorder>();
    auto cb = Ice::uncheckedCast<Demo::CallbackPrx>(s.adapter->add(servant, Ice::Identity{"cb", s.category}));
    s.adapter->activate();
    hello->callMeBack(cb, tag);
    if (!servant->waitFor(tag, std::chrono::seconds(5))) throw std::runtime_error("callback " + tag + " not received");
    return s;
}

int run(const std::shared_ptr<Ice::Communicator>& ic, const std::string& helloProxy, const std::string& user,
        const std::string& password) {
    std::string step = "first session";
    try {
        auto router = Ice::checkedCast<Glacier2::RouterPrx>(ic->getDefaultRouter());
        if (!router) throw std::runtime_error("checkedCast to Glacier2::Router failed");
        auto hello = Ice::uncheckedCast<Demo::HelloPrx>(ic->stringToProxy(helloProxy));
        Session s = openSession(ic, router, hello, user, password, "ring1", nullptr);
        for (int i = 0; i < calls_before; ++i) hello->sayHello("before" + std::to_string(i));
        say("ready session=1 port=" + std::to_string(remotePort(hello)) + " category=" + s.category + " " + stamp());

        step = "waiting for the failure";
        int okCalls = 0;
        const auto end = std::chrono::steady_clock::now() + failure_wait;
        for (;;) {
            try {
                hello->sayHello("waiting");
                ++okCalls;
            } catch (const Ice::LocalException& e) {
                say("failed exc=" + typeOf(e) + " ok_calls=" + std::to_string(okCalls) + " " + stamp());
                break;
            }
            if (std::chrono::steady_clock::now() > end) throw std::runtime_error("no call failed within 30 s");
            std::this_thread::sleep_for(call_interval);
        }

        step = "second session";
        int attempts = 0;
        for (;;) {
            ++attempts;
            try {
                s = openSession(ic, router, hello, user, password, "ring2", s.adapter);
                break;
            } catch (const Ice::LocalException& e) {
                // Not expected (Ice tries every endpoint of the router proxy), but bounded.
                say("attempt " + std::to_string(attempts) + " failed exc=" + typeOf(e) + " " + stamp());
                if (attempts >= 5) throw;
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
            }
        }
        const std::string t = stamp();
        say("session session=2 port=" + std::to_string(remotePort(hello)) + " category=" + s.category +
            " attempts=" + std::to_string(attempts) + " " + t);
        say("callback ok " + t);

        step = "calls on the second session";
        for (int i = 0; i < calls_after; ++i) {
            hello->sayHello("after" + std::to_string(i));
            if (i == 0) say("call ok " + stamp());
        }
        say("calls ok n=" + std::to_string(calls_after) + " " + stamp());
        router->destroySession();
        s.adapter->destroy();
        say("PASS");
        return 0;
    } catch (const std::exception& e) {
        std::string what = e.what();
        for (auto& c : what) {
            if (c == '\n') c = ' ';
        }
        say("FAIL " + step + ": " + what.substr(0, 300));
        return 1;
    }
}

}  // namespace

int main(int argc, char* argv[]) {
    try {
        Ice::InitializationData init;
        init.properties = boundedProperties(true);  // Ice's default retries kept
        // --Ice.* options on the command line win over the above and are removed from args.
        auto args = init.properties->parseIceCommandLineOptions(Ice::argsToStringSeq(argc, argv));
        if (args.size() != 5) {
            std::cerr << "usage: " << argv[0] << " ROUTER-PROXY HELLO-PROXY USER PASSWORD [--Ice.Prop=value ...]\n";
            return 2;
        }
        init.properties->setProperty("Ice.Default.Router", args[1]);
        Ice::CommunicatorHolder ich(init);
        return run(ich.communicator(), args[2], args[3], args[4]);
    } catch (const std::exception& e) {
        std::cout << "FAIL start: " << e.what() << std::endl;
        return 1;
    }
}
