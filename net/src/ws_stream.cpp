#include <moraine/net/ws_stream.hpp>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <array>
#include <variant>

namespace moraine::net {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using boost::system::error_code;

using ws_over_tcp = websocket::stream<tcp::socket>;
using ws_over_tls = websocket::stream<asio::ssl::stream<tcp::socket>&>;

// An upgrade request is a few hundred bytes (Chromium's: about 600); 8 KiB bounds a hostile one.
constexpr std::uint32_t upgrade_head_max = 8 * 1024;
// A close handshake Beast starts (on a bad frame, an oversized or invalid message) waits this
// long for the peer's close frame; the opening handshake is bounded by the caller's deadline.
constexpr auto close_timeout = std::chrono::seconds(5);
// A large message's read buffer is given back once read, so an idle session keeps little.
constexpr std::size_t kept_read_capacity = 16 * 1024;

template <class Ws>
void configure(Ws& ws) {
    ws.binary(true);
    ws.auto_fragment(false);  // one Ice message, one frame: Ice 3.7 receivers need it (§1.4)
    websocket::stream_base::timeout t{};
    t.handshake_timeout = close_timeout;
    t.idle_timeout = websocket::stream_base::none();  // Ice's own heartbeats and ACM cover idleness
    t.keep_alive_pings = false;
    ws.set_option(t);
}

template <class Ws>
asio::awaitable<error_code> accept_on(Ws& ws, beast::flat_buffer& in, std::string& why) {
    http::request_parser<http::empty_body> parser;
    parser.header_limit(upgrade_head_max);
    auto [ec, n] = co_await http::async_read(ws.next_layer(), in, parser, nothrow_awaitable);
    if (ec == http::error::end_of_stream || ec == asio::error::eof) {
        why.clear();  // closed before a request: a port probe or health check, nothing to log
        co_return ec;
    }
    if (ec) {
        why = "bad WebSocket upgrade request: " + ec.message();
        co_return ec;
    }
    in.consume(in.size());  // a client waits for the 101 before its first frame
    const auto& req = parser.get();
    const auto asked = req.find(http::field::sec_websocket_protocol);
    const bool named = asked != req.end();
    if (named && asked->value() != ice_ws_protocol) {
        why = "WebSocket upgrade asks for protocol '" + std::string(asked->value()) + "', not ice.zeroc.com";
        co_return make_error_code(boost::system::errc::protocol_error);
    }
    ws.set_option(websocket::stream_base::decorator([named](websocket::response_type& res) {
        res.set(http::field::server, "Moraine");  // Beast would name itself and its version
        if (named) res.set(http::field::sec_websocket_protocol, ice_ws_protocol);
    }));
    auto [aec] = co_await ws.async_accept(req, nothrow_awaitable);
    if (aec) why = "WebSocket upgrade refused: " + aec.message();
    co_return aec;
}

template <class Ws>
asio::awaitable<error_code> handshake_on(Ws& ws, std::string host, std::string resource) {
    ws.set_option(websocket::stream_base::decorator([](websocket::request_type& req) {
        req.erase(http::field::user_agent);
        req.set(http::field::sec_websocket_protocol, ice_ws_protocol);
    }));
    auto [ec] = co_await ws.async_handshake(host, resource, nothrow_awaitable);
    co_return ec;
}

template <class Ws>
asio::awaitable<std::pair<error_code, protocol::byte_view>> read_on(Ws& ws, beast::flat_buffer& in) {
    in.consume(in.size());
    if (in.capacity() > kept_read_capacity) in.shrink_to_fit();
    auto [ec, n] = co_await ws.async_read(in, nothrow_awaitable);
    if (ec) co_return std::pair{ec, protocol::byte_view{}};
    if (!ws.got_binary()) co_return std::pair{make_error_code(boost::system::errc::protocol_error), protocol::byte_view{}};
    const auto data = in.cdata();
    co_return std::pair{ec, protocol::byte_view(static_cast<const std::byte*>(data.data()), data.size())};
}

template <class Ws>
asio::awaitable<error_code> write_on(Ws& ws, asio::const_buffer head, asio::const_buffer tail) {
    const std::array<asio::const_buffer, 2> message{head, tail};
    auto [ec, n] = co_await ws.async_write(message, nothrow_awaitable);
    co_return ec;
}

}  // namespace

struct ws_stream::impl {
    std::variant<ws_over_tcp, ws_over_tls> ws;
    beast::flat_buffer in;

    template <class Ws, class Next>
    impl(std::in_place_type_t<Ws> kind, Next&& next) : ws(kind, std::forward<Next>(next)) {
        std::visit([](auto& s) { configure(s); }, ws);
    }
};

ws_stream::ws_stream(tcp::socket socket)
    : impl_(std::make_unique<impl>(std::in_place_type<ws_over_tcp>, std::move(socket))) {}

ws_stream::ws_stream(asio::ssl::stream<tcp::socket>& tls)
    : impl_(std::make_unique<impl>(std::in_place_type<ws_over_tls>, tls)) {}

ws_stream::~ws_stream() = default;

tcp::socket& ws_stream::socket() noexcept {
    return std::visit([](auto& s) -> tcp::socket& { return beast::get_lowest_layer(s); }, impl_->ws);
}

// The visitors below are plain functions returning the coroutine, not coroutines themselves:
// a coroutine lambda's captures would die with the lambda before the coroutine runs.
void ws_stream::remember_peer() {
    error_code ec;
    const auto remote = socket().remote_endpoint(ec);
    peer_ = ec ? std::string("an unknown peer") : remote.address().to_string() + ":" + std::to_string(remote.port());
}

asio::awaitable<error_code> ws_stream::accept(std::string& why) {
    remember_peer();
    return std::visit([&](auto& s) { return accept_on(s, impl_->in, why); }, impl_->ws);
}

asio::awaitable<error_code> ws_stream::handshake(const std::string& host, int port, const std::string& resource) {
    remember_peer();
    std::string target = resource.empty() ? "/" : resource;
    std::string host_header = host + ":" + std::to_string(port);
    return std::visit([&](auto& s) { return handshake_on(s, host_header, target); }, impl_->ws);
}

asio::awaitable<std::pair<error_code, protocol::byte_view>> ws_stream::read() {
    return std::visit([&](auto& s) { return read_on(s, impl_->in); }, impl_->ws);
}

asio::awaitable<error_code> ws_stream::write(asio::const_buffer head, asio::const_buffer tail) {
    return std::visit([&](auto& s) { return write_on(s, head, tail); }, impl_->ws);
}

void ws_stream::read_limit(std::size_t bytes) {
    std::visit([bytes](auto& s) { s.read_message_max(bytes); }, impl_->ws);
}

}  // namespace moraine::net
