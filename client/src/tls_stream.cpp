#include "tls_stream.hpp"

#include <boost/asio/ssl/error.hpp>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace moraine::client {

namespace {
bool is_ip(const std::string& host) {
    boost::system::error_code ec;
    (void)asio::ip::make_address(host, ec);
    return !ec;
}
}  // namespace

tls_stream::tls_stream(tcp::socket& socket, const tls_context& ctx, const router_address& router)
    : stream(socket, ctx.native_context()) {
    const std::string& name = ctx.options().server_name.empty() ? router.host : ctx.options().server_name;
    if (!is_ip(name)) ::SSL_set_tlsext_host_name(stream.native_handle(), name.c_str());
}

error_info handshake_error(tls_stream& t, const router_address& router, const boost::system::error_code& ec) {
    std::string detail = router.host + ":" + std::to_string(router.port) + ": ";
    detail += ec == asio::ssl::error::stream_truncated ? "the router closed the connection" : ec.message();
    const long verdict = ::SSL_get_verify_result(t.stream.native_handle());
    if (verdict != X509_V_OK) detail += std::string(": ") + ::X509_verify_cert_error_string(verdict);
    return make_error(errc::tls_handshake_failed, std::move(detail));
}

bool is_eof(const boost::system::error_code& ec) noexcept {
    return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
}

bool is_tls_error(const boost::system::error_code& ec) noexcept {
    return ec.category() == asio::error::get_ssl_category() || ec == asio::ssl::error::stream_truncated;
}

}  // namespace moraine::client
