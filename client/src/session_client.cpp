// session_client: the public API over its impl (session_client_impl.hpp).
#include <moraine/client/session_client.hpp>

#include "session_client_impl.hpp"

namespace moraine::client {

std::shared_ptr<session_client> session_client::create(executor_type ex, session_options opts) {
    return std::make_shared<session_client>(make_tag{}, std::move(ex), std::move(opts));
}

session_client::session_client(make_tag, executor_type ex, session_options opts)
    : ex_(std::move(ex)), impl_(std::make_unique<impl>(*this, std::move(opts))) {}

session_client::~session_client() = default;

// Not coroutines themselves: each returns the impl's coroutine, which the caller's `self` keeps alive.
asio::awaitable<error_info> session_client::open_coro(router_endpoints routers, std::optional<credentials> login) {
    return impl_->open(std::move(routers), std::move(login));
}
asio::awaitable<call_result> session_client::invoke_coro(call c) { return impl_->invoke(std::move(c)); }
asio::awaitable<error_info> session_client::oneway_coro(call c) { return impl_->oneway(std::move(c)); }
asio::awaitable<error_info> session_client::destroy_coro() { return impl_->destroy(); }

void session_client::set_bug(error_info& v) { v = make_error(errc::protocol_error, "internal error in the client library"); }
void session_client::set_bug(call_result& v) {
    v = call_result::failure(make_error(errc::protocol_error, "internal error in the client library"));
}

protocol::proxy session_client::add_servant(std::string name, servant s) { return impl_->add_servant(std::move(name), std::move(s)); }
bool session_client::remove_servant(std::string_view name) { return impl_->remove_servant(name); }
protocol::proxy session_client::server_proxy(std::string_view name) const { return impl_->server_proxy(name); }
const std::string& session_client::category() const noexcept { return impl_->category(); }
std::chrono::milliseconds session_client::heartbeat_period() const noexcept { return impl_->heartbeat_period(); }
bool session_client::is_open() const noexcept { return impl_->is_open(); }
bool session_client::is_reconnecting() const noexcept { return impl_->is_reconnecting(); }
void session_client::on_close(std::function<void(const error_info&)> fn) { impl_->on_close(std::move(fn)); }
void session_client::on_session_event(std::function<void(const session_event&)> fn) {
    impl_->on_session_event(std::move(fn));
}
void session_client::close() { impl_->close(error_info{}); }

}  // namespace moraine::client
