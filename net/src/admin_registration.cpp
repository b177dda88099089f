// Registering the admin object's Process proxy with the locator registry (see admin_registration.hpp).
#include <moraine/net/admin_registration.hpp>

#include <moraine/net/asio.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <utility>

namespace moraine::net {

namespace {

/// The type id of a user-exception reply's exception; "" when it is not one or cannot be read.
std::string_view exception_type(const protocol::reply_view* reply) {
    if (!reply || reply->status != protocol::reply_status::user_exception) return {};
    const auto ex = protocol::decode_user_exception(reply->payload);
    return ex ? ex->type_id : std::string_view{};
}

/// Why a reply that is not OK (or no reply) failed, for the log.
std::string failure_text(const protocol::reply_view* reply, std::string_view failure, std::string_view operation) {
    if (!reply) return std::string(operation) + ": " + std::string(failure);
    if (reply->status == protocol::reply_status::user_exception) {
        const auto type = exception_type(reply);
        return std::string(operation) + " raised " + (type.empty() ? std::string("a user exception") : std::string(type));
    }
    return std::string(operation) + " answered with reply status " + std::to_string(static_cast<int>(reply->status));
}

/// The parameters of an operation without any: an empty encoding-1.1 encapsulation.
protocol::byte_buffer no_params() {
    protocol::output_stream os;
    os.write_empty_encapsulation(protocol::encoding_1_1);
    return os.take();
}

}  // namespace

protocol::byte_buffer set_process_proxy_params(std::string_view server_id, const protocol::proxy& process) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_string(server_id);
    protocol::write_proxy(os, process);
    os.end_encapsulation(start);
    return os.take();
}

void register_process_proxy(invoke_fn call, const protocol::proxy& locator, std::string server_id,
                            protocol::proxy process, std::function<void(bool ok, std::string why)> done) {
    auto next = [call, server_id = std::move(server_id), process = std::move(process),
                 done = std::move(done)](const protocol::reply_view* reply, std::string_view failure) {
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
        call(*registry, set_process_proxy_operation, set_process_proxy_mode,
               set_process_proxy_params(server_id, process),
               [done, server_id](const protocol::reply_view* r, std::string_view why) {
                   if (r && r->status == protocol::reply_status::ok) {
                       done(true, {});
                   } else if (exception_type(r) == "::Ice::ServerNotFoundException") {
                       done(false, "the locator registry knows nothing about server `" + server_id +
                                       "' (ServerNotFoundException)");
                   } else {
                       done(false, "LocatorRegistry::" + failure_text(r, why, set_process_proxy_operation));
                   }
               });
    };
    call(locator, get_registry_operation, get_registry_mode, no_params(), std::move(next));
}

void register_admin_with_locator(shard_set& shards, const protocol::proxy& locator, std::string server_id,
                                 const protocol::proxy& admin) {
    protocol::proxy process = admin;
    process.facet = "Process";
    shards.invoke_on(0, [locator, server_id = std::move(server_id), process = std::move(process)](shard& home) {
        // Each call fails after the connect timeout if no answer comes (a late answer is dropped),
        // so a registry that takes the call and never answers leaves a log line, not silence.
        auto bounded = [&home](const protocol::proxy& target, std::string_view operation, std::uint8_t mode,
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
        register_process_proxy(bounded, locator, server_id, process, [server_id, process](bool ok, std::string why) {
            if (ok)
                spdlog::info("registered server `{}' with the locator registry: Process proxy {}", server_id,
                             protocol::proxy_to_string(process));
            else
                spdlog::error("could not register server `{}' with the locator registry ({}); IceGrid cannot "
                              "see this server as active nor stop it through its Process proxy",
                              server_id, why);
        });
    });
}

}  // namespace moraine::net
