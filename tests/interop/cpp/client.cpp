// C++ client of Moraine's interop suite, built against ZeroC Ice 3.7 (C++11 mapping).
//
//   moraine-interop-client ROUTER-PROXY HELLO-PROXY USER PASSWORD
//
// Through the router: createSession, sayHello("cpp"), fail("kaboom") -> Demo::Boom, and a
// twoway callback through a router-attached adapter. Prints one line per step that worked
// (run.py checks them) and exits non-zero at the first step that did not.

#include <Demo.h>
#include <Glacier2/Glacier2.h>
#include <Ice/Ice.h>

#include "bounded_properties.hpp"
#include "callback_recorder.hpp"

#include <chrono>
#include <iostream>
#include <string>

namespace {

int run(const std::shared_ptr<Ice::Communicator>& ic, const std::string& helloProxy, const std::string& user,
        const std::string& password) {
    auto router = Ice::checkedCast<Glacier2::RouterPrx>(ic->getDefaultRouter());
    if (!router) {
        std::cerr << "checkedCast to Glacier2::Router failed\n";
        return 1;
    }
    router->createSession(user, password);
    std::cout << "session ok" << std::endl;

    auto hello = Ice::uncheckedCast<Demo::HelloPrx>(ic->stringToProxy(helloProxy));
    std::cout << hello->sayHello("cpp") << std::endl;

    try {
        hello->fail("kaboom");
        std::cerr << "fail() did not throw\n";
        return 1;
    } catch (const Demo::Boom& e) {
        std::cout << "boom " << e.why << std::endl;
    }

    auto adapter = ic->createObjectAdapterWithRouter("Callback", router);
    auto servant = std::make_shared<CallbackRecorder>();
    auto cb = Ice::uncheckedCast<Demo::CallbackPrx>(
        adapter->add(servant, Ice::Identity{"cb", router->getCategoryForClient()}));
    adapter->activate();
    hello->callMeBack(cb, "ring");
    if (!servant->waitFor("ring", std::chrono::seconds(5))) {
        std::cerr << "callback not received\n";
        return 1;
    }
    std::cout << "callback ring" << std::endl;

    router->destroySession();
    return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
    if (argc != 5) {
        std::cerr << "usage: " << argv[0] << " ROUTER-PROXY HELLO-PROXY USER PASSWORD\n";
        return 2;
    }
    try {
        Ice::InitializationData init;
        init.properties = boundedProperties(false);  // no silent retries
        init.properties->setProperty("Ice.Default.Router", argv[1]);
        Ice::CommunicatorHolder ich(init);
        return run(ich.communicator(), argv[2], argv[3], argv[4]);
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
}
