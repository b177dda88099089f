// Takeover, phase 2a (docs/takeover.md "Moving sessions"): an established Glacier2 session leaves
// this process with its client connection's descriptor, or arrives from the old process.
#include <moraine/net/adopted_connection.hpp>
#include <moraine/net/listener.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/router/callback_relay.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/session_router.hpp>

#include <spdlog/spdlog.h>

#include <future>
#include <stdexcept>

namespace moraine::router {

namespace {

/// A proxy as Ice encoding 1.1 writes it: how the session message carries proxies.
std::vector<std::byte> encode_proxy(const protocol::proxy& p) {
    protocol::output_stream out(protocol::encoding_1_1);
    protocol::write_proxy(out, p);
    const auto bytes = out.take();
    return {bytes.begin(), bytes.end()};
}

/// The inverse of encode_proxy. @throws std::invalid_argument naming `what` on bad bytes.
protocol::proxy decode_proxy(const std::vector<std::byte>& bytes, const char* what) {
    protocol::input_stream in(protocol::byte_view(bytes.data(), bytes.size()), protocol::encoding_1_1);
    auto p = protocol::read_proxy(in);
    if (!in.ok() || in.remaining() != 0) throw std::invalid_argument(std::string(what) + ": not an Ice-encoded proxy");
    return p;
}

}  // namespace

bool client_connection::may_move() const noexcept {
    // A subscribed session moves only once the takeover has decided that the topic service follows
    // it (session_router::topics_leave); its events are relayed meanwhile.
    const bool pinned_by_topics = topic_state_ && !local_.router().topics_leaving();
    return session_ && !creating_session && !stays_ && !pinned_by_topics && !secure();
}

bool client_connection::held_by_queues() const noexcept {
    return queues_hold() && may_move() && !closed();
}

void client_connection::flush_for_move() {
    if (held_by_queues()) flush_queues();
}

std::optional<net::takeover_session> client_connection::move_state() {
    // Buffered mode's queues move only empty (a hold timer without requests carries nothing);
    // flush_for_move empties them first.
    if (!may_move() || queues_hold() || resolving_ > 0 || blocked_on_backend_ || !at_message_boundary()) return std::nullopt;
    if (!calls_.empty()) return std::nullopt;
    net::takeover_session m;
    m.transport = websocket() ? net::session_transport::ws : net::session_transport::tcp;
    m.category = session_->category;
    m.user_id = session_->user_id;
    m.control_name = session_->control_name;
    if (session_->session_proxy) m.session_proxy = encode_proxy(*session_->session_proxy);
    m.connection_context = connection_context();
    m.routes_max = static_cast<std::uint32_t>(session_->routes.max_size());
    for (const auto& p : session_->routes.entries()) m.routes.push_back(encode_proxy(p));
    auto& f = session_->filters;
    m.filter_categories = f.categories();
    m.filter_adapter_ids = f.adapter_ids();
    for (const auto& id : f.identities()) m.filter_identities.push_back(protocol::identity_to_string(id.view()));
    m.idle_ms = static_cast<std::uint32_t>(std::min<std::int64_t>(idle_for().count(), UINT32_MAX));
    return m;  // pending stays empty: at a message boundary nothing is held
}

net::unique_fd client_connection::hand_over() {
    const std::string category = session_ ? session_->category : std::string();
    moving_ = true;
    auto fd = release_for_move("handed over to a new process (takeover)");
    if (!fd) {
        moving_ = false;
        return fd;
    }
    local_.moved().leave(category);
    return fd;
}

std::unique_ptr<session::session> moved_session(const net::takeover_session& m, const config& cfg) {
    auto s = std::make_unique<session::session>(m.user_id, m.category, m.routes_max, cfg.filters);
    s->control_name = m.control_name;
    if (!m.session_proxy.empty())
        s->session_proxy = std::make_unique<const protocol::proxy>(decode_proxy(m.session_proxy, "session proxy"));
    std::vector<protocol::proxy> routes;
    for (const auto& r : m.routes) routes.push_back(decode_proxy(r, "routing table entry"));
    s->routes.add(routes);
    s->filters.categories() = m.filter_categories;
    s->filters.adapter_ids() = m.filter_adapter_ids;
    for (const auto& text : m.filter_identities) {
        auto id = protocol::identity_from_string(text);
        if (!id) throw std::invalid_argument("identity filter '" + text + "' does not parse");
        s->filters.identities().push_back(std::move(*id));
    }
    return s;
}

void client_connection::adopt(std::unique_ptr<session::session> s, const net::takeover_session& m, bool count_session) {
    connection_context_ = m.connection_context;
    // Registered as set_session does, minus "created": the session began in the old process.
    session_ = std::move(s);
    ++session_serial_;
    local_.add_session(session_->category, this);
    if (count_session) local_.router().session_opened();
    else stays_ = true;  // refused by the new process: it stays here for good
    auto parked = local_.moved().come_back(session_->category);
    local_.add_client(this);
    if (local_.cfg().trace.session > 0) traced_address_ = peer_address();
    start_adopted(protocol::byte_view(m.pending.data(), m.pending.size()), std::chrono::milliseconds(m.idle_ms));
    // Callbacks that came for it while it was in transit (refused by the new process), in order.
    release_parked(local_, session_->category, std::move(parked), false);
}

std::vector<std::pair<net::takeover_session, net::unique_fd>> session_shard::take_movable(std::size_t max) {
    // Every client is looked at (those that stay, TLS ones say, must not hide the others); the
    // handovers come after the walk, since each one takes its connection out of clients_.
    // Buffered queues first, apart: a flush may close a connection, which leaves clients_. Oneway
    // requests sent leave a session movable at once; a twoway's reply, or callbacks written to
    // the client, let it move at a later look.
    std::vector<std::shared_ptr<client_connection>> held;
    for (auto* c : clients_)
        if (c->held_by_queues()) held.push_back(c->shared());
    for (auto& c : held) c->flush_for_move();
    std::vector<std::pair<client_connection*, net::takeover_session>> movable;
    for (auto* c : clients_) {
        if (movable.size() >= max) break;
        if (auto state = c->move_state()) movable.emplace_back(c, std::move(*state));
    }
    std::vector<std::pair<net::takeover_session, net::unique_fd>> out;
    for (auto& [c, state] : movable) {
        auto keep = c->shared();  // hand_over closes it: it must outlive the call
        if (auto fd = c->hand_over()) out.emplace_back(std::move(state), std::move(fd));
    }
    return out;
}

std::vector<std::pair<net::takeover_session, net::unique_fd>> session_router::take_movable(std::size_t max) {
    using batch = std::vector<std::pair<net::takeover_session, net::unique_fd>>;
    std::vector<std::future<batch>> answers;
    for (unsigned i = 0; i < shards_.size(); ++i) {
        auto promise = std::make_shared<std::promise<batch>>();
        answers.push_back(promise->get_future());
        shards_.invoke_on(i, [this, promise, max](net::shard& sh) {
            try {
                promise->set_value(local(sh.index()).take_movable(max));
            } catch (...) {
                promise->set_exception(std::current_exception());
            }
        });
    }
    batch all;
    for (auto& a : answers)
        for (auto& s : a.get()) all.push_back(std::move(s));
    return all;
}

void session_router::moved_away(const std::string& category) {
    session_closed();
    shards_.invoke_on(owner_of(category), [this, category](net::shard& sh) {
        auto& owner = local(sh.index());
        release_parked(owner, category, owner.moved().take(category), true);
    });
}

std::size_t session_router::callbacks_relayed() {
    return shards_.sum_on_all([this](net::shard& sh) { return local(sh.index()).metrics().callbacks_relayed; });
}

std::size_t session_router::subscribed_sessions(subscribed which) {
    return shards_.sum_on_all([this, which](net::shard& sh) { return local(sh.index()).subscribed_sessions(which); });
}

protocol::endpoint session_router::open_stay_endpoint() {
    protocol::endpoint ep = *protocol::endpoint_from_string("tcp -h 127.0.0.1 -p 0");
    shards_.call_on(0, [this, &ep](net::shard& sh) {
        auto acceptor = net::bind_listener(sh, ep);
        ep.port = acceptor.local_endpoint().port();
        net::start_accepting(sh, std::move(acceptor), net::transport_kind::tcp, serve_back_ends());
    });
    return ep;
}

bool session_router::session_here(net::shard& sh, std::string_view category) const {
    return locals_[sh.index()]->find_session(category) != nullptr;
}

std::size_t session_shard::subscribed_sessions(subscribed_kind which) const noexcept {
    std::size_t n = 0;
    for (const auto* c : clients_) {
        if (!c->topic_state() || c->closed()) continue;
        if (which == subscribed_kind::movable && !c->may_move()) continue;
        ++n;
    }
    return n;
}

std::string session_router::adopt_session(const net::takeover_session& s, net::unique_fd fd, bool count_session) {
    std::vector<std::pair<net::takeover_session, net::unique_fd>> one;
    one.emplace_back(s, std::move(fd));
    return adopt_sessions(one, count_session).front();
}

std::vector<std::string> session_router::adopt_sessions(std::vector<std::pair<net::takeover_session, net::unique_fd>>& batch,
                                                        bool count_session) {
    std::vector<std::string> why(batch.size());
    // One handler per shard for all of its sessions, in the order they came.
    std::vector<std::vector<std::size_t>> per_shard(shards_.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto& s = batch[i].first;
        if (s.transport != net::session_transport::tcp && s.transport != net::session_transport::ws)
            why[i] = "only tcp and ws sessions can be adopted";
        else if (s.category.empty() || s.category.size() > category_key::static_capacity)
            why[i] = "bad session category";
        else
            per_shard[owner_of(s.category)].push_back(i);
    }
    std::vector<std::future<void>> answers;
    for (unsigned owner = 0; owner < per_shard.size(); ++owner) {
        if (per_shard[owner].empty()) continue;
        auto promise = std::make_shared<std::promise<void>>();
        answers.push_back(promise->get_future());
        // The batch and the reasons outlive the handler: this thread waits for it below.
        shards_.invoke_on(owner, [this, promise, &batch, &why, indexes = std::move(per_shard[owner]),
                                  count_session](net::shard& sh) {
            auto& local_shard = local(sh.index());
            for (const auto i : indexes) {
                auto& [s, fd] = batch[i];
                try {
                    const auto kind = s.transport == net::session_transport::ws ? net::transport_kind::ws : net::transport_kind::tcp;
                    // Everything that can refuse comes before the socket joins this shard's epoll set:
                    // closing it then would leave the entry behind (the old process holds the connection).
                    if (local_shard.find_session(s.category)) throw std::invalid_argument("session category already in use here");
                    auto state = moved_session(s, local_shard.cfg());
                    net::transport t(net::adopt_connected_socket(sh.io(), std::move(fd)), kind, nullptr, true);
                    auto c = std::make_shared<client_connection>(local_shard, std::move(t));
                    c->adopt(std::move(state), s, count_session);
                } catch (const std::exception& e) {
                    why[i] = e.what();
                }
            }
            promise->set_value();
        });
    }
    for (auto& a : answers) a.wait();  // every handler has let go of batch and why before any get() throws
    for (auto& a : answers) a.get();
    return why;
}

}  // namespace moraine::router
