// clock-publisher: publishes Demo::Clock::tick(string time) on an IceStorm topic at a given rate.
// It talks to the topic service directly (no session), as IceStorm publishers usually do.
#include "clock/ice_call.hpp"
#include "clock/tick.hpp"

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/proxy.hpp>

#include <boost/program_options.hpp>

#include <atomic>
#include <csignal>
#include <iostream>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace po = boost::program_options;
using namespace moraine;

namespace {

std::atomic<bool> stopping{false};

protocol::byte_buffer string_params(std::string_view s) {
    protocol::output_stream os;
    const auto at = os.start_encapsulation(protocol::encoding_1_1);
    os.write_string(s);
    os.end_encapsulation(at);
    return os.take();
}

/// The proxy an OK reply returns (direct, or indirect too if `indirect_ok`). @throws std::runtime_error.
protocol::proxy proxy_result(const demo::ice_call::reply& r, std::string_view what, bool indirect_ok = true) {
    if (r.status != protocol::reply_status::ok) throw std::runtime_error(std::string(what) + " failed");
    protocol::input_stream outer(r.payload);
    const auto encaps = outer.read_encapsulation();
    protocol::input_stream in(encaps.payload(), encaps.encoding);
    auto p = protocol::read_proxy(in);
    if (!outer.ok() || !in.ok() || p.is_nil() || (p.endpoints.empty() && (!indirect_ok || p.adapter_id.empty())))
        throw std::runtime_error(std::string(what) + ": unexpected result");
    return p;
}


/// A proxy this publisher calls: its identity and where it is (direct endpoints, or an adapter
/// id for the locator to resolve).
struct target {
    protocol::identity id;
    std::vector<protocol::endpoint> endpoints;
    std::string adapter_id;
};

target as_target(const protocol::proxy& p) { return target{p.id, p.endpoints, p.adapter_id}; }

double now_s(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/** A connection to one of `eps`, tried in turn from a random one (Ice's Random endpoint
    selection); `used` names the endpoint it reached. `last_resort`, if among them, is tried last:
    the replica whose connection just failed, which may be back already (its node restarts it)
    yet hold every event until it has rejoined the replica set. @throws std::runtime_error if
    none answers. */
std::unique_ptr<demo::ice_call> connect_any(boost::asio::io_context& io, const std::vector<protocol::endpoint>& eps,
                                            protocol::endpoint& used,
                                            const std::optional<protocol::endpoint>& last_resort = std::nullopt) {
    if (eps.empty()) throw std::runtime_error("no endpoint to connect to");
    static std::minstd_rand random(std::random_device{}());
    std::vector<protocol::endpoint> order(eps.begin(), eps.end());
    std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(random() % order.size()), order.end());
    if (last_resort)
        std::stable_partition(order.begin(), order.end(), [&](const protocol::endpoint& e) {
            return !(e.host == last_resort->host && e.port == last_resort->port);
        });
    std::string why;
    for (const auto& ep : order) {
        try {
            auto c = std::make_unique<demo::ice_call>(io, ep);
            used = ep;
            return c;
        } catch (const std::runtime_error& e) {
            why = e.what();
        }
    }
    throw std::runtime_error("no endpoint answers (last: " + why + ")");
}

/// The locator (IceGrid/Locator at --locator): the endpoints of indirect target `t`
/// (Locator::findAdapterById), or of well-known object `t.id` (findObjectById, then its adapter).
std::vector<protocol::endpoint> locate(boost::asio::io_context& io, const std::vector<protocol::endpoint>& locator,
                                       const target& t, int depth = 0) {
    if (!t.endpoints.empty()) return t.endpoints;
    if (locator.empty())
        throw std::runtime_error("indirect proxy (adapter '" + t.adapter_id + "') and no --locator to resolve it");
    if (depth > 1) throw std::runtime_error("the locator answered with an indirect proxy twice");
    protocol::endpoint used;
    auto c = connect_any(io, locator, used);
    const protocol::identity locator_id{"Locator", "IceGrid"};
    demo::ice_call::reply r;
    if (!t.adapter_id.empty()) {
        r = c->invoke(locator_id, "findAdapterById", 1, string_params(t.adapter_id));
    } else {
        protocol::output_stream os;
        const auto at = os.start_encapsulation(protocol::encoding_1_1);
        os.write_identity(t.id.view());
        os.end_encapsulation(at);
        r = c->invoke(locator_id, "findObjectById", 1, os.take());
    }
    const auto p = proxy_result(r, t.adapter_id.empty() ? "findObjectById" : "findAdapterById", true);
    if (p.endpoints.empty()) return locate(io, locator, target{t.id, {}, p.adapter_id}, depth + 1);
    return p.endpoints;
}

/// Calls `operation` on `t` (twoway, a fresh connection to one of its endpoints). @throws std::runtime_error.
demo::ice_call::reply call(boost::asio::io_context& io, const std::vector<protocol::endpoint>& locator,
                           const target& t, std::string_view operation, std::uint8_t mode,
                           const protocol::byte_buffer& params) {
    protocol::endpoint used;
    auto c = connect_any(io, locate(io, locator, t), used);
    return c->invoke(t.id, operation, mode, params);
}

/// IceStorm::TopicManager::retrieve, or create if the topic does not exist yet.
target find_or_create_topic(boost::asio::io_context& io, const std::vector<protocol::endpoint>& locator,
                            const target& manager, const std::string& topic) {
    const auto params = string_params(topic);
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto r = call(io, locator, manager, "retrieve", 1, params);
        if (r.status == protocol::reply_status::ok) return as_target(proxy_result(r, "retrieve"));
        r = call(io, locator, manager, "create", 0, params);  // NoSuchTopic: create it
        if (r.status == protocol::reply_status::ok) return as_target(proxy_result(r, "create"));
        // TopicExists: someone created it meanwhile; retrieve again.
    }
    throw std::runtime_error("cannot retrieve or create topic " + topic);
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts("clock-publisher options");
    opts.add_options()("help,h", "print this help")(
        "topic-manager", po::value<std::string>(),
        "TopicManager endpoint(s), several separated by ':' (replicas: one is picked at random, the others "
        "tried if it fails); default tcp -h 127.0.0.1 -p 10000, or with --locator the well-known object "
        "<instance-name>/TopicManager")(
        "locator", po::value<std::string>(),
        "endpoint(s) of an IceGrid registry's client endpoint (object IceGrid/Locator): resolves the "
        "TopicManager and the indirect proxies a replicated IceStorm returns")(
        "instance-name", po::value<std::string>()->default_value("IceStorm"), "IceStorm instance name")(
        "topic", po::value<std::string>()->default_value("time"), "topic name")(
        "rate", po::value<double>()->default_value(1.0), "ticks per second")(
        "twoway", "publish twoway: wait for IceStorm's reply to each tick and, if the connection fails, send "
                  "the same tick again to another replica until one takes it (no tick is lost; one may "
                  "arrive twice)")(
        "duration", po::value<double>()->default_value(0), "seconds to run; 0 = until SIGINT/SIGTERM");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, opts), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "clock-publisher: " << e.what() << "\n" << opts;
        return 2;
    }
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    std::signal(SIGINT, [](int) { stopping = true; });
    std::signal(SIGTERM, [](int) { stopping = true; });
    const bool twoway = vm.count("twoway") > 0;
    const auto start = std::chrono::steady_clock::now();
    try {
        std::vector<protocol::endpoint> locator;
        if (vm.count("locator")) {
            auto eps = protocol::endpoints_from_string(vm["locator"].as<std::string>());
            if (!eps || eps->empty()) throw std::runtime_error("bad --locator endpoints");
            locator = *eps;
        }
        target manager{{"TopicManager", vm["instance-name"].as<std::string>()}, {}, {}};
        if (vm.count("topic-manager") || locator.empty()) {
            auto eps = protocol::endpoints_from_string(
                vm.count("topic-manager") ? vm["topic-manager"].as<std::string>() : "tcp -h 127.0.0.1 -p 10000");
            if (!eps || eps->empty()) throw std::runtime_error("bad --topic-manager endpoints");
            manager.endpoints = *eps;
        }
        boost::asio::io_context io;
        const auto topic = find_or_create_topic(io, locator, manager, vm["topic"].as<std::string>());
        protocol::output_stream none;
        none.write_empty_encapsulation(protocol::encoding_1_1);
        const auto publisher = as_target(proxy_result(call(io, locator, topic, "getPublisher", 1, none.take()), "getPublisher"));
        std::cout << "clock-publisher: publishing " << (twoway ? "twoway" : "oneway") << " on "
                  << protocol::identity_to_string(publisher.id.view()) << " at " << vm["rate"].as<double>() << " tick/s"
                  << std::endl;

        std::unique_ptr<demo::ice_call> pub;
        protocol::endpoint at;
        std::vector<protocol::endpoint> known;  // the publisher object's last resolution
        // (Re)connects to a replica of the publisher object, resolving it again (a replica
        // group's endpoints) if it is indirect; the last answer if the locator does not answer.
        std::optional<protocol::endpoint> failed_at;  // the replica whose connection failed last
        auto connect = [&] {
            try {
                known = locate(io, locator, publisher);
            } catch (const std::runtime_error&) {
                if (known.empty()) throw;
            }
            pub = connect_any(io, known, at, failed_at);
            std::printf("clock-publisher: %.3f s connected to %s\n", now_s(start), protocol::endpoint_to_string(at).c_str());
            std::fflush(stdout);
        };
        connect();

        const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(1.0 / vm["rate"].as<double>()));
        const double duration = vm["duration"].as<double>();
        auto next = start;
        std::uint64_t seq = 0, resent = 0, failovers = 0;
        double longest_ms = 0;
        while (!stopping) {
            const auto now = std::chrono::steady_clock::now();
            if (duration > 0 && now - start >= std::chrono::duration<double>(duration)) break;
            const auto params = string_params(demo::format_tick({++seq, now}));
            if (!twoway) {
                pub->send_oneway(publisher.id, "tick", params);
            } else {
                // Until a replica answers: a failed connection (the replica died) is
                // replaced by one to another replica and the tick sent again.
                for (bool sent = false; !sent && !stopping;) {
                    try {
                        if (!pub) connect();
                        const auto r = pub->invoke(publisher.id, "tick", 0, params);
                        if (r.status != protocol::reply_status::ok)
                            throw std::runtime_error("tick: reply status " + std::to_string(static_cast<int>(r.status)));
                        sent = true;
                    } catch (const std::runtime_error& e) {
                        if (pub) {
                            ++failovers;
                            std::printf("clock-publisher: %.3f s tick %llu via %s failed: %s; trying the replicas\n",
                                        now_s(start), static_cast<unsigned long long>(seq),
                                        protocol::endpoint_to_string(at).c_str(), e.what());
                            std::fflush(stdout);
                        }
                        if (pub) {
                            ++resent;
                            failed_at = at;
                        }
                        pub.reset();
                        std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    }
                }
                longest_ms = std::max(longest_ms, std::chrono::duration<double, std::milli>(
                                                      std::chrono::steady_clock::now() - now).count());
            }
            next += period;
            std::this_thread::sleep_until(next);
        }
        std::cout << "clock-publisher: " << seq << " ticks published";
        if (twoway)
            std::cout << "; " << failovers << " failed connections, " << resent << " ticks sent again, longest "
                      << longest_ms << " ms from a tick's time to its reply";
        std::cout << std::endl;
    } catch (const std::exception& e) {
        std::cerr << "clock-publisher: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
