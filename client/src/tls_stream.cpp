#include "tls_stream.hpp"

#include <openssl/ssl.h>

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
    out = std::exchange(control, {});
    const bool ok = staging.empty() || engine.write(staging, out);
    if (staging.capacity() > 256 * 1024) protocol::byte_buffer().swap(staging);  // give a burst back
    return ok;
}

bool is_eof(const boost::system::error_code& ec) noexcept { return ec == asio::error::eof; }

}  // namespace moraine::client
