// moraine-router: the session router. `--config FILE.yaml` or `--ice-config FILE` (a Glacier2 property file).
// The composition root: the runtime's shards, the Glacier2 router on them and, beside it, the
// topic service, which reaches the router's sessions through net::session_directory.
#include "session_intake.hpp"

#include <moraine/app/app_config.hpp>
#include <moraine/app/ice_arguments.hpp>
#include <moraine/app/listener_manifest.hpp>
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/net/adapter_registration.hpp>
#include <moraine/net/admin_object.hpp>
#include <moraine/net/admin_registration.hpp>
#include <moraine/net/metrics_server.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/net/stop_signals.hpp>
#include <moraine/net/takeover_client.hpp>
#include <moraine/net/takeover_server.hpp>
#include <moraine/net/tls_context.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/router/session_router.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <mutex>
#include <unistd.h>
#include <iostream>
#include <memory>
#include <optional>

namespace po = boost::program_options;
using namespace moraine;

namespace {

constexpr const char* version = "moraine-router 0.1.0";

std::string endpoints_text(const std::vector<protocol::endpoint>& eps) {
    std::string s;
    for (const auto& e : eps) s += (s.empty() ? "" : " : ") + protocol::endpoint_to_string(e);
    return s.empty() ? "(none)" : s;
}

/// Properties set through the admin object's Properties facet: they override the file's as the
/// command line's do, at the reload they trigger and at every later one.
class admin_properties {
public:
    /// The properties in force now: those loaded at start, with the admin's changes on top.
    std::map<std::string, std::string> current() const {
        std::lock_guard lock(mutex_);
        auto in_force = loaded_;
        for (const auto& [k, v] : set_) {
            if (v.value.empty())
                in_force.erase(k);
            else
                in_force[k] = v.value;
        }
        return in_force;
    }
    /// Records `changes` (an empty value removes the key).
    void set(const std::map<std::string, std::string>& changes) {
        std::lock_guard lock(mutex_);
        for (const auto& [k, v] : changes) set_[k] = net::property_value{v, 0, "admin setProperties (" + k + ")"};
    }
    void reset(std::map<std::string, std::string> loaded) {
        std::lock_guard lock(mutex_);
        loaded_ = std::move(loaded);
    }
    /// `overrides` with the admin's changes on top.
    net::property_map over(net::property_map overrides) const {
        std::lock_guard lock(mutex_);
        for (const auto& [k, v] : set_) overrides[k] = v;
        return overrides;
    }

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::string> loaded_;
    net::property_map set_;
};

/// What the command line asked for: Moraine's options, and glacier2router's property options.
struct command_line {
    po::variables_map vm;
    app::ice_arguments ice;  // --Ice.Config=FILE, --Glacier2.X=Y, ...
    std::shared_ptr<admin_properties> admin = std::make_shared<admin_properties>();
};

/// Parses the command line; returns nullopt (after printing) for --help/--version or an error.
std::optional<command_line> parse_args(int argc, char** argv, int& exit_code) {
    po::options_description opts("moraine-router options");
    opts.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
        "config", po::value<std::string>(), "YAML configuration file (see conf/moraine.yaml)")(
        "ice-config", po::value<std::string>(), "Glacier2 property file, read as glacier2router would")(
        "threads", po::value<unsigned>(), "I/O threads (shards); overrides the file; 0 = one per CPU this process may use (affinity mask, CPU quota)")(
        "log-level", po::value<std::string>()->default_value("info"), "trace, debug, info, warn, error")(
        "takeover", po::value<std::string>(),
        "take the listening sockets over from the router serving takeover socket PATH (same configuration), "
        "which then drains; nobody there: start as usual (docs/takeover.md)");
    const char* usage =
        "Usage: moraine-router (--config FILE.yaml | --ice-config FILE) [--takeover PATH] [options]\n"
        "       moraine-router --Ice.Config=FILE [--Glacier2.Key=Value ...]   (as glacier2router)\n"
        "Property options --Ice.*, --IceSSL.*, --IceStorm.*, --Glacier2.*, --Moraine.* override the\n"
        "property file's keys (an empty value unsets one); with no file they are the configuration.\n";
    command_line cl;
    cl.ice = app::split_ice_arguments(std::vector<std::string>(argv, argv + argc));
    std::vector<const char*> rest;
    for (const auto& a : cl.ice.rest) rest.push_back(a.c_str());
    auto& vm = cl.vm;
    try {
        po::store(po::parse_command_line(static_cast<int>(rest.size()), rest.data(), opts), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "moraine-router: " << e.what() << "\n" << usage << opts;
        exit_code = 2;
        return std::nullopt;
    }
    if (vm.count("help")) {
        std::cout << usage << opts;
        exit_code = 0;
        return std::nullopt;
    }
    if (vm.count("version")) {
        std::cout << version << "\n";
        exit_code = 0;
        return std::nullopt;
    }
    const bool properties = vm.count("ice-config") || cl.ice.any();
    if (vm.count("config") && properties) {
        std::cerr << "moraine-router: --config (YAML) cannot be combined with --ice-config, --Ice.Config or "
                     "property options\n";
        exit_code = 2;
        return std::nullopt;
    }
    if (vm.count("ice-config") && !cl.ice.config_files.empty()) {
        std::cerr << "moraine-router: give --ice-config or --Ice.Config, not both\n";
        exit_code = 2;
        return std::nullopt;
    }
    if (!vm.count("config") && !properties) {
        std::cerr << "moraine-router: give --config FILE.yaml, --ice-config FILE or --Ice.Config=FILE\n";
        exit_code = 2;
        return std::nullopt;
    }
    return cl;
}

app::app_config load(const command_line& cl) {
    const auto& vm = cl.vm;
    app::app_config cfg;
    if (vm.count("config")) {
        cfg = app::load_yaml_config(vm["config"].as<std::string>());
    } else {
        std::vector<std::filesystem::path> files(cl.ice.config_files.begin(), cl.ice.config_files.end());
        if (vm.count("ice-config")) files.emplace_back(vm["ice-config"].as<std::string>());
        cfg = app::load_ice_config(files, cl.admin->over(cl.ice.overrides));
    }
    if (vm.count("threads")) cfg.runtime.threads = vm["threads"].as<unsigned>();
    return cfg;
}

/// The log level: the command line's when given, else the file's, else info.
void apply_log_level(const command_line& cl, const app::app_config& cfg) {
    const auto& vm = cl.vm;
    const bool from_file = vm["log-level"].defaulted() && !cfg.runtime.log_level.empty();
    spdlog::set_level(spdlog::level::from_str(from_file ? cfg.runtime.log_level : vm["log-level"].as<std::string>()));
}

/** SIGHUP: re-reads the configuration file and applies what can change under running sessions:
    the password file, the filters (for new sessions), the TLS certificates (for new
    handshakes), the log level and the trace levels. A file that does not load, or a password file or certificate
    that does not, is refused as a whole with a message; the configuration in force stays. */
void reload(const command_line& cl, net::shard_set& shards, router::session_router& glacier2) {
    spdlog::info("SIGHUP: reloading the configuration");
    try {
        const auto fresh = load(cl);
        for (const auto& w : fresh.warnings) spdlog::warn("{}", w);
        // Everything that can fail comes first, so a refusal changes nothing.
        std::shared_ptr<const net::tls_contexts> tls;
        if (shards.tls()) tls = net::tls_contexts::create(fresh.runtime.tls);
        glacier2.reload(fresh.router);
        if (tls) shards.install_tls(std::move(tls));
        apply_log_level(cl, fresh);
        spdlog::info("reloaded {}: password file, filters, session limits and login back-off, TLS certificates, "
                     "log level and trace levels; other keys take effect at the next start",
                     fresh.source);
    } catch (const std::exception& e) {
        spdlog::error("reload refused, the configuration in force stays: {}", e.what());
    }
}

/// Ice.PrintAdapterReady: "<adapter> ready" on stdout for each object adapter glacier2router
/// (and IceStorm beside it) would have, once it listens: what scripts starting a router wait for.
void print_adapters_ready(const app::app_config& cfg, bool topics) {
    const auto it = cfg.properties.find("Ice.PrintAdapterReady");
    if (it == cfg.properties.end() || it->second.empty() || it->second == "0") return;
    std::vector<std::string> names{"Glacier2.Client"};
    if (!cfg.router.server_endpoints.empty()) names.push_back("Glacier2.Server");
    if (topics) names.insert(names.end(), {cfg.topics.instance_name + ".TopicManager", cfg.topics.instance_name + ".Publish"});
    if (cfg.admin.enabled) names.push_back("Ice.Admin");
    for (const auto& n : names) std::cout << n << " ready\n";
    std::cout << std::flush;
}

/// IceBox.PrintServicesReady=<token>: "<token> ready" on stdout once the topic service listens,
/// as an icebox prints it once its services (here: IceStorm) have started.
void print_services_ready(const app::app_config& cfg, bool topics) {
    const auto it = cfg.properties.find("IceBox.PrintServicesReady");
    if (!topics || it == cfg.properties.end() || it->second.empty()) return;
    std::cout << it->second << " ready" << std::endl;
}

/** The admin object (Ice.Admin.*): Process::shutdown drains as SIGTERM does and
    PropertiesAdmin::setProperties reloads as SIGHUP does, both by raising the signal that the
    main thread awaits, so each has exactly one code path. With Ice.Admin.ServerId and a locator
    (an IceGrid node sets both), its Process proxy is registered with the locator registry once
    the shards run, as an Ice server registers it; a failure is logged, not fatal. */
std::unique_ptr<net::admin_object> start_admin(net::shard_set& shards, const app::app_config& cfg,
                                               std::shared_ptr<admin_properties> props, bool topics) {
    props->reset(cfg.properties);
    net::admin_hooks hooks{
        [] { ::kill(::getpid(), SIGTERM); },
        [props] { return props->current(); },
        [props](std::map<std::string, std::string> changes) {
            props->set(changes);
            ::kill(::getpid(), SIGHUP);
        },
        // In an icebox's place the topic service is its IceStorm service (iceboxadmin shutdown).
        topics ? std::vector<std::string>{"IceStorm"} : std::vector<std::string>{},
    };
    auto admin = std::make_unique<net::admin_object>(shards, cfg.admin, std::move(hooks));
    admin->start();
    if (!cfg.admin.server_id.empty() && cfg.runtime.locator)
        net::register_admin_with_locator(shards, *cfg.runtime.locator, cfg.admin.server_id, admin->proxy());
    return admin;
}

/** Glacier2.Client.AdapterId: the client endpoints as bound (what getClientProxy names) are
    registered with the locator registry, in Glacier2.Client.ReplicaGroupId if set, as
    glacier2router's client object adapter registers them when activated. A failure is logged,
    not fatal. Null when no adapter id is configured (the loader refused one without a locator). */
std::unique_ptr<net::locator_adapter> register_client_adapter(net::shard_set& shards, const app::app_config& cfg,
                                                              const router::session_router& glacier2) {
    if (cfg.router.client_adapter_id.empty() || !cfg.runtime.locator) return nullptr;
    auto adapter = std::make_unique<net::locator_adapter>(
        shards, *cfg.runtime.locator,
        net::adapter_names{cfg.router.client_adapter_id, cfg.router.client_replica_group_id});
    adapter->register_endpoints(glacier2.client_endpoints());
    return adapter;
}

/** Takeover, new side, before anything listens: asks the router at `path` for its listening
    sockets and checks they are exactly the endpoints `cfg` listens on. A mismatch is refused
    (the running router goes on serving) and thrown. @return the sockets to adopt, or null when
    nobody serves `path` (a first start: the caller binds as usual). @throws net::channel_error. */
std::unique_ptr<net::inherited_listeners> request_listeners(const std::string& path, const app::app_config& cfg,
                                                            std::optional<net::takeover_client>& channel) {
    try {
        channel.emplace(path);
    } catch (const net::takeover_unreachable& e) {
        spdlog::warn("{}; starting as usual (binding the endpoints)", e.what());
        return nullptr;
    }
    auto offer = channel->request(version);
    std::vector<net::listener_record> records;
    for (const auto& s : offer.sockets) records.push_back(s.record);
    try {
        net::check_same_listeners(records, app::listener_manifest(cfg));
    } catch (const net::channel_error& e) {
        channel->refuse(std::string("the new router's configuration differs: ") + e.what());
        throw;
    }
    spdlog::info("takeover: {} (pid {}) hands over {} listening socket(s)", offer.program, offer.pid,
                 offer.sockets.size());
    return std::make_unique<net::inherited_listeners>(std::move(offer.sockets));
}

/// Takeover, new side, once every socket accepts here: the running router closes its copies.
/// A router that does not confirm is logged: the sockets are ours either way.
void confirm_takeover(net::takeover_client& channel, std::size_t adopted) {
    try {
        const auto released = channel.accept(static_cast<std::uint32_t>(adopted));
        spdlog::info("takeover: accepting on {} listening socket(s); the old router closed its {} and drains its {} "
                     "session(s)",
                     adopted, released.closed, released.sessions);
    } catch (const std::exception& e) {
        spdlog::warn("takeover: the old router did not confirm ({}); accepting here anyway", e.what());
    }
}

/// How long a takeover waits for the topic service's deliveries in flight to end before its
/// catalog moves; past it, the events still in flight stay behind.
constexpr std::chrono::milliseconds topics_settle{2000};

/// The takeover hooks that move the embedded topic service (docs/takeover.md "The topic service moves").
void move_topics_too(net::takeover_hooks& hooks, router::session_router& glacier2, icestorm_bridge::topic_service& topics) {
    using subscribed = router::session_router::subscribed;
    hooks.topics_movable = [&glacier2] {
        glacier2.topics_leave(true);  // subscribed sessions move; their events are relayed until the service follows
        return true;
    };
    hooks.hold_topics = [&glacier2, &topics] {
        // Subscribed sessions that stay (over TLS, or not at a message boundary in time) get
        // their events from the new router through a loopback endpoint of this one.
        std::optional<protocol::endpoint> stay;
        if (const auto staying = glacier2.subscribed_sessions(subscribed::all); staying > 0) {
            try {
                stay = glacier2.open_stay_endpoint();
                spdlog::info("takeover: {} subscribed session(s) stay here; the new router delivers their events "
                             "through {}",
                             staying, protocol::endpoint_to_string(*stay));
            } catch (const std::exception& e) {
                spdlog::error("takeover: no endpoint for the events of the {} subscribed session(s) that stay here ({}); "
                              "their subscriptions end",
                              staying, e.what());
            }
        }
        std::size_t unsettled = 0;
        auto parts = topics.hold_for_takeover(topics_settle, net::takeover_topics_part_max, unsettled, stay);
        if (unsettled > 0)
            spdlog::warn("takeover: {} topic event(s) still queued or unanswered after {} ms; they stay behind",
                         unsettled, topics_settle.count());
        return parts;
    };
    hooks.topics_gone = [&glacier2, &topics](bool gone) {
        if (gone) {
            // The new router opens the database once the catalog is there (docs/takeover.md "The topic database").
            if (topics.release_store()) spdlog::info("takeover: the topic database is closed here; the new router opens it");
            return;
        }
        glacier2.topics_leave(false);
        topics.hold_intake(false);
    };
    hooks.subscribed_sessions = [&glacier2] { return glacier2.subscribed_sessions(subscribed::movable); };
    hooks.take_topic_connections = [&topics](bool last, std::size_t& left) { return topics.take_connections(last, left); };
}

/// The takeover socket, when configured; a failure is fatal at a first start (`fatal`), only
/// logged after a takeover (the sockets are ours then: exiting would drop them). With `topics`,
/// the topic service moves too.
std::unique_ptr<net::takeover_server> serve_takeovers(const app::app_config& cfg, net::shard_set& shards,
                                                      router::session_router& glacier2,
                                                      icestorm_bridge::topic_service* topics, bool fatal) {
    if (cfg.runtime.takeover.socket.empty()) return nullptr;
    net::takeover_hooks hooks{
        [&shards] { return shards.share_listeners(); },
        [&shards] { return shards.release_listeners(); },
        [&glacier2] { return static_cast<std::uint32_t>(glacier2.sessions_open()); },
        // The main thread drains; a signal wakes it as a SIGTERM would.
        [] { ::kill(::getpid(), SIGTERM); },
        // Phase 2a: sessions at a message boundary move (docs/takeover.md "Moving sessions").
        [&glacier2](std::size_t max) { return glacier2.take_movable(max); },
        [&glacier2](const net::takeover_session& s) { glacier2.moved_away(s.category); },
        [&glacier2](net::takeover_session s, net::unique_fd fd) {
            if (const auto why = glacier2.adopt_session(s, std::move(fd), false); !why.empty()) {
                spdlog::error("takeover: session of '{}' refused by the new router could not be served here again "
                              "either ({}): its client reconnects",
                              s.user_id, why);
                glacier2.moved_away(s.category);
            }
        },
        std::chrono::milliseconds(cfg.runtime.takeover.drain_timeout_ms),
        {}, {}, {}, {}, {},  // the topic service's hooks: move_topics_too
    };
    if (topics) move_topics_too(hooks, glacier2, *topics);
    try {
        auto server = std::make_unique<net::takeover_server>(cfg.runtime.takeover.socket, version, std::move(hooks));
        server->start();
        return server;
    } catch (const std::exception& e) {
        if (fatal) throw;
        spdlog::error("no takeover socket: {}", e.what());
        return nullptr;
    }
}

/** After a takeover (old side): serves the sessions until they end (and the moves, the topic service
    last, are over) or the takeover deadline, a
    SIGTERM or SIGINT cutting it short, then drains as SIGTERM does (close-connection messages).
    The client adapter stays registered: the new router serves the same endpoints. */
void drain_after_takeover(const app::app_config& cfg, net::shard_set& shards, router::session_router& glacier2,
                          const net::takeover_server& takeovers) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto deadline = std::chrono::milliseconds(cfg.runtime.takeover.drain_timeout_ms);
    const auto at_handover = glacier2.sessions_open();
    spdlog::info("takeover: serving {} session(s) until they end, for at most {} ms", at_handover, deadline.count());
    // The moves too: the topic service leaves once its sessions have, and the drain below would
    // close its connections before they move.
    while ((glacier2.sessions_open() > 0 || takeovers.moving()) && clock::now() - start < deadline) {
        if (const int sig = net::wait_for_stop_signal_for(std::chrono::milliseconds(100)); sig == SIGTERM || sig == SIGINT) {
            spdlog::info("signal {}: closing the remaining sessions now", sig);
            break;
        }
    }
    const auto left = glacier2.sessions_open();
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start).count();
    if (left == 0)
        spdlog::info("takeover: drained: all {} session(s) ended on their own or moved to the new router within {} ms",
                     at_handover, waited);
    else
        spdlog::info("takeover: drained: {} of {} session(s) ended on their own; closing the other {} gracefully "
                     "after {} ms",
                     at_handover - std::min(at_handover, left), at_handover, left, waited);
    if (const auto busy = shards.drain(std::chrono::milliseconds(cfg.runtime.drain_timeout_ms)); busy > 0)
        spdlog::warn("drain deadline passed with {} request(s) still in flight; closing anyway", busy);
    spdlog::info("takeover: relayed {} back-end request(s) for moved sessions to the new router",
                 glacier2.callbacks_relayed());
}

