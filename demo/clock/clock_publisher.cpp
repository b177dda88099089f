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
#include <thread>

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

/// The proxy an OK reply returns. @throws std::runtime_error.
protocol::proxy proxy_result(const demo::ice_call::reply& r, std::string_view what) {
    if (r.status != protocol::reply_status::ok) throw std::runtime_error(std::string(what) + " failed");
    protocol::input_stream outer(r.payload);
    const auto encaps = outer.read_encapsulation();
    protocol::input_stream in(encaps.payload(), encaps.encoding);
    auto p = protocol::read_proxy(in);
    if (!outer.ok() || !in.ok() || p.is_nil() || p.endpoints.empty())
        throw std::runtime_error(std::string(what) + ": unexpected result");
    return p;
}

/// IceStorm::TopicManager::retrieve, or create if the topic does not exist yet.
protocol::proxy find_or_create_topic(demo::ice_call& manager, const protocol::identity& manager_id,
                                     const std::string& topic) {
    const auto params = string_params(topic);
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto r = manager.invoke(manager_id, "retrieve", 1, params);
        if (r.status == protocol::reply_status::ok) return proxy_result(r, "retrieve");
        r = manager.invoke(manager_id, "create", 0, params);  // NoSuchTopic: create it
        if (r.status == protocol::reply_status::ok) return proxy_result(r, "create");
        // TopicExists: someone created it meanwhile; retrieve again.
    }
    throw std::runtime_error("cannot retrieve or create topic " + topic);
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts("clock-publisher options");
    opts.add_options()("help,h", "print this help")(
        "topic-manager", po::value<std::string>()->default_value("tcp -h 127.0.0.1 -p 10000"),
        "TopicManager endpoint")("instance-name", po::value<std::string>()->default_value("IceStorm"),
                                 "IceStorm instance name")(
        "topic", po::value<std::string>()->default_value("time"), "topic name")(
        "rate", po::value<double>()->default_value(1.0), "ticks per second")(
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
    try {
        auto ep = protocol::endpoint_from_string(vm["topic-manager"].as<std::string>());
        if (!ep) throw std::runtime_error("bad --topic-manager endpoint");
        boost::asio::io_context io;
        demo::ice_call manager(io, *ep);
        const protocol::identity manager_id{"TopicManager", vm["instance-name"].as<std::string>()};
        const auto topic = find_or_create_topic(manager, manager_id, vm["topic"].as<std::string>());
        demo::ice_call topic_conn(io, topic.endpoints.front());
        protocol::output_stream none;
        none.write_empty_encapsulation(protocol::encoding_1_1);
        const auto publisher = proxy_result(topic_conn.invoke(topic.id, "getPublisher", 1, none.take()), "getPublisher");
        demo::ice_call pub(io, publisher.endpoints.front());
        std::cout << "clock-publisher: publishing on " << protocol::proxy_to_string(publisher) << " at "
                  << vm["rate"].as<double>() << " tick/s" << std::endl;

        const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(1.0 / vm["rate"].as<double>()));
        const double duration = vm["duration"].as<double>();
        const auto start = std::chrono::steady_clock::now();
        auto next = start;
        std::uint64_t seq = 0;
        while (!stopping) {
            const auto now = std::chrono::steady_clock::now();
            if (duration > 0 && now - start >= std::chrono::duration<double>(duration)) break;
            pub.send_oneway(publisher.id, "tick", string_params(demo::format_tick({++seq, now})));
            next += period;
            std::this_thread::sleep_until(next);
        }
        std::cout << "clock-publisher: " << seq << " ticks published" << std::endl;
    } catch (const std::exception& e) {
        std::cerr << "clock-publisher: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
