#include <moraine/net/transport.hpp>

#include <moraine/net/tls_context.hpp>

namespace moraine::net {

transport::transport(tcp::socket s, std::shared_ptr<const tls_contexts> contexts, bool server)
    : plain_(s.get_executor()), contexts_(std::move(contexts)), server_(server) {
    auto& context = server ? contexts_->server() : contexts_->client();
    tls_ = std::make_unique<tls_stream>(std::move(s), context);
}

transport::~transport() = default;

}  // namespace moraine::net
