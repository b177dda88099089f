#include <moraine/net/transport.hpp>

#include <moraine/net/tls_context.hpp>
#include <moraine/transport/tls_engine.hpp>

#include <stdexcept>

namespace moraine::net {

transport_kind kind_of(const protocol::endpoint& ep) noexcept {
    if (ep.is_ssl()) return transport_kind::ssl;
    if (ep.is_ws()) return transport_kind::ws;
    if (ep.is_wss()) return transport_kind::wss;
    return transport_kind::tcp;
}

transport::transport(tcp::socket s, transport_kind kind, std::shared_ptr<const tls_contexts> contexts, bool server)
    : socket_(std::move(s)), contexts_(std::move(contexts)), kind_(kind), server_(server) {
    const bool tls = kind == transport_kind::ssl || kind == transport_kind::wss;
    if (tls && !contexts_) throw std::invalid_argument("a TLS transport needs TLS contexts");
    if (tls) {
        auto& context = server ? contexts_->server() : contexts_->client();
        engine_ = std::make_unique<moraine::transport::tls_engine>(context.native_handle(), server);
    }
}

transport::transport(transport&&) noexcept = default;
transport& transport::operator=(transport&&) noexcept = default;
transport::~transport() = default;

SSL* transport::ssl() const noexcept { return engine_ ? engine_->native() : nullptr; }

}  // namespace moraine::net
