// router_connection: the set-up (connect, then the TLS handshake and WebSocket upgrade, whose
// steps are transport::client_handshake's: this file writes, reads and names the failures).
#include "router_connection.hpp"

#include <moraine/transport/ws_client_upgrade.hpp>

#include <optional>
#include <string>
#include <utility>

namespace moraine::client {

namespace {
std::string where(const router_address& a) { return a.host + ":" + std::to_string(a.port) + ": "; }

error_info socket_error(const boost::system::error_code& ec) { return error_info{ec, ec.message()}; }

error_info upgrade_failed(const boost::system::error_code& ec) {
    return error_info{ec, "WebSocket upgrade failed: " + ec.message()};
}

error_info router_closed() { return make_error(errc::connection_lost, "the router closed the connection"); }
}  // namespace

asio::awaitable<error_info> router_connection::open(const router_address& a, const tls_context* tls) {
    error_info ended;  // what a feed during the set-up ended the connection on (end() puts it here)
    open_error_ = &ended;
    error_info err = co_await connect(a);
    if (!err && (a.tls || a.websocket)) {
        layers_ = std::make_unique<connection_layers>(a, tls);
        err = co_await handshake(a);
        // The messages read with the handshakes (the validate connection often comes with the
        // last TLS flight or the 101) are reported now, before the loops read on.
        if (!err && !closed_) (void)on_early();
    }
    open_error_ = nullptr;
    if (ended) co_return ended;
    if (!err && closed_) err = make_error(errc::connection_lost, "closed during the connection's set-up");
    if (!err) start_loops();
    co_return err;
}

asio::awaitable<error_info> router_connection::connect(const router_address& a) {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(a.host, ec);
    if (!ec) {
        auto [cec] = co_await socket_.async_connect(tcp::endpoint(address, a.port), nothrow_awaitable);
        ec = cec;
    } else {
        tcp::resolver resolver(socket_.get_executor());
        auto [rec, results] = co_await resolver.async_resolve(a.host, std::to_string(a.port), nothrow_awaitable);
        ec = rec;
        if (!ec) std::tie(ec, std::ignore) = co_await asio::async_connect(socket_, results, nothrow_awaitable);
    }
    if (ec) co_return socket_error(ec);
    socket_.set_option(tcp::no_delay(true), ec);
    socket_.non_blocking(true, ec);  // reads wait for readability, then read what is there (read_once)
    co_return error_info{};
}

asio::awaitable<error_info> router_connection::handshake(const router_address& a) {
    // Within the session's connect_timeout: on expiry it closes us, which ends every step here.
    std::optional<transport::ws_client_upgrade> upgrade;
    if (a.websocket) upgrade.emplace(a.host, a.port, a.resource);
    auto* engine = layers_->engine ? &*layers_->engine : nullptr;
    transport::client_handshake hs(engine, std::move(upgrade), layers_->codec);
    protocol::byte_buffer flight;
    auto step = hs.start(flight);
    for (;;) {
        if (!flight.empty()) {  // a TLS flight, the upgrade request, or a failure's alert
            auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(flight), nothrow_awaitable);
            flight.clear();
            if (ec) co_return write_failed(a, ec, hs);
        }
        if (step.status == transport::handshake_status::done) co_return error_info{};
        if (step.status == transport::handshake_status::failed) co_return handshake_error(a, step);
        const auto ec = co_await read_once([&](std::span<std::byte> in) { step = hs.on_bytes(in, flight); });
        if (ec == asio::error::eof) step = hs.on_peer_closed();
        else if (ec) co_return read_failed(ec, hs);
    }
}

error_info router_connection::handshake_error(const router_address& a, const transport::handshake_outcome& o) const {
    using f = transport::handshake_failure;
    switch (o.failure) {
    case f::tls_failed:
        // TLS 1.3: the router checks our certificate after our handshake is done, so its
        // refusal (e.g. alert "certificate required") answers our last flight.
        return o.in_tls ? make_error(errc::tls_handshake_failed, where(a) + o.why) : refused();
    case f::tls_closed:
        return router_closed();
    case f::seal_failed:
        return make_error(errc::connection_lost, "TLS error: " + o.why);
    case f::refused:
        return error_info{o.ec, o.why};
    case f::peer_closed:
        if (o.in_tls) return make_error(errc::tls_handshake_failed, where(a) + "the router closed the connection");
        return layers_->engine ? router_closed() : upgrade_failed(asio::error::eof);
    case f::none:
        break;
    }
    return error_info{};
}

error_info router_connection::write_failed(const router_address& a, const boost::system::error_code& ec,
                                           transport::client_handshake& hs) {
    if (hs.in_tls()) return socket_error(ec);
    if (closed_) return error_info{};  // open() says the set-up was cut short
    return layers_->engine ? refusal_behind(a, ec, hs) : upgrade_failed(ec);
}

error_info router_connection::read_failed(const boost::system::error_code& ec,
                                          const transport::client_handshake& hs) const {
    if (hs.in_tls()) return socket_error(ec);
    if (closed_) return error_info{};  // open() says the set-up was cut short
    return layers_->engine ? socket_error(ec) : upgrade_failed(ec);
}

error_info router_connection::refusal_behind(const router_address& a, const boost::system::error_code& write_error,
                                             transport::client_handshake& hs) {
    // TLS 1.3 ends our handshake before the router checks our certificate. A router that
    // refuses it sends an alert and closes, and our next write (the WebSocket upgrade) may
    // meet the reset (glacier2router: ECONNRESET). The alert is still queued on the socket,
    // readable after the reset: read what is there, without waiting (the socket is
    // non-blocking), and let the handshake say why: a TLS failure is the refusal.
    boost::system::error_code ec;
    const std::span<std::byte> buf = read_scratch();
    const std::size_t n = socket_.read_some(asio::buffer(buf.data(), buf.size()), ec);
    if (ec || n == 0) return socket_error(write_error);
    protocol::byte_buffer answers;  // nothing more is sent on this connection
    const auto o = hs.on_bytes(buf.first(n), answers);
    return o.status == transport::handshake_status::failed ? handshake_error(a, o) : socket_error(write_error);
}

}  // namespace moraine::client
