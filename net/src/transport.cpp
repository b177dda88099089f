#include <moraine/net/transport.hpp>

#include <moraine/net/tls_context.hpp>
#include <moraine/net/ws_stream.hpp>
#include <moraine/transport/tls_engine.hpp>

#include <stdexcept>

namespace moraine::net {

namespace {
asio::ssl::context& tls_context(const tls_contexts& c, bool server) { return server ? c.server() : c.client(); }
}  // namespace

transport_kind kind_of(const protocol::endpoint& ep) noexcept {
    if (ep.is_ssl()) return transport_kind::ssl;
    if (ep.is_ws()) return transport_kind::ws;
    if (ep.is_wss()) return transport_kind::wss;
    return transport_kind::tcp;
}

transport::transport(tcp::socket s, transport_kind kind, std::shared_ptr<const tls_contexts> contexts, bool server)
    : plain_(s.get_executor()), contexts_(std::move(contexts)), server_(server) {
    const bool tls = kind == transport_kind::ssl || kind == transport_kind::wss;
    if (tls && !contexts_) throw std::invalid_argument("a TLS transport needs TLS contexts");
    if (kind == transport_kind::ssl) {
        engine_ = std::make_unique<moraine::transport::tls_engine>(tls_context(*contexts_, server).native_handle(), server);
        plain_ = std::move(s);
    }
    if (kind == transport_kind::wss) {
        tls_ = std::make_unique<tls_stream>(std::move(s), tls_context(*contexts_, server));
        ws_ = std::make_unique<ws_stream>(*tls_);
    }
    if (kind == transport_kind::ws) ws_ = std::make_unique<ws_stream>(std::move(s));
    if (kind == transport_kind::tcp) plain_ = std::move(s);
}

transport::transport(transport&&) noexcept = default;
transport& transport::operator=(transport&&) noexcept = default;
transport::~transport() = default;

SSL* transport::ssl() const noexcept {
    if (engine_) return engine_->native();
    if (tls_) return tls_->native_handle();
    return nullptr;
}

tcp::socket& transport::socket() noexcept {
    if (tls_) return tls_->next_layer();
    if (ws_) return ws_->socket();
    return plain_;
}

}  // namespace moraine::net
