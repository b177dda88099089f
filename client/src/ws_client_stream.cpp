#include "ws_client_stream.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket.hpp>

#include <string>

namespace moraine::client {

namespace websocket = boost::beast::websocket;
namespace http = boost::beast::http;

namespace {
// A large message's buffer is given back once read, so 8,000 idle sessions keep little.
constexpr std::size_t kept_read_capacity = 16 * 1024;
}  // namespace

ws_client_stream::ws_client_stream(tcp::socket& socket) : stream(socket) {
    stream.binary(true);
    stream.auto_fragment(false);  // one message, one frame: Ice 3.7 peers need it
    stream.read_message_max(0);   // the Ice frame parser applies the session's own limit
    stream.set_option(websocket::stream_base::decorator([](websocket::request_type& req) {
        req.erase(http::field::user_agent);
        req.set(http::field::sec_websocket_protocol, "ice.zeroc.com");
    }));
}

asio::awaitable<boost::system::error_code> ws_client_stream::handshake(const router_address& router) {
    auto [ec] = co_await stream.async_handshake(router.host + ":" + std::to_string(router.port), router.resource,
                                                nothrow_awaitable);
    co_return ec;
}

asio::awaitable<std::pair<boost::system::error_code, protocol::byte_view>> ws_client_stream::read() {
    in.consume(in.size());
    if (in.capacity() > kept_read_capacity) in.shrink_to_fit();
    auto [ec, n] = co_await stream.async_read(in, nothrow_awaitable);
    if (!ec && !stream.got_binary()) ec = make_error_code(boost::system::errc::protocol_error);
    if (ec) co_return std::pair{ec, protocol::byte_view{}};
    const auto data = in.cdata();
    co_return std::pair{ec, protocol::byte_view(static_cast<const std::byte*>(data.data()), data.size())};
}

asio::awaitable<boost::system::error_code> ws_client_stream::write(asio::const_buffer message) {
    auto [ec, n] = co_await stream.async_write(message, nothrow_awaitable);
    co_return ec;
}

}  // namespace moraine::client
