#pragma once
// A Glacier2 session's state: who, its category, routing table and filters. No sockets.
#include <moraine/protocol/proxy.hpp>
#include <moraine/session/filter_set.hpp>
#include <moraine/session/routing_table.hpp>

#include <memory>
#include <string>

namespace moraine::session {

/// Per-session state, owned by the client connection that created it (one session per
/// connection, Glacier2's model). Shard-local.
struct session {
    std::string user_id;
    /// 20 printable ASCII characters (33..126): the identity category that routes callbacks
    /// to this session (Glacier2::Router::getCategoryForClient).
    std::string category;
    routing_table routes;
    filter_set filters;
    /// The Session* returned by an external Glacier2::SessionManager; null without one, or when
    /// it returned a nil proxy (most sessions: a proxy held inline would cost each of them 160 bytes).
    std::unique_ptr<const protocol::proxy> session_proxy;
    /// Name of this session's Glacier2::SessionControl object; empty without a SessionManager.
    std::string control_name;

    session(std::string user, std::string cat, std::size_t routing_table_max, const filter_config& filters_cfg)
        : user_id(std::move(user)), category(std::move(cat)), routes(routing_table_max),
          filters(filters_cfg, user_id) {}
};

}  // namespace moraine::session
