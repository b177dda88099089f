#include <moraine/transport/ws_client_upgrade.hpp>

#include "upgrade_step.hpp"

#include <moraine/transport/ws_accept_key.hpp>
#include <moraine/transport/ws_error.hpp>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/rfc7230.hpp>

namespace moraine::transport {

namespace {
namespace beast = boost::beast;
namespace http = beast::http;
using response = http::response<http::empty_body>;

bool has_token(const response& res, http::field f, std::string_view token) {
    const auto it = res.find(f);
    return it != res.end() && http::token_list{it->value()}.exists(token);  // exists() ignores case
}

ws_upgrade_result check(const response& res, const std::string& key) {
    if (res.version() != 11 || res.result_int() != 101)
        return ws_refusal(ws_errc::upgrade_refused, "WebSocket upgrade refused: the router answered HTTP " +
                                                    std::to_string(res.result_int()) + " " + std::string(res.reason()));
    if (!has_token(res, http::field::upgrade, "websocket") || !has_token(res, http::field::connection, "upgrade"))
        return ws_refusal(ws_errc::upgrade_refused, "WebSocket upgrade refused: the 101 answer lacks Upgrade or Connection");
    if (res[http::field::sec_websocket_accept] != ws_accept_key(key))
        return ws_refusal(ws_errc::bad_accept_key, "WebSocket upgrade failed: wrong Sec-WebSocket-Accept");
    if (res.find(http::field::sec_websocket_extensions) != res.end())
        return ws_refusal(ws_errc::upgrade_refused, "WebSocket upgrade failed: the router chose an extension");
    const auto protocol = res.find(http::field::sec_websocket_protocol);
    if (protocol != res.end() && protocol->value() != ice_ws_protocol)
        return ws_refusal(ws_errc::unsupported_protocol, "WebSocket upgrade failed: the router chose protocol '" +
                                                         std::string(protocol->value()) + "'");
    ws_upgrade_result r;
    r.status = ws_upgrade_status::accepted;
    return r;
}
}  // namespace

ws_client_upgrade::ws_client_upgrade(std::string_view host, std::uint16_t port, std::string_view resource)
    : key_(ws_random_key()) {
    const bool ipv6 = host.find(':') != std::string_view::npos;
    request_.append("GET ").append(resource.empty() ? std::string_view("/") : resource).append(" HTTP/1.1\r\n");
    request_.append("Host: ").append(ipv6 ? "[" : "").append(host).append(ipv6 ? "]" : "");
    request_.append(":").append(std::to_string(port)).append("\r\n");
    request_.append("Upgrade: websocket\r\nConnection: Upgrade\r\n");
    request_.append("Sec-WebSocket-Protocol: ").append(ice_ws_protocol).append("\r\n");
    request_.append("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ").append(key_).append("\r\n\r\n");
}

ws_upgrade_result ws_client_upgrade::put(protocol::byte_view data) {
    return upgrade_step<http::response_parser<http::empty_body>>(
        head_, data, "WebSocket upgrade failed: no HTTP answer within 8 KiB", "WebSocket upgrade failed: bad HTTP answer: ",
        [this](const response& res) { return check(res, key_); });
}

}  // namespace moraine::transport
