// router_connection: the set-up (connect, TLS handshake, WebSocket upgrade), then the loops.
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
}  // namespace

asio::awaitable<error_info> router_connection::open(const router_address& a, const tls_context* tls) {
    error_info ended;  // what a read during the set-up ended the connection on (end() puts it here)
    open_error_ = &ended;
    std::string request;  // the upgrade request (ws, wss)
    error_info err = co_await connect(a);
    if (!err && (a.tls || a.websocket)) {
        std::optional<transport::ws_client_upgrade> upgrade;
        if (a.websocket) request = upgrade.emplace(a.host, a.port, a.resource).request();
        // Before the TLS handshake: records read with its last flight go through the codec.
        layers_ = std::make_unique<connection_layers>(a, tls, std::move(upgrade));
    }
    if (!err && a.tls) err = co_await tls_handshake(a);
    if (!err && a.websocket && !closed_) err = co_await ws_upgrade(request);
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

asio::awaitable<error_info> router_connection::tls_handshake(const router_address& a) {
    // Within the session's connect_timeout: on expiry it closes us, which ends every step here.
    auto& engine = *layers_->engine;
    protocol::byte_buffer flight;
    auto step = engine.handshake({}, flight);
    for (;;) {
        if (!flight.empty()) {
            auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(flight), nothrow_awaitable);
            if (ec) co_return socket_error(ec);
            flight.clear();
        }
        if (step.status == transport::tls_status::ok) co_return error_info{};
        if (step.status != transport::tls_status::want_read)
            co_return make_error(errc::tls_handshake_failed, where(a) + engine.error());
        const auto ec = co_await read_once([&](std::span<std::byte> in) {
            step = engine.handshake(in, flight);
            // Records right behind the last flight (over ssl, the router's validate connection)
            // go through the layers as any read does.
            if (step.status == transport::tls_status::ok && step.consumed < in.size())
                (void)on_wire(in.subspan(step.consumed));
        });
        if (ec == asio::error::eof)
            co_return make_error(errc::tls_handshake_failed, where(a) + "the router closed the connection");
        if (ec) co_return socket_error(ec);
    }
}

asio::awaitable<error_info> router_connection::ws_upgrade(const std::string& request) {
    // The codec decides the 101 (transport::ws_client_upgrade) and reads the frames behind it;
    // a refusal ends the connection with the upgrade's reason, which open() returns.
    if (auto err = co_await write_now(protocol::as_bytes(request))) co_return err;
    while (layers_->codec.upgrading() && !closed_) {
        const auto ec = co_await read_once([this](std::span<std::byte> data) { (void)on_wire(data); });
        if (closed_) break;
        if (!ec) continue;
        if (!layers_->engine) co_return upgrade_failed(ec);
        if (ec == asio::error::eof) co_return make_error(errc::connection_lost, "the router closed the connection");
        co_return socket_error(ec);
    }
    co_return error_info{};
}

asio::awaitable<error_info> router_connection::write_now(protocol::byte_view plain) {
    auto& l = *layers_;
    l.wire.clear();
    l.wire.swap(l.control);  // a key update's answer, made while reading, goes first
    if (!l.codec.seal(plain, l.wire)) co_return make_error(errc::connection_lost, "TLS error: " + l.engine->error());
    auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(l.wire), nothrow_awaitable);
    protocol::byte_buffer().swap(l.wire);
    if (!ec || closed_) co_return error_info{};
    co_return l.engine ? refusal_behind(ec) : upgrade_failed(ec);
}

error_info router_connection::refusal_behind(const boost::system::error_code& write_error) {
    // TLS 1.3 ends our handshake before the router checks our certificate. A router that
    // refuses it sends an alert and closes, and our first write (the WebSocket upgrade) may
    // meet the reset (glacier2router: ECONNRESET). The alert is still queued on the socket,
    // readable after the reset: read what is there, without waiting (the socket is
    // non-blocking), and let the layers say why: a TLS failure ends the connection with it.
    boost::system::error_code ec;
    const std::span<std::byte> buf = read_scratch();
    const std::size_t n = socket_.read_some(asio::buffer(buf.data(), buf.size()), ec);
    if (!ec && n > 0) (void)on_wire(buf.first(n));
    return socket_error(write_error);
}

}  // namespace moraine::client
