#include <moraine/net/listener.hpp>

#include <moraine/net/shard.hpp>
#include <moraine/net/socket_buffers.hpp>

#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <string>

namespace moraine::net {

namespace {

tcp::endpoint resolve_local(asio::io_context& io, const protocol::endpoint& ep) {
    return {bind_address(io, ep), static_cast<unsigned short>(ep.port)};
}

/// Hands an accepted socket to the shard: options, then on_accept as the endpoint's transport.
void hand_over(shard& sh, tcp::socket socket, transport_kind kind, const accept_handler& on_accept) {
    const bool secure = kind == transport_kind::ssl || kind == transport_kind::wss;
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    apply_socket_buffers(socket, sh.cfg());
    // The shard's current contexts: a reload's new certificate serves the next handshake.
    on_accept(sh, transport(std::move(socket), kind, secure ? sh.tls() : nullptr, true));
}

/// Takes up to accept_batch more connections already in the accept queue, without waiting.
/// With one asynchronous accept per connection, each takes a loop turn, between the reads and
/// writes of every other connection of the shard: when thousands connect at once (the clients of
/// a router that died), the kernel's accept queue overflows and the dropped SYNs come back only
/// after TCP's 1 s retransmission timeout.
void accept_pending(shard& sh, tcp::acceptor& acceptor, transport_kind kind, const accept_handler& on_accept) {
    for (std::size_t i = 0; i < accept_batch && acceptor.is_open(); ++i) {
        boost::system::error_code ec;
        tcp::socket socket(sh.io());
        acceptor.accept(socket, ec);  // the acceptor is non-blocking: would_block once empty
        if (ec) return;               // empty, or an error the next asynchronous accept reports
        hand_over(sh, std::move(socket), kind, on_accept);
    }
}

asio::awaitable<void> accept_loop(shard& sh, std::shared_ptr<tcp::acceptor> acceptor, transport_kind kind,
                                  accept_handler on_accept) {
    boost::system::error_code ignored;
    acceptor->non_blocking(true, ignored);  // accept_pending's accepts never wait
    for (;;) {
        auto [ec, socket] = co_await acceptor->async_accept(nothrow_awaitable);
        if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
        if (ec) {
            // EMFILE and friends: log, breathe, keep serving the connections we have.
            spdlog::warn("accept failed: {}", ec.message());
            asio::steady_timer pause(sh.executor(), std::chrono::milliseconds(50));
            co_await pause.async_wait(nothrow_awaitable);
            if (!acceptor->is_open()) co_return;
            continue;
        }
        hand_over(sh, std::move(socket), kind, on_accept);
        accept_pending(sh, *acceptor, kind, on_accept);
    }
}

}  // namespace

asio::ip::address bind_address(asio::io_context& io, const protocol::endpoint& ep) {
    if (ep.host.empty() || ep.host == "*" || ep.host == "0.0.0.0") return asio::ip::address_v4::any();
    boost::system::error_code ec;
    auto address = asio::ip::make_address(ep.host, ec);
    if (!ec) return address;
    tcp::resolver resolver(io);  // start-up only: a blocking lookup is fine here
    return resolver.resolve(ep.host, std::to_string(ep.port)).begin()->endpoint().address();
}

namespace {

// A probe without SO_REUSEPORT: if another process (say, a second router) listens there, it
// fails with "address in use", where the shards' SO_REUSEPORT binds would silently share the
// port and split the clients between the two processes.
boost::system::error_code probe_bind(shard& sh, const protocol::endpoint& ep) {
    tcp::acceptor probe(sh.io());
    const auto local = resolve_local(sh.io(), ep);
    probe.open(local.protocol());
    probe.set_option(tcp::acceptor::reuse_address(true));
    boost::system::error_code ec;
    probe.bind(local, ec);
    // Without the source location asio adds: what() then reads "...: Address already in use".
    return {ec.value(), ec.category()};
}

}  // namespace

void ensure_port_free(shard& sh, const protocol::endpoint& ep) {
    if (ep.port == 0) return;  // the kernel picks a free port
    if (auto ec = probe_bind(sh, ep))
        throw boost::system::system_error(ec, "cannot listen on " + protocol::endpoint_to_string(ep));
}

bool port_is_free(shard& sh, const protocol::endpoint& ep) {
    if (ep.port == 0) return true;
    auto ec = probe_bind(sh, ep);
    if (ec == asio::error::address_in_use) return false;
    if (ec) throw boost::system::system_error(ec, "cannot listen on " + protocol::endpoint_to_string(ep));
    return true;
}

int listen_backlog(const runtime_config& cfg) {
    return cfg.tcp_backlog > 0 ? cfg.tcp_backlog : asio::socket_base::max_listen_connections;
}

tcp::acceptor bind_listener(shard& sh, const protocol::endpoint& ep) {
    const auto local = resolve_local(sh.io(), ep);
    tcp::acceptor acceptor(sh.io());
    acceptor.open(local.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.set_option(reuse_port(true));
    acceptor.bind(local);
    acceptor.listen(listen_backlog(sh.cfg()));
    return acceptor;
}

std::shared_ptr<tcp::acceptor> start_accepting(shard& sh, tcp::acceptor acceptor, transport_kind kind,
                                               accept_handler on_accept) {
    // Shared with the shard, which closes it to stop accepting (drain, stop).
    auto shared = std::make_shared<tcp::acceptor>(std::move(acceptor));
    sh.add_acceptor(shared);
    asio::co_spawn(sh.executor(), accept_loop(sh, shared, kind, std::move(on_accept)), report_bug);
    return shared;
}

bool adopted_is_ipv4(const unique_fd& fd, std::string_view what) {
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0)
        throw boost::system::system_error(errno, boost::system::system_category(), "getsockname");
    if (local.ss_family != AF_INET && local.ss_family != AF_INET6)
        throw boost::system::system_error(asio::error::address_family_not_supported, "adopting " + std::string(what));
    return local.ss_family == AF_INET;
}

tcp::acceptor adopt_listener(shard& sh, unique_fd fd) {
    const bool v4 = adopted_is_ipv4(fd, "a listener");
    tcp::acceptor acceptor(sh.io());
    acceptor.assign(v4 ? tcp::v4() : tcp::v6(), fd.get());
    fd.release();  // the acceptor owns it now
    return acceptor;
}

}  // namespace moraine::net
