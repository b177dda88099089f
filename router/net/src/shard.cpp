#include <moraine/net/shard.hpp>

#include <moraine/net/backend_pool.hpp>
#include <moraine/net/shard_set.hpp>

namespace moraine::net {

namespace {
constexpr std::size_t scratch_bytes = 64 * 1024;
}  // namespace

shard::shard(shard_set& set, unsigned index, std::shared_ptr<const runtime_config> cfg)
    : set_(set), index_(index), cfg_(std::move(cfg)), backends_(std::make_unique<backend_pool>(*this)),
      scratch_(scratch_bytes) {}

shard::~shard() = default;

void shard::run() { io_.run(); }

void shard::stop() {
    asio::post(io_, [this] {
        for (auto& hook : stop_hooks_) hook();
        backends_->close_all();
        work_.reset();
        io_.stop();
    });
}

}  // namespace moraine::net
