// One call on the locator's registry: getRegistry, then the operation (see locator_registry_call.hpp).
#include <moraine/net/locator_registry_call.hpp>

#include <moraine/net/asio.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <chrono>
#include <memory>
#include <utility>

namespace moraine::net {

namespace {

/// The type id of a user-exception reply's exception; "" when it is not one or cannot be read.
std::string exception_type(const protocol::reply_view* reply) {
    if (!reply || reply->status != protocol::reply_status::user_exception) return {};
    const auto ex = protocol::decode_user_exception(reply->payload);
    return ex ? std::string(ex->type_id) : std::string{};
}

/// Why a reply that is not OK (or no reply) failed, for the log.
std::string failure_text(const protocol::reply_view* reply, std::string_view failure, std::string_view operation) {
    if (!reply) return std::string(operation) + ": " + std::string(failure);
    if (reply->status == protocol::reply_status::user_exception) {
        const auto type = exception_type(reply);
        return std::string(operation) + " raised " + (type.empty() ? std::string("a user exception") : type);
    }
    return std::string(operation) + " answered with reply status " + std::to_string(static_cast<int>(reply->status));
}

/// The parameters of an operation without any: an empty encoding-1.1 encapsulation.
protocol::byte_buffer no_params() {
    protocol::output_stream os;
    os.write_empty_encapsulation(protocol::encoding_1_1);
    return os.take();
}

/// The registry's answer to `request`, reported through `done`.
void report(const registry_request& request, const protocol::reply_view* reply, std::string_view failure,
            const registration_done& done) {
    if (reply && reply->status == protocol::reply_status::ok) {
        done(true, {});
        return;
    }
    const auto type = exception_type(reply);
    std::string explained = !type.empty() && request.explain ? request.explain(type) : std::string{};
    done(false, explained.empty() ? "LocatorRegistry::" + failure_text(reply, failure, request.operation) : explained);
}

}  // namespace

void call_locator_registry(invoke_fn call, const protocol::proxy& locator, registry_request request,
                           registration_done done) {
    auto next = [call, request = std::move(request), done = std::move(done)](const protocol::reply_view* reply,
                                                                               std::string_view failure) mutable {
        if (!reply || reply->status != protocol::reply_status::ok) {
            done(false, "Locator::" + failure_text(reply, failure, get_registry_operation));
            return;
        }
        const auto registry = proxy_result(reply);
        if (!registry || registry->is_nil()) {
            done(false, registry ? "the locator has no registry (getRegistry returned a nil proxy)"
                                 : "the locator's getRegistry returned something that is not a proxy");
            return;
        }
        auto params = std::move(request.params);
        const auto operation = request.operation;
        const auto mode = request.mode;
        call(*registry, operation, mode, std::move(params),
             [request = std::move(request), done = std::move(done)](const protocol::reply_view* r,
                                                                    std::string_view why) {
                 report(request, r, why, done);
             });
    };
    call(locator, get_registry_operation, get_registry_mode, no_params(), std::move(next));
}

invoke_fn bounded_invoker(shard& home) {
    return [&home](const protocol::proxy& target, std::string_view operation, std::uint8_t mode,
                   protocol::byte_buffer params, reply_handler done) {
        auto once = std::make_shared<reply_handler>(std::move(done));
        auto timer = std::make_shared<asio::steady_timer>(home.executor());
        timer->expires_after(std::chrono::milliseconds(home.cfg().backend_connect_timeout_ms));
        timer->async_wait([once](boost::system::error_code ec) {
            if (ec || !*once) return;
            std::exchange(*once, nullptr)(nullptr, "no answer within the connect timeout");
        });
        invoke(home, target, operation, mode, params,
               [once, timer](const protocol::reply_view* reply, std::string_view failure) {
                   timer->cancel();
                   if (*once) std::exchange(*once, nullptr)(reply, failure);
               });
    };
}

}  // namespace moraine::net