/// How long an orderly shutdown waits for the registry to withdraw the client adapter: short,
/// since the registry may be what is gone, and clients skip a dead endpoint anyway.
constexpr std::chrono::milliseconds withdraw_bound{2000};

}  // namespace

int main(int argc, char** argv) {
    int exit_code = 0;
    auto cl = parse_args(argc, argv, exit_code);
    if (!cl) return exit_code;
    app::app_config cfg;
    try {
        cfg = load(*cl);
    } catch (const std::exception& e) {
        std::cerr << "moraine-router: " << e.what() << "\n";
        return 1;
    }
    apply_log_level(*cl, cfg);
    for (const auto& w : cfg.warnings) spdlog::warn("{}", w);  // each names its file and line

    // Block the stop signals in every thread; the main thread waits for them below.
    net::block_stop_signals();

    // --takeover: the running router's listening sockets, asked for before anything is bound.
    std::optional<net::takeover_client> channel;
    std::unique_ptr<net::inherited_listeners> inherited;
    if (cl->vm.count("takeover")) {
        try {
            inherited = request_listeners(cl->vm["takeover"].as<std::string>(), cfg, channel);
        } catch (const std::exception& e) {
            std::cerr << "moraine-router: takeover refused, the running router goes on serving: " << e.what() << "\n";
            return 1;
        }
    }
    const bool taking_over = inherited != nullptr;
    const std::size_t adopting = taking_over ? inherited->size() : 0;

    std::unique_ptr<net::shard_set> shards;
    std::unique_ptr<router::session_router> glacier2;
    std::unique_ptr<icestorm_bridge::topic_service> topics;
    std::unique_ptr<net::metrics_server> metrics;
    std::unique_ptr<net::admin_object> admin;
    std::unique_ptr<net::locator_adapter> client_adapter;
    std::unique_ptr<net::takeover_server> takeovers;
    try {
        shards = std::make_unique<net::shard_set>(std::make_shared<const net::runtime_config>(cfg.runtime));
        if (inherited) shards->adopt(std::move(inherited));
        glacier2 = std::make_unique<router::session_router>(*shards, std::make_shared<const router::config>(cfg.router));
        glacier2->start();  // before the topic service: it asks the router for its bound server endpoints
        if (cfg.topics.enabled)
            topics = std::make_unique<icestorm_bridge::topic_service>(
                *shards, cfg.topics, glacier2.get(),
                taking_over ? icestorm_bridge::store_opening::when_released : icestorm_bridge::store_opening::now);
        if (cfg.runtime.metrics.enabled) metrics = std::make_unique<net::metrics_server>(*shards, cfg.runtime.metrics);
        if (cfg.admin.enabled) admin = start_admin(*shards, cfg, cl->admin, topics != nullptr);
        if (const auto left = shards->inherited_left(); !left.empty())
            throw std::runtime_error("no service took over " + net::describe(left.front().id));
        if (!taking_over) takeovers = serve_takeovers(cfg, *shards, *glacier2, topics.get(), true);
        // Until the old router says whether its topic service comes: no publish is read here before its catalog.
        if (taking_over && topics) topics->hold_intake(true);
        shards->start();
        client_adapter = register_client_adapter(*shards, cfg, *glacier2);
    } catch (const std::exception& e) {
        if (taking_over) channel->refuse(std::string("the new router cannot start: ") + e.what());
        std::cerr << "moraine-router: " << (taking_over ? "takeover refused, the running router goes on serving: " : "")
                  << "cannot start: " << e.what() << "\n";
        return 1;
    }
    std::unique_ptr<app::session_intake> intake;
    if (taking_over) {
        confirm_takeover(*channel, adopting);
        try {
            // The old router offers sessions for at most its drain deadline (the same key here).
            intake = std::make_unique<app::session_intake>(
                std::move(*channel), *glacier2, topics.get(),
                std::chrono::milliseconds(cfg.runtime.takeover.drain_timeout_ms) + std::chrono::seconds(10));
        } catch (const std::exception& e) {
            spdlog::warn("takeover: sessions are not taken over ({}); the old router drains them", e.what());
            if (topics) topics->hold_intake(false);
        }
        channel.reset();
        takeovers = serve_takeovers(cfg, *shards, *glacier2, topics.get(), false);  // the path is free now
    }
    print_adapters_ready(cfg, topics != nullptr);
    print_services_ready(cfg, topics != nullptr);
    spdlog::info("{} ready: {} shard(s), client endpoints {}, server endpoints {}", version, shards->size(),
                 endpoints_text(cfg.router.client_endpoints), endpoints_text(cfg.router.server_endpoints));
    if (topics)
        spdlog::info("topic service {}: TopicManager {}, Publish {}", cfg.topics.instance_name,
                     endpoints_text(cfg.topics.topic_manager_endpoints), endpoints_text(cfg.topics.publish_endpoints));

    for (;;) {
        const int sig = net::wait_for_stop_signal();
        const bool handed_over = takeovers && takeovers->handed_over();
        if (sig == SIGHUP && !handed_over) {
            reload(*cl, *shards, *glacier2);
            continue;
        }
        intake.reset();  // no more sessions adopted: this router stops
        if (takeovers && takeovers->handed_over()) {
            // The takeover thread moves sessions meanwhile; stopped once none is left or the deadline passed.
            drain_after_takeover(cfg, *shards, *glacier2, *takeovers);
            takeovers->stop();
            spdlog::info("shutting down");
            shards->stop();
            shards->join();
            return 0;
        }
        if (takeovers) takeovers->stop();  // a takeover under way is refused: this router stops
        // First out of the registry, so that new clients stop being sent here while this drains.
        if (client_adapter) client_adapter->withdraw(withdraw_bound);
        const auto deadline = std::chrono::milliseconds(cfg.runtime.drain_timeout_ms);
        spdlog::info("signal {}: draining (no new connections; requests in flight get up to {} ms)", sig,
                     deadline.count());
        if (const auto left = shards->drain(deadline); left > 0)
            spdlog::warn("drain deadline passed with {} request(s) still in flight; closing anyway", left);
        spdlog::info("shutting down");
        shards->stop();
        shards->join();
        return 0;
    }
}
