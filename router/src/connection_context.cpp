#include <moraine/router/connection_context.hpp>

#include <algorithm>
#include <array>

namespace moraine::router {

namespace {

constexpr std::array<std::string_view, 7> reserved_keys{"_con.cipher",     "_con.localAddress", "_con.localPort",
                                                         "_con.peerCert",   "_con.remoteAddress", "_con.remotePort",
                                                         "_con.type"};

}  // namespace

bool is_connection_context_key(std::string_view key) noexcept {
    return std::find(reserved_keys.begin(), reserved_keys.end(), key) != reserved_keys.end();
}

protocol::context make_connection_context(const connection_facts& f) {
    protocol::context ctx;
    if (!f.cipher.empty()) ctx.emplace_back("_con.cipher", f.cipher);
    ctx.emplace_back("_con.localAddress", f.local_address);
    ctx.emplace_back("_con.localPort", std::to_string(f.local_port));
    if (!f.peer_cert.empty()) ctx.emplace_back("_con.peerCert", f.peer_cert);
    ctx.emplace_back("_con.remoteAddress", f.remote_address);
    ctx.emplace_back("_con.remotePort", std::to_string(f.remote_port));
    ctx.emplace_back("_con.type", f.type);
    return ctx;
}

protocol::context session_call_context(const protocol::context_view& client, int add_connection_context,
                                       const protocol::context& con) {
    protocol::context ctx;
    for (const auto& [k, v] : client.entries)
        if (!is_connection_context_key(k)) ctx.emplace_back(k, v);
    if (add_connection_context == 1 || add_connection_context == 2) ctx.insert(ctx.end(), con.begin(), con.end());
    return ctx;
}

}  // namespace moraine::router
