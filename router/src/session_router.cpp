#include <moraine/router/session_router.hpp>

#include <moraine/router/callback_relay.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/datagram_callback.hpp>
#include <moraine/router/server_connection.hpp>
#include <moraine/net/published_endpoints.hpp>

#include <stdexcept>
#include <string>

namespace moraine::router {

session_router::session_router(net::shard_set& shards, std::shared_ptr<const config> cfg)
    : shards_(shards), cfg_(std::move(cfg)), admission_(cfg_->admission) {
    if (cfg_->auth == auth_mode::crypt_file)
        passwords_ = std::make_shared<const session::crypt_password_file>(
            session::crypt_password_file::load(cfg_->crypt_passwords));
    for (unsigned i = 0; i < shards_.size(); ++i) locals_.push_back(std::make_unique<session_shard>(*this, shards_.at(i)));
    server_endpoints_ = cfg_->server_published_endpoints.empty() ? cfg_->server_endpoints
                                                                 : cfg_->server_published_endpoints;
    relay_target_.endpoints = relay_endpoints(cfg_->server_endpoints);  // start() puts the bound ports in
}

session_router::~session_router() = default;

void session_router::start() {
    const auto sharing = cfg_->client_reuse_port ? net::port_sharing::shared : net::port_sharing::exclusive;
    std::vector<protocol::endpoint> bound_client;
    try {
        bound_client = shards_.listen(
            "Glacier2.Client", cfg_->client_endpoints,
            [this](net::shard& sh, net::transport s) {
                std::make_shared<client_connection>(local(sh.index()), std::move(s))->start();
            },
            sharing);
    } catch (const boost::system::system_error& e) {
        if (sharing == net::port_sharing::shared || e.code() != net::asio::error::address_in_use) throw;
        // Say how to run several routers on one port on purpose.
        throw std::runtime_error(std::string(e.what()) +
                                 " (to share a client port between moraine-router processes, give every one of them "
                                 "Moraine.Client.ReusePort=1 or client.reuse_port: true)");
    }
    client_endpoints_ = net::published_endpoints(bound_client);  // getClientProxy, ReturnClientProxy=1
    // Stream server endpoints accept back ends' connections; udp ones take their datagram
    // callbacks (docs/glacier2.md "udp").
    std::vector<protocol::endpoint> streams, datagrams;
    for (const auto& e : cfg_->server_endpoints) (e.is_udp() ? datagrams : streams).push_back(e);
    auto bound_streams = shards_.listen("Glacier2.Server", streams, serve_back_ends());
    auto bound_datagrams = shards_.listen_datagrams(
        "Glacier2.Server", datagrams, [this](net::shard& sh, const protocol::request_view& r) { route_datagram_callback(*this, sh, r); });
    // As configured, in order: getServerProxy publishes them so, and Ice tries them in that order.
    std::vector<protocol::endpoint> bound;
    auto next_stream = bound_streams.begin();
    auto next_datagram = bound_datagrams.begin();
    for (const auto& e : cfg_->server_endpoints) bound.push_back(e.is_udp() ? *next_datagram++ : *next_stream++);
    // Back ends call clients back through these: a wildcard host becomes this machine's addresses.
    if (cfg_->server_published_endpoints.empty()) server_endpoints_ = net::published_endpoints(bound);
    relay_target_.endpoints = relay_endpoints(bound);
    for (auto& l : locals_) l->start();
}

void session_router::reload(const config& fresh) {
    auto next = std::make_shared<config>(*cfg_);
    next->filters = fresh.filters;
    next->admission = fresh.admission;
    next->trace = fresh.trace;  // connections read the levels per request: effective at once
    std::shared_ptr<const session::crypt_password_file> passwords;
    if (next->auth == auth_mode::crypt_file) {
        // The path as configured now; a bad file throws here, before anything changes.
        next->crypt_passwords = fresh.auth == auth_mode::crypt_file ? fresh.crypt_passwords : cfg_->crypt_passwords;
        passwords = std::make_shared<const session::crypt_password_file>(
            session::crypt_password_file::load(next->crypt_passwords));
    }
    admission_.set_limits(next->admission);
    std::shared_ptr<const config> installed = std::move(next);
    for (unsigned i = 0; i < shards_.size(); ++i)
        shards_.invoke_on(i, [this, installed, passwords](net::shard& sh) { local(sh.index()).reconfigure(installed, passwords); });
}

bool session_router::begin_setup(std::size_t max) noexcept {
    const std::size_t in_progress = setups_.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (sessions_open() + in_progress <= max) return true;
    setups_.fetch_sub(1, std::memory_order_acq_rel);
    return false;
}

unsigned session_router::owner_of(std::string_view category) const noexcept {
    if (category.empty()) return 0;
    const auto c = static_cast<unsigned char>(category[0]);
    if (c < 33 || c > 126) return 0;
    return (c - 33u) % static_cast<unsigned>(shards_.size());
}

bool session_router::hosts(const protocol::proxy& p) const {
    for (const auto& e : p.endpoints)
        for (const auto& s : server_endpoints_)
            if (protocol::same_address(e, s)) return true;
    return false;
}

client_connection* session_router::session_connection(net::shard& sh, std::string_view category,
                                                     session_cache& cache) noexcept {
    if (auto held = cache.connection.lock()) {
        // Only this function fills the cache, and only with client connections.
        auto& c = static_cast<client_connection&>(*held);
        if (!c.closed() && c.session_serial() == cache.serial) return &c;
    }
    auto* c = local(sh.index()).find_session(category);
    if (!c) {
        cache = {};
        return nullptr;
    }
    cache = {c->weak_from_this(), c->session_serial()};
    return c;
}

net::accept_handler session_router::serve_back_ends() {
    return [this](net::shard& sh, net::transport s) {
        std::make_shared<server_connection>(local(sh.index()), std::move(s))->start();
    };
}

void session_router::note_subscription(net::shard& sh, std::string_view category) {
    if (auto* c = local(sh.index()).find_session(category)) c->note_topic_state();
}

session_router::delivery session_router::deliver(net::shard& sh, std::string_view category, session_cache& cache,
                                                 std::size_t queue_limit, frame_source frame, bool twoway,
                                                 reply_done done) {
    auto* c = session_connection(sh, category, cache);
    if (!c) return deliver_to_moved(sh, category, frame, twoway, std::move(done));
    c->note_topic_state();  // its subscriptions live in this process's topic service: it stays
    // Checked before the frame is built: a slow subscriber costs no allocation.
    if (c->queued_bytes() >= queue_limit) return delivery::queue_full;
    const auto r = c->deliver_event(frame(), twoway, std::move(done));
    return r == net::enqueue_result::over_limit ? delivery::over_limit : delivery::queued;
}

session_router::delivery session_router::deliver_to_moved(net::shard& sh, std::string_view category,
                                                          frame_source frame, bool twoway, reply_done done) {
    auto& owner = local(sh.index());
    if (!owner.moved().contains(category)) return delivery::no_session;
    // The session left for a new process: the event follows it there (relayed, or parked while
    // the session is in transit), as a back end's callback would.
    auto f = frame();
    parked_callback p;
    p.topic_event = true;
    p.twoway = twoway;
    p.event_reply = std::move(done);
    p.message = std::move(f.head);
    if (f.tail) p.message.insert(p.message.end(), f.tail->begin(), f.tail->end());
    // Too many parked for it: missed, as for a subscriber whose queue is full.
    return route_to_moved(owner, category, p) ? delivery::queued : delivery::queue_full;
}

}  // namespace moraine::router
