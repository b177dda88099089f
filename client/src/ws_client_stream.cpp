#include "ws_client_stream.hpp"

#include <moraine/transport/ws_client_upgrade.hpp>
#include <moraine/transport/ws_mask.hpp>
#include <moraine/transport/ws_masked_frame.hpp>

#include <array>

namespace moraine::client {

namespace {
// Enough for a 101 answer (glacier2router's is 168 bytes) and the frames sent with it.
constexpr std::size_t handshake_read_bytes = 1024;

error_info failed(const boost::system::error_code& ec) {
    return error_info{ec, "WebSocket upgrade failed: " + ec.message()};
}
}  // namespace

asio::awaitable<error_info> ws_client_stream::handshake(const router_address& router) {
    transport::ws_client_upgrade upgrade(router.host, router.port, router.resource);
    auto [wec, sent] = co_await asio::async_write(socket, asio::buffer(upgrade.request()), nothrow_awaitable);
    if (wec) co_return failed(wec);
    std::array<std::byte, handshake_read_bytes> buf;  // in this coroutine's frame, gone after the upgrade
    while (true) {
        auto [rec, n] = co_await socket.async_read_some(asio::buffer(buf), nothrow_awaitable);
        if (rec) co_return failed(rec);
        const auto r = upgrade.put(protocol::byte_view(buf.data(), n));
        if (r.status == transport::ws_upgrade_status::need_more) continue;
        if (r.status == transport::ws_upgrade_status::refused) co_return error_info{r.ec, r.why};
        early.assign(buf.begin() + static_cast<std::ptrdiff_t>(r.consumed), buf.begin() + static_cast<std::ptrdiff_t>(n));
        co_return error_info{};
    }
}

std::size_t ws_client_stream::frame(std::span<const protocol::byte_buffer> messages) {
    out.clear();
    out.swap(control);  // control frames first, and `control` is empty again
    for (const auto& m : messages)
        transport::append_masked_frame(out, transport::ws_opcode::binary, m, transport::random_mask_key());
    return out.size();
}

void ws_client_stream::written(bool queue_empty) noexcept {
    if (queue_empty) protocol::byte_buffer().swap(out);
    else out.clear();
}

}  // namespace moraine::client
