#include <moraine/net/shard_set.hpp>

#include <moraine/net/config_error.hpp>
#include <moraine/net/listener.hpp>
#include <moraine/net/tls_context.hpp>

namespace moraine::net {

namespace {

unsigned thread_count(const runtime_config& cfg) {
    if (cfg.threads != 0) return cfg.threads;
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

shard_set::shard_set(std::shared_ptr<const runtime_config> cfg) : cfg_(std::move(cfg)) {
    if (cfg_->tls.configured) tls_ = tls_contexts::create(cfg_->tls);
    const unsigned n = thread_count(*cfg_);
    for (unsigned i = 0; i < n; ++i) shards_.push_back(std::make_unique<shard>(*this, i, cfg_));
}

shard_set::~shard_set() {
    stop();
    join();
    blocking_.join();
}

std::vector<protocol::endpoint> shard_set::listen(std::vector<protocol::endpoint> endpoints,
                                                  const accept_handler& on_accept) {
    for (auto& ep : endpoints) {
        const bool secure = ep.secure();
        if (secure && !tls_)
            throw config_error(cfg_->tls.source, protocol::endpoint_to_string(ep),
                               "an ssl or wss endpoint needs TLS settings");
        ensure_port_free(*shards_.front(), ep);
        for (auto& sh : shards_) {
            auto acceptor = bind_listener(*sh, ep);
            ep.port = acceptor.local_endpoint().port();
            start_accepting(*sh, std::move(acceptor), kind_of(ep), secure ? tls_ : nullptr, on_accept);
        }
    }
    return endpoints;
}

void shard_set::start() {
    for (auto& sh : shards_) threads_.emplace_back([s = sh.get()] { s->run(); });
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
