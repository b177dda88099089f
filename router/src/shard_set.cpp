#include <moraine/router/shard_set.hpp>

#include <moraine/router/client_connection.hpp>
#include <moraine/router/listener.hpp>
#include <moraine/router/server_connection.hpp>

#include <spdlog/spdlog.h>

namespace moraine::router {

namespace {

unsigned thread_count(const config& cfg) {
    if (cfg.threads != 0) return cfg.threads;
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

shard_set::shard_set(std::shared_ptr<const config> cfg) : cfg_(std::move(cfg)) {
    if (cfg_->auth == auth_mode::crypt_file)
        passwords_ = std::make_unique<session::crypt_password_file>(
            session::crypt_password_file::load(cfg_->crypt_passwords));
    const unsigned n = thread_count(*cfg_);
    for (unsigned i = 0; i < n; ++i) shards_.push_back(std::make_unique<shard>(*this, i, cfg_));
}

shard_set::~shard_set() {
    stop();
    join();
    blocking_.join();
}

unsigned shard_set::owner_of_category(std::string_view category) const noexcept {
    if (category.empty()) return 0;
    const auto c = static_cast<unsigned char>(category[0]);
    if (c < 33 || c > 126) return 0;
    return (c - 33u) % static_cast<unsigned>(shards_.size());
}

std::vector<protocol::endpoint> shard_set::listen(std::vector<protocol::endpoint> endpoints,
                                                  const std::function<void(shard&, tcp::socket)>& on_accept) {
    for (auto& ep : endpoints) {
        ensure_port_free(*shards_.front(), ep);
        for (auto& sh : shards_) {
            auto acceptor = bind_listener(*sh, ep);
            ep.port = acceptor.local_endpoint().port();
            start_accepting(*sh, std::move(acceptor), on_accept);
        }
    }
    return endpoints;
}

void shard_set::start() {
    listen(cfg_->client_endpoints, [](shard& sh, tcp::socket s) {
        std::make_shared<client_connection>(sh, std::move(s))->start();
    });
    listen(cfg_->server_endpoints, [](shard& sh, tcp::socket s) {
        std::make_shared<server_connection>(sh, std::move(s))->start();
    });
    for (auto& sh : shards_) {
        sh->start();
        threads_.emplace_back([s = sh.get()] { s->run(); });
    }
}

void shard_set::stop() {
    for (auto& sh : shards_) sh->stop();
}

void shard_set::join() {
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

}  // namespace moraine::router
