#include <moraine/router/session_shard.hpp>

#include <moraine/net/shard_set.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/session_router.hpp>

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

namespace moraine::router {

namespace {
constexpr std::size_t category_length = 20;
constexpr unsigned printable_first = 33, printable_count = 94;  // '!'..'~', as Glacier2's categories
}  // namespace

session_shard::session_shard(session_router& router, net::shard& io) : router_(router), io_(io) {}

const config& session_shard::cfg() const noexcept { return router_.cfg(); }

std::string session_shard::new_category() {
    // Random and unguessable: knowing a category lets a back end call into that client.
    std::array<unsigned char, category_length * 2> random{};
    if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1)
        throw std::runtime_error("RAND_bytes failed");
    std::string category(category_length, ' ');
    const unsigned n = static_cast<unsigned>(io_.set().size());
    const unsigned index = io_.index();
    // First character: one of those whose (c - 33) % n is this shard's index.
    const unsigned choices = (printable_count - index + n - 1) / n;
    const unsigned pick = ((random[0] << 8) | random[1]) % choices;
    category[0] = static_cast<char>(printable_first + index + pick * n);
    for (std::size_t i = 1; i < category_length; ++i)
        category[i] = static_cast<char>(printable_first + ((random[2 * i] << 8) | random[2 * i + 1]) % printable_count);
    return category;
}

void session_shard::add_session(const std::string& category, client_connection* c) { sessions_[category] = c; }

void session_shard::remove_session(const std::string& category) noexcept { sessions_.erase(category); }

client_connection* session_shard::find_session(std::string_view category) const noexcept {
    auto it = sessions_.find(category);
    return it == sessions_.end() ? nullptr : it->second;
}

void session_shard::start() {
    io_.on_stop([this] { close_clients("router shutting down"); });
    // An ACM timeout of 0 means "never close idle connections", as in Ice.
    if (cfg().acm_timeout_s > 0) net::asio::co_spawn(io_.io(), idle_sweep(), net::report_bug);
}

void session_shard::close_clients(std::string_view why) {
    std::vector<client_connection*> open(clients_.begin(), clients_.end());
    for (auto* c : open) c->close(why);
}

net::asio::awaitable<void> session_shard::idle_sweep() {
    // ACM "close on idle, forceful" with timeout acm_timeout_s, checked every timeout/2: an idle
    // client is dropped between 1x and 1.5x the timeout, as glacier2router does.
    const auto timeout = std::chrono::seconds(cfg().acm_timeout_s);
    const auto period = std::max<std::chrono::milliseconds>(timeout / 2, std::chrono::milliseconds(500));
    net::asio::steady_timer timer(io_.io());
    for (;;) {
        timer.expires_after(period);
        auto [ec] = co_await timer.async_wait(net::nothrow_awaitable);
        if (ec) co_return;
        const auto now = std::chrono::steady_clock::now();
        std::vector<client_connection*> idle;
        for (auto* c : clients_)
            if (now - c->last_activity() >= timeout) idle.push_back(c);
        for (auto* c : idle) c->close("session timeout: idle");
    }
}

}  // namespace moraine::router
