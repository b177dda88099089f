#include <moraine/net/shard_set.hpp>

#include <moraine/net/config_error.hpp>
#include <moraine/net/listener.hpp>
#include <moraine/net/tls_context.hpp>
#include <moraine/net/usable_cpus.hpp>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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

listener_id shard_set::next_id(std::string_view adapter, const protocol::endpoint& ep) {
    listener_id id{std::string(adapter), protocol::endpoint_to_string(ep), 0};
    id.ordinal = ordinals_[{id.adapter, id.endpoint}]++;
    return id;
}

std::vector<protocol::endpoint> shard_set::listen(std::string_view adapter, std::vector<protocol::endpoint> endpoints,
                                                  const accept_handler& on_accept, port_sharing sharing) {
    for (auto& ep : endpoints) {
        const bool secure = ep.secure();
        if (secure && !tls_)
            throw config_error(cfg_->tls.source, protocol::endpoint_to_string(ep),
                               "an ssl or wss endpoint needs TLS settings");
        const auto id = next_id(adapter, ep);
        if (auto inherited = take_inherited(id); !inherited.empty()) {
            ep = adopt_streams(id, std::move(inherited), ep, on_accept);
            continue;
        }
        bool joined = false;  // shared, and another process listens there already
        if (sharing == port_sharing::exclusive)
            ensure_port_free(*shards_.front(), ep);
        else
            joined = !port_is_free(*shards_.front(), ep);
        std::vector<std::shared_ptr<tcp::acceptor>> started;
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
            started.push_back(start_accepting(*sh, std::move(acceptor), kind_of(ep), on_accept));
        }
        for (unsigned i = 0; i < started.size(); ++i)
            add_listener({id, protocol::endpoint_to_string(ep), i, socket_kind::stream}, started[i]);
        if (joined)
            spdlog::info("{}: another process listens on this port; sharing it (SO_REUSEPORT): the kernel spreads "
                         "new connections over every process listening there",
                         protocol::endpoint_to_string(ep));
    }
    return endpoints;
}

protocol::endpoint shard_set::adopt_streams(const listener_id& id, std::vector<inherited_socket> sockets,
                                            protocol::endpoint ep, const accept_handler& on_accept) {
    // Every socket received is kept, even beyond this process's shard count: closing one of a
    // SO_REUSEPORT group would reset the connections waiting in its accept queue.
    const std::size_t n = std::max(sockets.size(), shards_.size());
    for (std::size_t i = 0; i < n; ++i) {
        auto& sh = *shards_[i % shards_.size()];
        auto acceptor = i < sockets.size() ? adopt_listener(sh, std::move(sockets[i].fd)) : bind_listener(sh, ep);
        ep.port = acceptor.local_endpoint().port();
        auto started = start_accepting(sh, std::move(acceptor), kind_of(ep), on_accept);
        add_listener({id, protocol::endpoint_to_string(ep), sh.index(), socket_kind::stream}, started);
    }
    spdlog::info("{}: took over {} listening socket(s) on port {} from the running router", describe(id),
                 sockets.size(), ep.port);
    return ep;
}

std::vector<protocol::endpoint> shard_set::listen_datagrams(std::string_view adapter,
                                                           std::vector<protocol::endpoint> endpoints,
                                                           const datagram_handler& on_request) {
    for (auto& ep : endpoints) {
        const auto id = next_id(adapter, ep);
        if (auto inherited = take_inherited(id); !inherited.empty()) {
            ep = adopt_datagrams(id, std::move(inherited), ep, on_request);
            continue;
        }
        ensure_datagram_port_free(*shards_.front(), ep);
        std::vector<std::shared_ptr<asio::ip::udp::socket>> started;
        for (auto& sh : shards_) {
            auto socket = bind_datagram(*sh, ep);
            ep.port = socket.local_endpoint().port();
            started.push_back(start_receiving(*sh, std::move(socket), on_request));
        }
        for (unsigned i = 0; i < started.size(); ++i)
            listening_.push_back({{id, protocol::endpoint_to_string(ep), i, socket_kind::datagram}, {}, started[i]});
    }
    return endpoints;
}

