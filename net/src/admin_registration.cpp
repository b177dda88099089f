// Registering the admin object's Process proxy with the locator registry (see admin_registration.hpp).
#include <moraine/net/admin_registration.hpp>

#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <spdlog/spdlog.h>

#include <utility>

namespace moraine::net {

protocol::byte_buffer set_process_proxy_params(std::string_view server_id, const protocol::proxy& process) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_string(server_id);
    protocol::write_proxy(os, process);
    os.end_encapsulation(start);
    return os.take();
}

void register_process_proxy(invoke_fn call, const protocol::proxy& locator, std::string server_id,
                            protocol::proxy process, registration_done done) {
    registry_request request{set_process_proxy_operation, set_process_proxy_mode,
                             set_process_proxy_params(server_id, process),
                             [server_id](std::string_view type) -> std::string {
                                 if (type != "::Ice::ServerNotFoundException") return {};
                                 return "the locator registry knows nothing about server `" + server_id +
                                        "' (ServerNotFoundException)";
                             }};
    call_locator_registry(std::move(call), locator, std::move(request), std::move(done));
}

void register_admin_with_locator(shard_set& shards, const protocol::proxy& locator, std::string server_id,
                                 const protocol::proxy& admin) {
    protocol::proxy process = admin;
    process.facet = "Process";
    shards.invoke_on(0, [locator, server_id = std::move(server_id), process = std::move(process)](shard& home) {
        register_process_proxy(bounded_invoker(home), locator, server_id, process,
                               [server_id, process](bool ok, std::string why) {
                                   if (ok)
                                       spdlog::info("registered server `{}' with the locator registry: Process "
                                                    "proxy {}",
                                                    server_id, protocol::proxy_to_string(process));
                                   else
                                       spdlog::error("could not register server `{}' with the locator registry "
                                                     "({}); IceGrid cannot see this server as active nor stop it "
                                                     "through its Process proxy",
                                                     server_id, why);
                               });
    });
}

}  // namespace moraine::net
