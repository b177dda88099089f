#include "ws_client_stream.hpp"

#include <moraine/transport/ws_client_upgrade.hpp>
#include <moraine/transport/ws_mask.hpp>
#include <moraine/transport/ws_masked_frame.hpp>

#include <array>
#include <optional>
#include <utility>

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
    if (auto err = co_await send(protocol::as_bytes(upgrade.request()))) co_return err;
    std::optional<error_info> decided;  // set by the answer's end: empty (accepted) or the refusal
    auto on_answer = [&](std::span<std::byte> data) {
        if (decided) {  // frames behind the answer (over TLS, in a later record of the same read)
            early.insert(early.end(), data.begin(), data.end());
            return true;
        }
        const auto r = upgrade.put(data);
        if (r.status == transport::ws_upgrade_status::need_more) return true;
        if (r.status == transport::ws_upgrade_status::refused) {
            decided = error_info{r.ec, r.why};
            return false;
        }
        decided = error_info{};
        early.assign(data.begin() + static_cast<std::ptrdiff_t>(r.consumed), data.end());
        return true;
    };
    // Plaintext that came with the TLS handshake's last flight: none from a router that waits
    // for our request, as IceWS does, but it would be the answer's start.
    if (tls && !tls->early.empty()) {
        auto first = std::exchange(tls->early, {});
        if (!on_answer(first)) co_return *decided;
    }
    std::array<std::byte, handshake_read_bytes> buf;  // in this coroutine's frame, gone after the upgrade
    while (!decided)
        if (auto err = co_await receive(buf, on_answer)) co_return err;
    co_return *decided;
}

asio::awaitable<error_info> ws_client_stream::send(protocol::byte_view bytes) {
    if (tls) co_return co_await tls->send(bytes);
    auto [ec, n] = co_await asio::async_write(socket, asio::buffer(bytes.data(), bytes.size()), nothrow_awaitable);
    if (ec) co_return failed(ec);
    co_return error_info{};
}

asio::awaitable<error_info> ws_client_stream::receive(std::span<std::byte> buf, const tls_stream::plain_sink& on_data) {
    if (tls) co_return co_await tls->receive(buf, on_data);
    auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf.data(), buf.size()), nothrow_awaitable);
    if (ec) co_return failed(ec);
    (void)on_data(buf.first(n));
    co_return error_info{};
}

bool ws_client_stream::encode(std::span<const protocol::byte_buffer> messages) {
    out.clear();
    out.swap(control);  // control frames first, and `control` is empty again
    for (const auto& m : messages)
        transport::append_masked_frame(out, transport::ws_opcode::binary, m, transport::random_mask_key());
    return !tls || tls->seal(out);
}

void ws_client_stream::written(bool queue_empty) noexcept {
    if (queue_empty) protocol::byte_buffer().swap(out);
    else out.clear();
    if (tls) tls->written();
}

}  // namespace moraine::client
