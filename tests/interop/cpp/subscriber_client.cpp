// C++ subscriber client of Moraine's tests (tests/ops/takeover_icestorm.py), built against ZeroC
// Ice 3.7 (C++11 mapping): one Glacier2 session whose callback object is subscribed to an IceStorm
// topic through the router while the router is replaced.
//
//   moraine-interop-subscriber-client ROUTER-PROXY TOPIC-MANAGER-PROXY TOPIC USER PASSWORD
//       [--oneway] [--Ice.Prop=value ...]
//
// 1. createSession, getCategoryForClient, a callback adapter with the router and a Demo::Callback
//    servant "sub" in the session's category, subscribed to TOPIC through the router: with QoS
//    reliability=ordered (IceStorm sends each event twoway, one at a time), or with --oneway as a
//    oneway proxy (oneway events); prints `ready category=C transport=T` (T: the type of the
//    router connection, tcp or ws);
// 2. records the number each ping(msg) carries until stdin is closed or a `stop` line is read;
// 3. prints one summary line and exits 0:
//    `summary received=N first=F last=L missing=M repeated=R out_of_order=O`
//    (missing: numbers between first and last never received; repeated: received more than
//    once; out_of_order: a number lower than the one before it). The driver judges them.
// A failure before the loop prints `FAIL step: reason` and exits 1.

#include <Demo.h>
#include <Glacier2/Glacier2.h>
#include <Ice/Ice.h>
#include <IceStorm/IceStorm.h>

#include "bounded_properties.hpp"

#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

/// Demo::Callback::ping(msg): keeps the numbers the events carry, in arrival order.
class SequenceRecorder : public Demo::Callback {
public:
    void ping(std::string msg, const Ice::Current&) override {
        std::lock_guard<std::mutex> lock(mutex_);
        seen_.push_back(std::stol(msg));
    }
    std::vector<long> seen() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return seen_;
    }

private:
    mutable std::mutex mutex_;
    std::vector<long> seen_;
};

std::string summary(const std::vector<long>& seen) {
    if (seen.empty()) return "summary received=0";
    std::set<long> distinct(seen.begin(), seen.end());
    long outOfOrder = 0;
    for (std::size_t i = 1; i < seen.size(); ++i)
        if (seen[i] < seen[i - 1]) ++outOfOrder;
    const long first = seen.front(), last = *distinct.rbegin();
    const long missing = (last - first + 1) - static_cast<long>(distinct.size());
    return "summary received=" + std::to_string(seen.size()) + " first=" + std::to_string(first) +
           " last=" + std::to_string(last) + " missing=" + std::to_string(missing) +
           " repeated=" + std::to_string(seen.size() - distinct.size()) + " out_of_order=" + std::to_string(outOfOrder);
}

std::string oneLine(std::string s) {
    for (auto& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s.substr(0, 300);
}

}  // namespace

int main(int argc, char* argv[]) {
    std::string step = "start";
    try {
        Ice::InitializationData init;
        init.properties = boundedProperties(false);  // no silent retries
        auto args = init.properties->parseIceCommandLineOptions(Ice::argsToStringSeq(argc, argv));
        const bool oneway = args.size() == 7 && args[6] == "--oneway";
        if (args.size() != 6 && !oneway) {
            std::cerr << "usage: " << argv[0]
                      << " ROUTER-PROXY TOPIC-MANAGER-PROXY TOPIC USER PASSWORD [--oneway] [--Ice.Prop=value ...]\n";
            return 2;
        }
        init.properties->setProperty("Ice.Default.Router", args[1]);
        Ice::CommunicatorHolder ich(init);
        auto ic = ich.communicator();
        step = "session";
        auto router = Ice::checkedCast<Glacier2::RouterPrx>(ic->getDefaultRouter());
        if (!router) throw std::runtime_error("checkedCast to Glacier2::Router failed");
        router->createSession(args[4], args[5]);
        const auto category = router->getCategoryForClient();
        step = "subscriber";
        auto adapter = ic->createObjectAdapterWithRouter("", router);
        auto servant = std::make_shared<SequenceRecorder>();
        auto me = adapter->add(servant, Ice::Identity{"sub", category});
        adapter->activate();
        auto manager = Ice::checkedCast<IceStorm::TopicManagerPrx>(ic->stringToProxy(args[2]));
        if (!manager) throw std::runtime_error("checkedCast to IceStorm::TopicManager failed");
        auto topic = manager->retrieve(args[3]);
        if (oneway) topic->subscribeAndGetPublisher({}, me->ice_oneway());
        else topic->subscribeAndGetPublisher({{"reliability", "ordered"}}, me);
        std::cout << "ready category=" << category << " transport=" << router->ice_getConnection()->type()
                  << std::endl;
        for (std::string line; std::getline(std::cin, line) && line != "stop";) {
        }
        std::cout << summary(servant->seen()) << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cout << "FAIL " << step << ": " << oneLine(e.what()) << std::endl;
        return 1;
    }
}
