#include <moraine/router/shard.hpp>

#include <moraine/router/backend_pool.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/shard_set.hpp>

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace moraine::router {

namespace {
constexpr std::size_t scratch_bytes = 64 * 1024;
constexpr std::size_t category_length = 20;
constexpr unsigned printable_first = 33, printable_count = 94;  // '!'..'~', as Glacier2's categories
}  // namespace

shard::shard(shard_set& set, unsigned index, std::shared_ptr<const config> cfg)
    : set_(set), index_(index), cfg_(std::move(cfg)), backends_(std::make_unique<backend_pool>(*this)),
      scratch_(scratch_bytes) {}

shard::~shard() = default;

std::string shard::new_category() {
    // Random and unguessable: knowing a category lets a back end call into that client.
    std::array<unsigned char, category_length * 2> random{};
    if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1)
        throw std::runtime_error("RAND_bytes failed");
    std::string category(category_length, ' ');
    const unsigned n = static_cast<unsigned>(set_.size());
    // First character: one of those whose (c - 33) % n is this shard's index.
    const unsigned choices = (printable_count - index_ + n - 1) / n;
    const unsigned pick = ((random[0] << 8) | random[1]) % choices;
    category[0] = static_cast<char>(printable_first + index_ + pick * n);
    for (std::size_t i = 1; i < category_length; ++i)
        category[i] = static_cast<char>(printable_first + ((random[2 * i] << 8) | random[2 * i + 1]) % printable_count);
    return category;
}

void shard::add_session(const std::string& category, client_connection* c) { sessions_[category] = c; }

void shard::remove_session(const std::string& category) noexcept { sessions_.erase(category); }

client_connection* shard::find_session(std::string_view category) const noexcept {
    auto it = sessions_.find(category);
    return it == sessions_.end() ? nullptr : it->second;
}

void shard::start() {
    // An ACM timeout of 0 means "never close idle connections", as in Ice.
    if (cfg_->acm_timeout_s > 0) asio::co_spawn(io_, idle_sweep(), report_bug);
}

void shard::run() { io_.run(); }

void shard::stop() {
    asio::post(io_, [this] {
        backends_->close_all();
        std::vector<client_connection*> open(clients_.begin(), clients_.end());
        for (auto* c : open) c->close("router shutting down");
        work_.reset();
        io_.stop();
    });
}

asio::awaitable<void> shard::idle_sweep() {
    // ACM "close on idle, forceful" with timeout acm_timeout_s, checked every timeout/2: an idle
    // client is dropped between 1x and 1.5x the timeout, as glacier2router does.
    const auto timeout = std::chrono::seconds(cfg_->acm_timeout_s);
    const auto period = std::max<std::chrono::milliseconds>(timeout / 2, std::chrono::milliseconds(500));
    asio::steady_timer timer(io_);
    for (;;) {
        timer.expires_after(period);
        auto [ec] = co_await timer.async_wait(nothrow_awaitable);
        if (ec) co_return;
        const auto now = std::chrono::steady_clock::now();
        std::vector<client_connection*> idle;
        for (auto* c : clients_)
            if (now - c->last_activity() >= timeout) idle.push_back(c);
        for (auto* c : idle) c->close("session timeout: idle");
    }
}

}  // namespace moraine::router
