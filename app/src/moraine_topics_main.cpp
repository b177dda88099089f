// moraine-topics: the IceStorm-compatible topic service on its own, without the router.
#include <moraine/app/app_config.hpp>
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/net/metrics_server.hpp>
#include <moraine/net/runtime_config_reader.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/net/stop_signals.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <iostream>

namespace po = boost::program_options;
using namespace moraine;

namespace {

std::vector<protocol::endpoint> endpoints_or_throw(const std::string& option, const std::string& text) {
    auto eps = protocol::endpoints_from_string(text);
    if (!eps || eps->empty()) throw net::config_error("command line", option, "invalid endpoints `" + text + "'");
    return *eps;
}

/// The topics section of a YAML config, or a configuration from the command line alone.
app::app_config load(const po::variables_map& vm) {
    app::app_config cfg;
    if (vm.count("config")) cfg = app::load_yaml_config(vm["config"].as<std::string>(), false);
    cfg.router = {};  // no router here: only the topic endpoints are served
    auto& t = cfg.topics;
    t.enabled = true;
    if (vm.count("instance-name")) t.instance_name = vm["instance-name"].as<std::string>();
    if (vm.count("topic-manager"))
        t.topic_manager_endpoints = endpoints_or_throw("--topic-manager", vm["topic-manager"].as<std::string>());
    if (vm.count("publish")) t.publish_endpoints = endpoints_or_throw("--publish", vm["publish"].as<std::string>());
    // udp on the TopicManager (or ssl without a certificate) stops start-up: never served as tcp.
    // The Publish endpoints take udp: publishes as datagrams.
    net::require_served(t.topic_manager_endpoints, "command line", "--topic-manager", cfg.runtime.tls);
    net::require_served(t.publish_endpoints, "command line", "--publish", cfg.runtime.tls, true);
    if (vm.count("threads")) cfg.runtime.threads = vm["threads"].as<unsigned>();
    if (vm.count("store")) {
        t.transient = false;
        t.store_dir = vm["store"].as<std::string>();
    }
    if (t.topic_manager_endpoints.empty() || t.publish_endpoints.empty())
        throw net::config_error(cfg.source.empty() ? "command line" : cfg.source, "topics",
                                   "TopicManager and Publish endpoints are required");
    return cfg;
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts("moraine-topics options");
    opts.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
        "config", po::value<std::string>(), "YAML configuration file: its `topics` section is used")(
        "instance-name", po::value<std::string>(), "IceStorm.InstanceName (default IceStorm)")(
        "topic-manager", po::value<std::string>(), "TopicManager endpoints, e.g. \"tcp -h 127.0.0.1 -p 10000\"")(
        "publish", po::value<std::string>(), "Publish endpoints, e.g. \"tcp -h 127.0.0.1 -p 10001\"")(
        "store", po::value<std::string>(),
        "directory of the topic database (topics, subscribers and links kept across restarts); without it and "
        "without a YAML `topics.store`, topics live in memory only")(
        "threads", po::value<unsigned>(), "I/O threads; 0 = one per CPU this process may use (affinity mask, CPU quota)")(
        "log-level", po::value<std::string>()->default_value("info"), "trace, debug, info, warn, error");
    po::variables_map vm;
    app::app_config cfg;
    try {
        po::store(po::parse_command_line(argc, argv, opts), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << "Usage: moraine-topics [--config FILE.yaml] [--topic-manager EPS --publish EPS] [--store DIR]\n" << opts;
            return 0;
        }
        if (vm.count("version")) {
            std::cout << "moraine-topics 0.1.0\n";
            return 0;
        }
        cfg = load(vm);
    } catch (const std::exception& e) {
        std::cerr << "moraine-topics: " << e.what() << "\n";
        return 2;
    }
    spdlog::set_level(spdlog::level::from_str(vm["log-level"].as<std::string>()));

    net::block_stop_signals();
    try {
        net::shard_set shards(std::make_shared<const net::runtime_config>(cfg.runtime));
        icestorm_bridge::topic_service topics(shards, cfg.topics, nullptr);
        std::unique_ptr<net::metrics_server> metrics;
        if (cfg.runtime.metrics.enabled) metrics = std::make_unique<net::metrics_server>(shards, cfg.runtime.metrics);
        shards.start();
        spdlog::info("moraine-topics ready: {} shard(s)", shards.size());
        while (net::wait_for_stop_signal() == SIGHUP)
            spdlog::info("SIGHUP: moraine-topics has nothing to reload");
        shards.drain(std::chrono::milliseconds(cfg.runtime.drain_timeout_ms));
        shards.stop();
        shards.join();
    } catch (const std::exception& e) {
        std::cerr << "moraine-topics: cannot start: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
