// moraine-router: the session router. `--config FILE.yaml` or `--ice-config FILE` (a Glacier2 property file).
// The composition root: the runtime's shards, the Glacier2 router on them and, beside it, the
// topic service, which reaches the router's sessions through net::session_directory.
#include <moraine/app/app_config.hpp>
#include <moraine/icestorm/topic_service.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/net/stop_signals.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/router/session_router.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

namespace po = boost::program_options;
using namespace moraine;

namespace {

constexpr const char* version = "moraine-router 0.1.0";

std::string endpoints_text(const std::vector<protocol::endpoint>& eps) {
    std::string s;
    for (const auto& e : eps) s += (s.empty() ? "" : " : ") + protocol::endpoint_to_string(e);
    return s.empty() ? "(none)" : s;
}

/// Parses the command line; returns nullopt (after printing) for --help/--version or an error.
std::optional<po::variables_map> parse_args(int argc, char** argv, int& exit_code) {
    po::options_description opts("moraine-router options");
    opts.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
        "config", po::value<std::string>(), "YAML configuration file (see conf/moraine.yaml)")(
        "ice-config", po::value<std::string>(), "Glacier2 property file, read as glacier2router would")(
        "threads", po::value<unsigned>(), "I/O threads (shards); overrides the file; 0 = one per core")(
        "log-level", po::value<std::string>()->default_value("info"), "trace, debug, info, warn, error");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, opts), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "moraine-router: " << e.what() << "\n" << opts;
        exit_code = 2;
        return std::nullopt;
    }
    if (vm.count("help")) {
        std::cout << "Usage: moraine-router (--config FILE.yaml | --ice-config FILE) [options]\n" << opts;
        exit_code = 0;
        return std::nullopt;
    }
    if (vm.count("version")) {
        std::cout << version << "\n";
        exit_code = 0;
        return std::nullopt;
    }
    if (vm.count("config") == vm.count("ice-config")) {
        std::cerr << "moraine-router: give exactly one of --config or --ice-config\n";
        exit_code = 2;
        return std::nullopt;
    }
    return vm;
}

app::app_config load(const po::variables_map& vm) {
    auto cfg = vm.count("config") ? app::load_yaml_config(vm["config"].as<std::string>())
                                  : app::load_ice_config(vm["ice-config"].as<std::string>());
    if (vm.count("threads")) cfg.runtime.threads = vm["threads"].as<unsigned>();
    return cfg;
}

}  // namespace

int main(int argc, char** argv) {
    int exit_code = 0;
    auto vm = parse_args(argc, argv, exit_code);
    if (!vm) return exit_code;
    spdlog::set_level(spdlog::level::from_str((*vm)["log-level"].as<std::string>()));

    app::app_config cfg;
    try {
        cfg = load(*vm);
    } catch (const std::exception& e) {
        std::cerr << "moraine-router: " << e.what() << "\n";
        return 1;
    }
    for (const auto& w : cfg.warnings) spdlog::warn("{}", w);  // each names its file and line

    // Block the stop signals in every thread; the main thread waits for them below.
    net::block_stop_signals();

    std::unique_ptr<net::shard_set> shards;
    std::unique_ptr<router::session_router> glacier2;
    std::unique_ptr<icestorm::topic_service> topics;
    try {
        shards = std::make_unique<net::shard_set>(std::make_shared<const net::runtime_config>(cfg.runtime));
        glacier2 = std::make_unique<router::session_router>(*shards, std::make_shared<const router::config>(cfg.router));
        glacier2->start();  // before the topic service: it asks the router for its bound server endpoints
        if (cfg.topics.enabled) topics = std::make_unique<icestorm::topic_service>(*shards, cfg.topics, glacier2.get());
        shards->start();
    } catch (const std::exception& e) {
        std::cerr << "moraine-router: cannot start: " << e.what() << "\n";
        return 1;
    }
    spdlog::info("{} ready: {} shard(s), client endpoints {}, server endpoints {}", version, shards->size(),
                 endpoints_text(cfg.router.client_endpoints), endpoints_text(cfg.router.server_endpoints));
    if (topics)
        spdlog::info("topic service {}: TopicManager {}, Publish {}", cfg.topics.instance_name,
                     endpoints_text(cfg.topics.topic_manager_endpoints), endpoints_text(cfg.topics.publish_endpoints));

    const int sig = net::wait_for_stop_signal();
    spdlog::info("signal {}: shutting down", sig);
    shards->stop();
    shards->join();
    return 0;
}