protocol::endpoint shard_set::adopt_datagrams(const listener_id& id, std::vector<inherited_socket> sockets,
                                              protocol::endpoint ep, const datagram_handler& on_request) {
    const std::size_t n = std::max(sockets.size(), shards_.size());
    for (std::size_t i = 0; i < n; ++i) {
        auto& sh = *shards_[i % shards_.size()];
        auto socket = i < sockets.size() ? adopt_datagram(sh, std::move(sockets[i].fd)) : bind_datagram(sh, ep);
        ep.port = socket.local_endpoint().port();
        auto started = start_receiving(sh, std::move(socket), on_request);
        listening_.push_back({{id, protocol::endpoint_to_string(ep), sh.index(), socket_kind::datagram}, {}, started});
    }
    spdlog::info("{}: took over {} udp socket(s) on port {} from the running router", describe(id), sockets.size(),
                 ep.port);
    return ep;
}

std::vector<inherited_socket> shard_set::take_inherited(const listener_id& id) {
    return inherited_ ? inherited_->take(id) : std::vector<inherited_socket>{};
}

std::vector<listener_record> shard_set::inherited_left() const {
    return inherited_ ? inherited_->left() : std::vector<listener_record>{};
}

void shard_set::add_listener(listener_record record, std::weak_ptr<tcp::acceptor> acceptor) {
    listening_.push_back({std::move(record), std::move(acceptor), {}});
}

std::vector<listener_record> shard_set::listeners() const {
    std::vector<listener_record> out;
    for (const auto& l : listening_) out.push_back(l.record);
    return out;
}

namespace {

/// The socket's descriptor if it is open, else -1. Call on the socket's shard.
template <class Socket>
int open_handle(const std::weak_ptr<Socket>& w) {
    auto s = w.lock();
    return s && s->is_open() ? s->native_handle() : -1;
}

/// Closes this process's copy of a socket the new process also holds. release() first takes it
/// out of the shard's epoll set: a plain close would leave it there (the kernel drops an epoll
/// entry only when the last descriptor of the socket closes, and the other process holds one).
template <class Socket>
bool close_copy(const std::weak_ptr<Socket>& w) {
    auto s = w.lock();
    if (!s || !s->is_open()) return false;
    boost::system::error_code ec;
    const int fd = s->release(ec);  // the accept (receive) loop ends with operation_aborted
    if (ec) {
        s->close(ec);
        return true;
    }
    ::close(fd);
    return true;
}

}  // namespace

std::vector<inherited_socket> shard_set::share_listeners() {
    auto shared = std::make_shared<std::vector<std::vector<inherited_socket>>>(shards_.size());
    const std::size_t closed = sum_on_all([this, shared](shard& sh) {
        std::size_t missing = 0;
        for (const auto& l : listening_) {
            if (l.record.shard != sh.index()) continue;
            const int fd = l.record.kind == socket_kind::stream ? open_handle(l.acceptor) : open_handle(l.datagram);
            unique_fd copy(fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 0));
            if (!copy) {
                ++missing;
                continue;
            }
            (*shared)[sh.index()].push_back({l.record, std::move(copy)});
        }
        return missing;
    });
    if (closed > 0)
        throw channel_error(std::to_string(closed) + " listening socket(s) already closed: the router is stopping");
    std::vector<inherited_socket> out;
    for (auto& per_shard : *shared)
        for (auto& s : per_shard) out.push_back(std::move(s));
    return out;
}

std::size_t shard_set::release_listeners() {
    return sum_on_all([this](shard& sh) {
        std::size_t n = 0;
        for (const auto& l : listening_) {
            if (l.record.shard != sh.index()) continue;
            n += l.record.kind == socket_kind::stream ? close_copy(l.acceptor) : close_copy(l.datagram);
        }
        return n;
    });
}

void shard_set::start() {
    for (auto& sh : shards_) threads_.emplace_back([s = sh.get()] { s->run(); });
}

bool shard_set::admit_connection(const asio::ip::address& address, connection_origin origin) {
    std::lock_guard lock(per_address_mutex_);
    auto& n = per_address_[address];
    if (n >= cfg_->connections_per_address && origin == connection_origin::accepted) {
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

void shard_set::call_on(unsigned to, std::function<void(shard&)> fn) {
    std::promise<void> done;
    // `fn` and `done` outlive the handler: this thread waits for it below.
    invoke_on(to, [&fn, &done](shard& sh) {
        try {
            fn(sh);
            done.set_value();
        } catch (...) {
            done.set_exception(std::current_exception());
        }
    });
    done.get_future().get();
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
