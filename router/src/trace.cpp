// The trace categories' log lines (trace.hpp). Only reached when a category is on.
#include <moraine/router/trace.hpp>

#include <moraine/protocol/identity.hpp>

#include <spdlog/spdlog.h>

#include <string>

namespace moraine::router {
namespace {

std::string_view kind_name(const forward_options& how) {
    switch (how.kind) {
    case forward_kind::twoway: return "twoway";
    case forward_kind::oneway: return "oneway";
    case forward_kind::batch_oneway: return "batch oneway";
    case forward_kind::datagram: return "datagram";
    case forward_kind::batch_datagram: return "batch datagram";
    }
    return "?";
}

std::string_view mode_name(std::uint8_t mode) {
    switch (mode) {
    case 0: return "normal";
    case 1: return "nonmutating";
    case 2: return "idempotent";
    default: return "unknown";
    }
}

const char* direction_name(trace_direction d) { return d == trace_direction::client ? "Client" : "Server"; }

}  // namespace

void trace_request(trace_direction d, const protocol::request_view& r, const forward_options& how,
                   std::string_view user) {
    const std::string who = user.empty() ? std::string() : "session '" + std::string(user) + "': ";
    spdlog::info("[Glacier2.{}.Trace.Request] {}routing identity '{}' facet '{}' operation '{}' mode {} ({}) "
                 "request id {} as {}{}{}",
                 direction_name(d), who,
                 protocol::identity_to_string(r.id), r.facet, r.operation, static_cast<int>(r.mode),
                 mode_name(r.mode), r.request_id, kind_name(how), how.secure ? ", secure" : "",
                 how.compress ? ", compressed" : "");
}

void trace_override(trace_direction d, const protocol::request_view& r) {
    spdlog::info("[Glacier2.{}.Trace.Override] overriding queued request: identity '{}' facet '{}' operation '{}'",
                 direction_name(d), protocol::identity_to_string(r.id), r.facet, r.operation);
}

void trace_reject(const protocol::request_view& r, std::string_view user, std::string_view why) {
    spdlog::info("[Glacier2.Client.Trace.Reject] session '{}': rejecting request to identity '{}' facet '{}' "
                 "operation '{}' request id {}: {}",
                 user, protocol::identity_to_string(r.id), r.facet, r.operation, r.request_id, why);
}

void trace_reject_proxy(const protocol::proxy& p, std::string_view user, std::string_view why) {
    spdlog::info("[Glacier2.Client.Trace.Reject] session '{}': rejecting proxy '{}' in addProxies: {}", user,
                 protocol::proxy_to_string(p), why);
}

void trace_routing_table(bool added, const protocol::proxy& p, std::string_view user) {
    spdlog::info("[Glacier2.Trace.RoutingTable] session '{}': {} proxy '{}'", user,
                 added ? "adding" : "evicting (table full)", protocol::proxy_to_string(p));
}

void trace_session(bool created, std::string_view user, std::string_view address, std::string_view category,
                   std::string_view detail) {
    spdlog::info("[Glacier2.Trace.Session] {} session: user '{}' address {} category '{}'{}{}",
                 created ? "created" : "destroyed", user, address, category, detail.empty() ? "" : ": ", detail);
}

}  // namespace moraine::router
