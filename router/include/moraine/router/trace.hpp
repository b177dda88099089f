#pragma once
// Glacier2's trace categories (Glacier2.Client.Trace.*, Glacier2.Server.Trace.*,
// Glacier2.Trace.RoutingTable, Glacier2.Trace.Session; YAML `trace:`), written as spdlog info
// lines that start with the category in brackets, e.g. `[Glacier2.Client.Trace.Request] ...`.
// Callers test the level first (`if (cfg.trace.client_request > 0)`), so a category that is off
// costs one comparison on the hot path and nothing is formatted.
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/router/forward_options.hpp>

#include <string_view>

namespace moraine::router {

/// Trace levels, 0 = off (the default for each). Any level above 0 turns a category on; the
/// reject category shows requests to identities not in the routing table from level 2.
struct trace_levels {
    int client_request = 0;   ///< Glacier2.Client.Trace.Request: each request forwarded to a back end
    int client_override = 0;  ///< Glacier2.Client.Trace.Override: a queued client request replaced (`_ovrd`)
    int client_reject = 0;    ///< Glacier2.Client.Trace.Reject: requests and proxies refused by the filters
    int server_request = 0;   ///< Glacier2.Server.Trace.Request: each callback forwarded to a client
    int server_override = 0;  ///< Glacier2.Server.Trace.Override: a queued callback replaced (`_ovrd`)
    int routing_table = 0;    ///< Glacier2.Trace.RoutingTable: proxies added to and evicted from a routing table
    int session = 0;          ///< Glacier2.Trace.Session: sessions created and destroyed
};

/// One trace category as both configuration readers name it: its Glacier2 property, its key
/// under YAML `trace:`, and where its level goes.
struct trace_key {
    std::string_view property;
    std::string_view yaml;
    int trace_levels::*level;
};

/// Every trace category (docs/properties.md); any level above 0 turns it on.
inline constexpr trace_key trace_keys[] = {
    {"Glacier2.Client.Trace.Request", "client_request", &trace_levels::client_request},
    {"Glacier2.Client.Trace.Override", "client_override", &trace_levels::client_override},
    {"Glacier2.Client.Trace.Reject", "client_reject", &trace_levels::client_reject},
    {"Glacier2.Server.Trace.Request", "server_request", &trace_levels::server_request},
    {"Glacier2.Server.Trace.Override", "server_override", &trace_levels::server_override},
    {"Glacier2.Trace.RoutingTable", "routing_table", &trace_levels::routing_table},
    {"Glacier2.Trace.Session", "session", &trace_levels::session},
};

/// The direction a request travels: client -> back end, or back end -> client (a callback).
enum class trace_direction { client, server };

/** Logs a forwarded request under `Glacier2.Client.Trace.Request` or `Glacier2.Server.Trace.Request`:
    identity, facet, operation, mode byte, the request id it arrived with and how it leaves
    (twoway, oneway, batch oneway, ...). `user` names the session (client direction) or is empty. */
void trace_request(trace_direction d, const protocol::request_view& r, const forward_options& how,
                   std::string_view user);

/** Logs under `Glacier2.<Client|Server>.Trace.Override` that a queued request for the same proxy
    with the same `_ovrd` value was replaced by `r` (buffered mode). */
void trace_override(trace_direction d, const protocol::request_view& r);

/** Logs under `Glacier2.Client.Trace.Reject` a request the router refused; `why` says which rule
    (the category / identity / adapter-id filter, no routing-table entry). */
void trace_reject(const protocol::request_view& r, std::string_view user, std::string_view why);

/// Logs under `Glacier2.Client.Trace.Reject` an addProxies proxy refused by the address or size filter.
void trace_reject_proxy(const protocol::proxy& p, std::string_view user, std::string_view why);

/// Logs under `Glacier2.Trace.RoutingTable` a proxy added to (`added`) or evicted from a session's table.
void trace_routing_table(bool added, const protocol::proxy& p, std::string_view user);

/** Logs under `Glacier2.Trace.Session` a session created or destroyed: user id, client address,
    session category; `detail` adds what ended it or how it was authenticated (may be empty). */
void trace_session(bool created, std::string_view user, std::string_view address, std::string_view category,
                   std::string_view detail);

}  // namespace moraine::router
