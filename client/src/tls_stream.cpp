#include "tls_stream.hpp"

#include <openssl/ssl.h>

#include <array>
#include <utility>
#include <vector>

namespace moraine::client {

namespace {
bool is_ip(const std::string& host) {
    boost::system::error_code ec;
    (void)asio::ip::make_address(host, ec);
    return !ec;
}

std::string where(const router_address& router) { return router.host + ":" + std::to_string(router.port) + ": "; }
}  // namespace

tls_stream::tls_stream(tcp::socket& socket, const tls_context& ctx, const router_address& router)
    : socket(socket), engine(ctx.native_context().native_handle(), false) {
    const std::string& name = ctx.options().server_name.empty() ? router.host : ctx.options().server_name;
    if (!is_ip(name)) ::SSL_set_tlsext_host_name(engine.native(), name.c_str());
}

asio::awaitable<error_info> tls_stream::handshake(const router_address& router) {
    protocol::byte_buffer flight, in(16 * 1024);
    auto step = engine.handshake({}, flight);
    for (;;) {
        if (!flight.empty()) {
            auto [ec, n] = co_await asio::async_write(socket, asio::buffer(flight), nothrow_awaitable);
            if (ec) co_return error_info{ec, ec.message()};
            flight.clear();
        }
        if (step.status == transport::tls_status::ok) co_return error_info{};
        if (step.status != transport::tls_status::want_read)
            co_return make_error(errc::tls_handshake_failed, where(router) + engine.error());
        auto [ec, n] = co_await socket.async_read_some(asio::buffer(in), nothrow_awaitable);
        if (ec == asio::error::eof)
            co_return make_error(errc::tls_handshake_failed, where(router) + "the router closed the connection");
        if (ec) co_return error_info{ec, ec.message()};
        step = engine.handshake(protocol::byte_view(in.data(), n), flight);
        if (step.status != transport::tls_status::ok || step.consumed == n) continue;
        // Records right behind the handshake (the router's validate connection): kept as plaintext.
        protocol::byte_buffer reply;
        engine.read(protocol::byte_view(in.data() + step.consumed, n - step.consumed), reply, transport::thread_plain_buffer(),
                    [this](std::span<std::byte> plain) {
                        early.insert(early.end(), plain.begin(), plain.end());
                        return true;
                    });
        flight.insert(flight.end(), reply.begin(), reply.end());
    }
}

bool tls_stream::seal(std::span<const protocol::byte_buffer> messages) {
    // One SSL_write over the batch: small messages share records (at most 16 KiB each).
    thread_local protocol::byte_buffer staging;
    staging.clear();
    for (const auto& m : messages) staging.insert(staging.end(), m.begin(), m.end());
    const bool ok = seal(staging);
    if (staging.capacity() > 256 * 1024) protocol::byte_buffer().swap(staging);  // give a burst back
    return ok;
}

bool tls_stream::seal(protocol::byte_view plain) {
    out = std::exchange(control, {});
    return plain.empty() || engine.write(plain, out);
}

asio::awaitable<error_info> tls_stream::send(protocol::byte_view plain) {
    if (!seal(plain)) co_return make_error(errc::connection_lost, "TLS error: " + engine.error());
    auto [ec, n] = co_await asio::async_write(socket, asio::buffer(out), nothrow_awaitable);
    written();
    if (ec) co_return refusal_behind(ec);
    co_return error_info{};
}

error_info tls_stream::refusal_behind(const boost::system::error_code& write_error) {
    // TLS 1.3 ends our handshake before the router checks our certificate. A router that
    // refuses it sends an alert and closes, and our first write (the WebSocket upgrade) may
    // meet the reset (glacier2router: ECONNRESET). The alert is still queued on the socket,
    // readable after the reset: read what is there, without waiting, and let the engine say why.
    std::array<std::byte, 4096> buf;
    boost::system::error_code ec;
    socket.non_blocking(true, ec);  // as the read loop sets it: would_block, never a wait
    const std::size_t n = ec ? 0 : socket.read_some(asio::buffer(buf), ec);
    if (!ec && n > 0) {
        protocol::byte_buffer ignored;  // nothing more can be sent
        const auto step = engine.read(protocol::byte_view(buf.data(), n), ignored, transport::thread_plain_buffer(),
                                      [](std::span<std::byte>) { return true; });
        if (step.status == transport::tls_status::failed) return refused();
    }
    return error_info{write_error, write_error.message()};
}

error_info tls_stream::refused() const {
    // As the session's read loop says before validation (session_client::on_tls_bytes).
    return make_error(errc::tls_handshake_failed, "the router refused the connection: " + engine.error());
}

asio::awaitable<error_info> tls_stream::receive(std::span<std::byte> buf, const plain_sink& on_plain) {
    auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf.data(), buf.size()), nothrow_awaitable);
    if (is_eof(ec)) co_return make_error(errc::connection_lost, "the router closed the connection");
    if (ec) co_return error_info{ec, ec.message()};
    const auto step =
        engine.read(protocol::byte_view(buf.data(), n), control, transport::thread_plain_buffer(), on_plain);
    switch (step.status) {
    case transport::tls_status::closed: co_return make_error(errc::connection_lost, "the router closed the connection");
    case transport::tls_status::failed: co_return refused();
    case transport::tls_status::ok:
    case transport::tls_status::want_read: break;
    }
    co_return error_info{};
}

bool is_eof(const boost::system::error_code& ec) noexcept { return ec == asio::error::eof; }

}  // namespace moraine::client
