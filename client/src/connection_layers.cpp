#include "connection_layers.hpp"

#include <moraine/client/asio.hpp>
#include <moraine/client/tls_context.hpp>

#include <openssl/ssl.h>

#include <utility>

namespace moraine::client {

namespace {
bool is_ip(const std::string& host) {
    boost::system::error_code ec;
    (void)asio::ip::make_address(host, ec);
    return !ec;
}

std::optional<transport::tls_engine> engine_for(const router_address& a, const tls_context* tls) {
    if (!a.tls) return std::nullopt;
    std::optional<transport::tls_engine> engine(std::in_place, tls->native_context().native_handle(), false);
    const std::string& name = tls->options().server_name.empty() ? a.host : tls->options().server_name;
    if (!is_ip(name)) ::SSL_set_tlsext_host_name(engine->native(), name.c_str());
    return engine;
}
}  // namespace

connection_layers::connection_layers(const router_address& a, const tls_context* tls)
    : engine(engine_for(a, tls)),
      // No WebSocket size limit: the Ice framing checks each message against max_message_bytes.
      codec(engine ? &*engine : nullptr, a.websocket, transport::ws_role::client, 0) {}

}  // namespace moraine::client
