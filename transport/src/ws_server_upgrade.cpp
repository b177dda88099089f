#include <moraine/transport/ws_server_upgrade.hpp>

#include <moraine/transport/ws_accept_key.hpp>
#include <moraine/transport/ws_error.hpp>

#include "upgrade_step.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/rfc7230.hpp>

namespace moraine::transport {

namespace {
namespace beast = boost::beast;
namespace http = beast::http;
using request = http::request<http::empty_body>;

// Sec-WebSocket-Key is base64 of 16 bytes: 24 characters (RFC 6455 §4.1); longer is refused.
constexpr std::size_t max_key_chars = 24;

// An HTTP error answer with the reason as its text body; the connection is closed after it.
std::string error_answer(std::string_view status, std::string_view reason, std::string_view extra = {}) {
    std::string a = "HTTP/1.1 ";
    a.append(status).append("\r\n").append(extra);
    a.append("Content-Length: ").append(std::to_string(reason.size())).append("\r\nConnection: close\r\n\r\n");
    return a.append(reason);
}

ws_upgrade_result bad_upgrade(std::string_view reason) {
    return ws_refusal(ws_errc::bad_upgrade, "WebSocket upgrade refused: " + std::string(reason),
                  error_answer("400 Bad Request", reason));
}

bool has_token(const request& req, http::field f, std::string_view token) {
    const auto it = req.find(f);
    return it != req.end() && http::token_list{it->value()}.exists(token);  // exists() ignores case
}

// The checks of docs/transports.md §1.3 after the protocol one, in the order a reason is given.
ws_upgrade_result decide(const request& req) {
    if (req.version() != 11) return bad_upgrade("unsupported HTTP version");
    if (req.find(http::field::host) == req.end()) return bad_upgrade("missing Host field");
    if (!has_token(req, http::field::connection, "upgrade")) return bad_upgrade("missing Upgrade in the Connection field");
    if (!has_token(req, http::field::upgrade, "websocket")) return bad_upgrade("missing value for Upgrade field");
    const auto key = req.find(http::field::sec_websocket_key);
    if (key == req.end() || key->value().empty()) return bad_upgrade("missing value for WebSocket key");
    if (key->value().size() > max_key_chars) return bad_upgrade("WebSocket key longer than 24 characters");
    const auto version = req.find(http::field::sec_websocket_version);
    if (version == req.end()) return bad_upgrade("missing WebSocket version");
    if (version->value() != "13") {
        const std::string reason = "unsupported WebSocket version '" + std::string(version->value()) + "'";
        return ws_refusal(ws_errc::bad_upgrade, "WebSocket upgrade refused: " + reason,
                      error_answer("426 Upgrade Required", reason, "Sec-WebSocket-Version: 13\r\n"));
    }
    const bool named = req.find(http::field::sec_websocket_protocol) != req.end();
    std::string a = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n";
    if (named) a.append("Sec-WebSocket-Protocol: ").append(ice_ws_protocol).append("\r\n");
    a.append("Sec-WebSocket-Accept: ").append(ws_accept_key(key->value())).append("\r\n\r\n");
    ws_upgrade_result r;
    r.status = ws_upgrade_status::accepted;
    r.answer = std::move(a);
    return r;
}
}  // namespace

ws_upgrade_result ws_server_upgrade::put(protocol::byte_view data) {
    return upgrade_step<http::request_parser<http::empty_body>>(
        head_, data, "bad WebSocket upgrade request: no HTTP head within 8 KiB", "bad WebSocket upgrade request: ",
        [](const request& req) {
            if (req.find(http::field::sec_websocket_protocol) != req.end() &&
                req[http::field::sec_websocket_protocol] != ice_ws_protocol)
                // Closed without an answer, as glacier2router does (docs/transports.md §1.3).
                return ws_refusal(ws_errc::unsupported_protocol, "WebSocket upgrade asks for protocol '" +
                                                                 std::string(req[http::field::sec_websocket_protocol]) +
                                                                 "', not ice.zeroc.com");
            return decide(req);
        });
}

}  // namespace moraine::transport
