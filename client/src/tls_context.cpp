#include <moraine/client/tls_context.hpp>

#include <boost/asio/ip/address.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace moraine::client {

namespace {
namespace ssl = boost::asio::ssl;

error_info bad_config(std::string detail) { return make_error(errc::bad_tls_config, std::move(detail)); }

/// Names the file and why it cannot be used: the system's reason if it cannot be opened, else OpenSSL's.
error_info file_error(const char* what, const std::string& path, const boost::system::error_code& ec) {
    if (std::ifstream(path).fail()) return bad_config(std::string(what) + " '" + path + "': " + std::strerror(errno));
    return bad_config(std::string(what) + " '" + path + "': " + ec.message());
}
}  // namespace

tls_context::tls_context(tls_options opts) : opts_(std::move(opts)), ctx_(ssl::context::tls_client) {}

std::shared_ptr<const tls_context> tls_context::create(const tls_options& opts, error_info& err) {
    err = {};
    auto fail = [&err](error_info e) {
        err = std::move(e);
        return nullptr;
    };
    if (opts.cert_file.empty() && !opts.key_file.empty())
        return fail(bad_config("key_file '" + opts.key_file + "' given without cert_file"));
    std::shared_ptr<tls_context> t;
    try {
        t.reset(new tls_context(opts));
    } catch (const boost::system::system_error& e) {
        return fail(bad_config(std::string("cannot make an OpenSSL context: ") + e.what()));
    }
    t->opts_.key_password.clear();
    SSL_CTX* native = t->ctx_.native_handle();
    ::SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    // An idle session then holds no OpenSSL record buffers (thousands of sessions per thread).
    ::SSL_CTX_set_mode(native, SSL_MODE_RELEASE_BUFFERS);
    ::SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);  // the handshake fails on a bad chain

    boost::system::error_code ec;
    if (opts.ca_file.empty()) {
        if (t->ctx_.set_default_verify_paths(ec); ec) return fail(bad_config("default trust store: " + ec.message()));
    } else if (t->ctx_.load_verify_file(opts.ca_file, ec); ec) {
        return fail(file_error("CA file", opts.ca_file, ec));
    }

    if (!opts.cert_file.empty()) {
        if (t->ctx_.use_certificate_chain_file(opts.cert_file, ec); ec)
            return fail(file_error("certificate file", opts.cert_file, ec));
        // Always a callback, so that OpenSSL never prompts on the terminal for a password.
        const std::string& key = opts.key_file.empty() ? opts.cert_file : opts.key_file;
        using purpose = ssl::context::password_purpose;
        t->ctx_.set_password_callback([pw = opts.key_password](std::size_t, purpose) { return pw; }, ec);
        if (!ec) t->ctx_.use_private_key_file(key, ssl::context::pem, ec);
        boost::system::error_code ignored;  // the context keeps no copy of the password
        t->ctx_.set_password_callback([](std::size_t, purpose) { return std::string(); }, ignored);
        if (ec) return fail(file_error("key file", key, ec));
        if (::SSL_CTX_check_private_key(native) != 1)
            return fail(bad_config("key file '" + key + "' does not match certificate '" + opts.cert_file + "'"));
    }

    if (!opts.server_name.empty()) {
        // Copied into each connection's verification parameters by SSL_new.
        X509_VERIFY_PARAM* param = ::SSL_CTX_get0_param(native);
        boost::system::error_code not_ip;
        (void)boost::asio::ip::make_address(opts.server_name, not_ip);
        const int ok = !not_ip ? ::X509_VERIFY_PARAM_set1_ip_asc(param, opts.server_name.c_str())
                               : ::X509_VERIFY_PARAM_set1_host(param, opts.server_name.c_str(), 0);
        if (ok != 1) return fail(bad_config("bad server_name '" + opts.server_name + "'"));
        ::X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    }
    return t;
}

}  // namespace moraine::client
