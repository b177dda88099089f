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
static_assert(category_length <= category_key::static_capacity, "the session table keeps categories inline");
constexpr unsigned printable_first = 33, printable_count = 94;  // '!'..'~', as Glacier2's categories

constexpr net::metric_family sessions{"moraine_sessions", "gauge", "Glacier2 sessions open."};
constexpr net::metric_family clients{"moraine_client_connections", "gauge", "Client connections open, with or without a session."};
constexpr net::metric_family created{"moraine_sessions_created_total", "counter", "Glacier2 sessions created."};
constexpr net::metric_family destroyed{"moraine_sessions_destroyed_total", "counter", "Glacier2 sessions ended."};
constexpr net::metric_family auth_failures{"moraine_auth_failures_total", "counter",
                                           "createSession calls refused by authentication (PermissionDeniedException)."};
constexpr net::metric_family refused{"moraine_sessions_refused_total", "counter",
                                     "createSession calls refused otherwise (CannotCreateSessionException)."};
constexpr net::metric_family requests{"moraine_requests_forwarded_total", "counter",
                                      "Client requests forwarded to back ends."};
constexpr net::metric_family replies{"moraine_replies_forwarded_total", "counter",
                                     "Back-end replies relayed to clients."};
constexpr net::metric_family callbacks{"moraine_callbacks_forwarded_total", "counter",
                                       "Back-end requests (callbacks) forwarded to clients."};
constexpr net::metric_family overridden{"moraine_requests_overridden_total", "counter",
                                        "Buffered requests replaced by a newer one with the same _ovrd key."};
constexpr net::metric_family callbacks_overridden{"moraine_callbacks_overridden_total", "counter",
                                                  "Buffered callbacks replaced by a newer one with the same _ovrd key."};
constexpr net::metric_family datagram_requests_lost{
    "moraine_datagram_requests_lost_total", "counter",
    "Client requests to forward as datagrams (_fwd=d, D) lost: no udp endpoint, or larger than a datagram."};
constexpr net::metric_family datagram_callbacks{"moraine_datagram_callbacks_total", "counter",
                                                "Callbacks received as datagrams on a udp server endpoint."};
constexpr net::metric_family callbacks_relayed{
    "moraine_takeover_callbacks_relayed_total", "counter",
    "Takeover, old router: back-end requests for sessions that moved, relayed to the new router."};
constexpr net::metric_family callbacks_parked{
    "moraine_takeover_callbacks_parked_total", "counter",
    "Takeover, old router: back-end requests held until the new router answered for their session."};
}  // namespace

session_shard::session_shard(session_router& router, net::shard& io)
    : router_(router), io_(io), cfg_(router.shared_cfg()), passwords_(router.passwords()) {}

void session_shard::reconfigure(std::shared_ptr<const config> cfg,
                                std::shared_ptr<const session::crypt_password_file> passwords) {
    cfg_ = std::move(cfg);
    passwords_ = std::move(passwords);
}

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

void session_shard::add_session(const std::string& category, client_connection* c) {
    sessions_.insert_or_assign(category_key(category), c);
}

void session_shard::remove_session(const std::string& category) noexcept { sessions_.erase(std::string_view(category)); }

client_connection* session_shard::find_session(std::string_view category) const noexcept {
    auto it = sessions_.find(category);
    return it == sessions_.end() ? nullptr : it->second;
}

void session_shard::collect(net::metric_sink& s) const {
    const auto n = [](auto v) { return static_cast<double>(v); };
    s.add(sessions, n(sessions_.size()));
    s.add(clients, n(clients_.size()));
    s.add(created, n(metrics_.sessions_created));
    s.add(destroyed, n(metrics_.sessions_destroyed));
    s.add(auth_failures, n(metrics_.auth_failures));
    s.add(refused, n(metrics_.sessions_refused));
    s.add(requests, n(metrics_.requests_forwarded));
    s.add(replies, n(metrics_.replies_forwarded));
    s.add(callbacks, n(metrics_.callbacks_forwarded));
    s.add(overridden, n(metrics_.requests_overridden));
    s.add(callbacks_overridden, n(metrics_.callbacks_overridden));
    s.add(datagram_requests_lost, n(metrics_.datagram_requests_lost));
    s.add(datagram_callbacks, n(metrics_.datagram_callbacks));
    s.add(callbacks_relayed, n(metrics_.callbacks_relayed));
    s.add(callbacks_parked, n(metrics_.callbacks_parked));
}

void session_shard::start() {
    io_.add_collector([this](net::metric_sink& s) { collect(s); });
    io_.add_drain(net::drain_hooks{
        [this] { draining_ = true; },
        [this] {
            std::size_t n = 0;
            for (const auto* c : clients_) n += c->in_flight();
            return n;
        },
        [this] {
            for (auto* c : clients_) c->flush_queues();
        }});
    io_.on_stop([this] { close_clients("router shutting down"); });
    // An ACM timeout of 0 means "never close idle connections", as in Ice.
    if (cfg().acm_timeout_s > 0) net::asio::co_spawn(io_.io(), idle_sweep(), net::report_bug);
    if (cfg().heartbeat_interval() > 0) net::asio::co_spawn(io_.io(), heartbeat_sweep(), net::report_bug);
}

void session_shard::close_clients(std::string_view why) {
    std::vector<client_connection*> open(clients_.begin(), clients_.end());
    for (auto* c : open) c->close(net::close_reason::shutdown, why);
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
        for (auto* c : idle) c->close(net::close_reason::idle, "session timeout: idle");
    }
}

net::asio::awaitable<void> session_shard::heartbeat_sweep() {
    // Every half period, each client connection that was sent nothing since the previous sweep
    // gets a heartbeat: no connection goes a whole period without a byte from the router. One
    // timer per shard, not one per connection: idle sessions cost nothing else.
    // HeartbeatAlways: every connection once per period, whatever else it is sent.
    const bool always = cfg().heartbeat_always;
    const auto period = std::chrono::milliseconds(std::max(2, always ? cfg().heartbeat_interval() : cfg().heartbeat_interval() / 2));
    net::asio::steady_timer timer(io_.io());
    for (;;) {
        timer.expires_after(period);
        auto [ec] = co_await timer.async_wait(net::nothrow_awaitable);
        if (ec) co_return;
        std::vector<client_connection*> all(clients_.begin(), clients_.end());  // a failed write may close one
        for (auto* c : all) always ? c->heartbeat() : c->heartbeat_if_idle();
    }
}

}  // namespace moraine::router
