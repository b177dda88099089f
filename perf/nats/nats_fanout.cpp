// nats-fanout: `nats-fanout sub --sessions N ...` or `nats-fanout pub --rate R ...` (see
// nats_fanout.hpp). Raises its descriptor soft limit to the hard limit, so one process can
// hold as many connections as the machine allows.
#include "nats_fanout.hpp"

#include <boost/program_options.hpp>

#include <sys/resource.h>

#include <iostream>

namespace po = boost::program_options;
using namespace moraine::perf;

namespace {

void raise_fd_limit() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts("nats-fanout sub|pub options");
    opts.add_options()("help,h", "print this help")("role", po::value<std::string>(), "sub or pub")(
        "host", po::value<std::string>()->default_value("127.0.0.1"), "nats-server host")(
        "port", po::value<unsigned short>()->default_value(4222), "nats-server port")(
        "subject", po::value<std::string>()->default_value("time"), "subject")(
        "sessions", po::value<std::size_t>()->default_value(1), "sub: connections (one subscription each)")(
        "concurrency", po::value<std::size_t>()->default_value(256), "sub: connections being opened at once")(
        "rate", po::value<double>()->default_value(1.0), "pub: ticks per second")(
        "duration", po::value<double>()->default_value(60), "sub: seconds once all are up; pub: seconds publishing");
    po::positional_options_description pos;
    pos.add("role", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "nats-fanout: " << e.what() << "\n" << opts;
        return 2;
    }
    const auto role = vm.count("role") ? vm["role"].as<std::string>() : std::string();
    if (vm.count("help") || (role != "sub" && role != "pub")) {
        std::cout << "usage: nats-fanout sub|pub [options]\n" << opts;
        return vm.count("help") ? 0 : 2;
    }
    raise_fd_limit();
    const nats_address server{vm["host"].as<std::string>(), vm["port"].as<unsigned short>()};
    if (role == "pub")
        return run_publisher({server, vm["subject"].as<std::string>(), vm["rate"].as<double>(),
                              vm["duration"].as<double>()});
    return run_subscribers({server, vm["subject"].as<std::string>(), std::max<std::size_t>(1, vm["sessions"].as<std::size_t>()),
                            std::max<std::size_t>(1, vm["concurrency"].as<std::size_t>()), vm["duration"].as<double>()});
}
