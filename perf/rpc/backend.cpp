// rpc-backend: the back end of perf/rpc_compare.py. Serves Bench::Target as `echo` on the endpoints
// of --Bench.Endpoints (default: tcp and ssl on free ports of 127.0.0.1), prints one
// `endpoint <string>` line per endpoint it listens on, then `ready`, and runs until SIGINT/SIGTERM.
//
//   rpc-backend [--Ice.Config=FILE] [--Bench.Endpoints="tcp -h 127.0.0.1 -p 0:ssl -h 127.0.0.1 -p 0"]
//
// An ssl endpoint needs the IceSSL plugin's properties (Ice.Plugin.IceSSL, IceSSL.CertFile...).
// Ice 3.7 C++11 mapping; the dispatch thread pool is Ice's default (Ice.ThreadPool.Server.Size=1).
#include <Bench.h>
#include <Ice/Ice.h>
#include <Ice/RegisterPlugins.h>

#include <atomic>
#include <iostream>

namespace {

class EchoI : public Bench::Target {
public:
    std::string echo(std::string s, const Ice::Current&) override {
        ++calls;
        return s;
    }
    void ping(const Ice::Current&) override { ++calls; }
    std::atomic<unsigned long long> calls{0};
};

}  // namespace

int main(int argc, char* argv[]) {
    Ice::registerIceSSL(false);  // loaded only when Ice.Plugin.IceSSL is set
    try {
        Ice::CtrlCHandler ctrlC;
        Ice::InitializationData init;
        init.properties = Ice::createProperties(argc, argv);
        auto args = init.properties->parseCommandLineOptions("Bench", Ice::argsToStringSeq(argc, argv));
        Ice::CommunicatorHolder ich(init);
        auto ic = ich.communicator();
        ctrlC.setCallback([ic](int) { ic->shutdown(); });
        auto props = ic->getProperties();
        auto adapter = ic->createObjectAdapterWithEndpoints(
            "Bench", props->getPropertyWithDefault("Bench.Endpoints", "tcp -h 127.0.0.1 -p 0:ssl -h 127.0.0.1 -p 0"));
        auto servant = std::make_shared<EchoI>();
        adapter->add(servant, Ice::stringToIdentity("echo"));
        adapter->activate();
        for (const auto& e : adapter->getEndpoints()) std::cout << "endpoint " << e->toString() << "\n";
        std::cout << "ready" << std::endl;
        ic->waitForShutdown();
        std::cout << "calls " << servant->calls.load() << std::endl;
    } catch (const std::exception& e) {
        std::cerr << "rpc-backend: " << e.what() << std::endl;
        return 1;
    }
    return 0;
}
