#include <moraine/net/shard_set.hpp>

#include <moraine/net/config_error.hpp>
#include <moraine/net/listener.hpp>
#include <moraine/net/tls_context.hpp>
#include <moraine/net/usable_cpus.hpp>

#include <spdlog/spdlog.h>

#include <future>

namespace moraine::net {

namespace {

unsigned thread_count(const runtime_config& cfg) {
    if (cfg.threads != 0) return cfg.threads;
    return usable_cpus();  // what taskset, CPUAffinity= and a CPU quota leave, not the machine's count
}

}  // namespace

shard_set::shard_set(std::shared_ptr<const runtime_config> cfg)
    : cfg_(std::move(cfg)), locator_answers_(std::make_shared<locator_cache>(cfg_->locator_cache_timeout_s)) {
    if (cfg_->tls.configured) tls_ = tls_contexts::create(cfg_->tls);
    if (tls_ && cfg_->tls.handshake_threads > 0)
        handshakes_ = std::make_unique<handshake_pool>(static_cast<unsigned>(cfg_->tls.handshake_threads));
    const unsigned n = thread_count(*cfg_);
    budget_ = std::make_unique<memory_budget>(n, cfg_->memory_budget_bytes);
    for (unsigned i = 0; i < n; ++i) {
        shards_.push_back(std::make_unique<shard>(*this, i, cfg_));
        shards_.back()->set_tls(tls_);
        shards_.back()->set_handshakes(handshakes_.get());
        shards_.back()->set_budget(budget_.get());
    }
}

shard_set::~shard_set() {
    stop();
    join();
    blocking_.join();
}

std::vector<protocol::endpoint> shard_set::listen(std::vector<protocol::endpoint> endpoints,
                                                  const accept_handler& on_accept, port_sharing sharing) {
    for (auto& ep : endpoints) {
        const bool secure = ep.secure();
        if (secure && !tls_)
            throw config_error(cfg_->tls.source, protocol::endpoint_to_string(ep),
                               "an ssl or wss endpoint needs TLS settings");
        bool joined = false;  // shared, and another process listens there already
        if (sharing == port_sharing::exclusive)
            ensure_port_free(*shards_.front(), ep);
        else
            joined = !port_is_free(*shards_.front(), ep);
        for (auto& sh : shards_) {
            tcp::acceptor acceptor(sh->io());
            try {
                acceptor = bind_listener(*sh, ep);
            } catch (const boost::system::system_error& e) {
                // Shared: the other listener has no SO_REUSEPORT, or belongs to another user.
                if (sharing != port_sharing::shared || e.code() != asio::error::address_in_use) throw;
                const boost::system::error_code in_use(e.code().value(), e.code().category());  // no source location
                throw boost::system::system_error(in_use, "cannot share " + protocol::endpoint_to_string(ep) +
                                                              " (SO_REUSEPORT): a process of another user, or one "
                                                              "that does not share it, listens there");
            }
            ep.port = acceptor.local_endpoint().port();
            start_accepting(*sh, std::move(acceptor), kind_of(ep), on_accept);
        }
        if (joined)
            spdlog::info("{}: another process listens on this port; sharing it (SO_REUSEPORT): the kernel spreads "
                         "new connections over every process listening there",
                         protocol::endpoint_to_string(ep));
    }
    return endpoints;
}

std::vector<protocol::endpoint> shard_set::listen_datagrams(std::vector<protocol::endpoint> endpoints,
                                                           const datagram_handler& on_request) {
    for (auto& ep : endpoints) {
        ensure_datagram_port_free(*shards_.front(), ep);
        for (auto& sh : shards_) {
            auto socket = bind_datagram(*sh, ep);
            ep.port = socket.local_endpoint().port();
            start_receiving(*sh, std::move(socket), on_request);
        }
    }
    return endpoints;
}

void shard_set::start() {
    for (auto& sh : shards_) threads_.emplace_back([s = sh.get()] { s->run(); });
}

bool shard_set::admit_connection(const asio::ip::address& address) {
    std::lock_guard lock(per_address_mutex_);
    auto& n = per_address_[address];
    if (n >= cfg_->connections_per_address) {
        if (n == 0) per_address_.erase(address);
        return false;
    }
    ++n;
    return true;
}

void shard_set::release_connection(const asio::ip::address& address) noexcept {
    std::lock_guard lock(per_address_mutex_);
    auto it = per_address_.find(address);
    if (it == per_address_.end()) return;
    if (--it->second == 0) per_address_.erase(it);
}

void shard_set::install_tls(std::shared_ptr<const tls_contexts> fresh) {
    tls_ = fresh;
    for (unsigned i = 0; i < shards_.size(); ++i) invoke_on(i, [fresh](shard& sh) { sh.set_tls(fresh); });
}

std::size_t shard_set::sum_on_all(std::function<std::size_t(shard&)> fn) {
    std::vector<std::future<std::size_t>> answers;
    for (unsigned i = 0; i < shards_.size(); ++i) {
        auto done = std::make_shared<std::promise<std::size_t>>();
        answers.push_back(done->get_future());
        invoke_on(i, [fn, done](shard& sh) { done->set_value(fn(sh)); });
    }
    std::size_t total = 0;
    for (auto& a : answers) total += a.get();
    return total;
}

std::size_t shard_set::drain(std::chrono::milliseconds deadline) {
    using clock = std::chrono::steady_clock;
    constexpr auto poll = std::chrono::milliseconds(20);
    const auto until = clock::now() + deadline;
    sum_on_all([](shard& sh) {
        sh.begin_drain();
        return std::size_t{0};
    });
    std::size_t busy = sum_on_all([](shard& sh) { return sh.in_flight(); });
    while (busy > 0 && clock::now() < until) {
        std::this_thread::sleep_for(poll);
        busy = sum_on_all([](shard& sh) { return sh.in_flight(); });
    }
    sum_on_all([](shard& sh) {
        sh.finish_drain();
        return std::size_t{0};
    });
    // The close messages only need a writable socket; a peer that does not read gets 2 s.
    const auto written_by = clock::now() + std::chrono::seconds(2);
    while (sum_on_all([](shard& sh) { return sh.close_messages_pending(); }) > 0 && clock::now() < written_by)
        std::this_thread::sleep_for(poll);
    return busy;
}

void shard_set::stop() {
    for (auto& sh : shards_) sh->stop();
}

void shard_set::join() {
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

}  // namespace moraine::net
