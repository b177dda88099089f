#include <moraine/client/error.hpp>

namespace moraine::client {

namespace {
class category_impl final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "moraine.client"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
        case errc::connection_lost: return "connection to the router lost";
        case errc::permission_denied: return "permission denied";
        case errc::cannot_create_session: return "cannot create session";
        case errc::object_not_exist: return "object does not exist";
        case errc::facet_not_exist: return "facet does not exist";
        case errc::operation_not_exist: return "operation does not exist";
        case errc::unknown_local: return "unknown local exception";
        case errc::unknown_user: return "unknown user exception";
        case errc::unknown: return "unknown exception";
        case errc::user_exception: return "user exception";
        case errc::timeout: return "timed out";
        case errc::protocol_error: return "protocol error";
        case errc::queue_full: return "write queue full";
        case errc::not_connected: return "no open session";
        case errc::bad_endpoint: return "bad router endpoint";
        case errc::tls_not_configured: return "TLS not configured";
        case errc::bad_tls_config: return "bad TLS configuration";
        case errc::tls_handshake_failed: return "TLS handshake failed";
        case errc::reconnecting: return "reconnecting to the router";
        }
        return "unknown moraine.client error";
    }
};
}  // namespace

const boost::system::error_category& error_category() noexcept {
    static const category_impl instance;
    return instance;
}

std::string error_info::message() const {
    if (!code.failed()) return {};
    return detail.empty() ? code.message() : code.message() + ": " + detail;
}

}  // namespace moraine::client
