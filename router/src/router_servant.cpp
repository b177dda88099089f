#include <moraine/router/router_servant.hpp>
#include <moraine/router/exception_ids.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/router/session_factory.hpp>
#include <moraine/router/session_router.hpp>
#include <moraine/router/trace.hpp>
#include <moraine/net/shard.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace moraine::router {

using namespace net;

namespace {

constexpr std::string_view router_type_id = "::Glacier2::Router";
constexpr std::array<std::string_view, 3> router_type_ids{"::Glacier2::Router", "::Ice::Object", "::Ice::Router"};
constexpr std::array<std::string_view, 2> finder_type_ids{"::Ice::Object", "::Ice::RouterFinder"};

/// One dispatch: the request, its connection, and how to answer it.
struct call {
    client_connection& c;
    const protocol::request_view& r;
    const config& cfg;

    protocol::encoding_version enc() const noexcept { return r.params.encoding; }
    bool twoway() const noexcept { return r.request_id != 0; }
    void send(protocol::byte_buffer reply) const {
        if (twoway()) c.enqueue(std::move(reply));
    }
    template <class Fn>
    void ok(Fn&& write_results) const {
        if (twoway()) c.enqueue(reply_ok(r.request_id, enc(), std::forward<Fn>(write_results)));
    }
    void ok_void() const { send(reply_void(r.request_id, enc())); }
    /// Params decoded from the request's encapsulation.
    protocol::input_stream params() const { return protocol::input_stream(r.params.payload(), enc()); }
    /// Glacier2 drops a connection that calls a session-only operation without a session.
    bool require_session() const {
        if (c.current_session()) return true;
        c.close(close_reason::policy, std::string("router operation '") + std::string(r.operation) + "' before a session exists");
        return false;
    }
    bool malformed(const protocol::input_stream& in) const {
        if (in.ok()) return false;
        c.close(close_reason::protocol_error, "malformed parameters for '" + std::string(r.operation) + "': " + in.error().message());
        return true;
    }
};

protocol::proxy router_proxy(const config& cfg) {
    protocol::proxy p;
    p.id = {"router", cfg.instance_name};
    p.endpoints = cfg.client_endpoints;
    return p;
}

/// ice_isA / ice_ping / ice_id / ice_ids, for any object served here. @return true if handled.
bool dispatch_object_ops(const call& k, std::span<const std::string_view> ids, std::string_view most_derived) {
    bool malformed = false;
    auto reply = answer_object_op(k.r, ids, most_derived, malformed);
    if (malformed) {
        k.c.close(close_reason::protocol_error, "malformed parameters for '" + std::string(k.r.operation) + "'");
        return true;
    }
    if (!reply) return false;
    k.send(std::move(*reply));
    return true;
}

void get_client_proxy(const call& k) {
    if (!k.require_session()) return;
    k.ok([&](protocol::output_stream& os) {
        // nil: "use the connection you already have to the router" (docs/ice-wire.md §10). With
        // Glacier2.ReturnClientProxy=1, a proxy `dummy` at the client endpoints, as glacier2router
        // returns (observed, interop return_client_proxy).
        if (k.cfg.return_client_proxy) {
            protocol::proxy p;
            p.id = {"dummy", ""};
            p.endpoints = k.c.local().router().client_endpoints();
            protocol::write_proxy(os, p);
        } else {
            os.write_identity({});
        }
        if (k.enc() == protocol::encoding_1_1) {
            os.write_byte(1 << 3);  // optional tag 1, format F1
            os.write_bool(true);    // hasRoutingTable
        }
    });
}

void get_server_proxy(const call& k) {
    if (!k.require_session()) return;
    protocol::proxy p;
    // The router's published server endpoints: bound ports, wildcard hosts expanded.
    const auto& published = k.c.local().router().server_endpoints();
    if (!published.empty()) {
        p.id = {"dummy", k.c.current_session()->category};
        p.endpoints = published;
    }
    k.ok([&](protocol::output_stream& os) { protocol::write_proxy(os, p); });
}

void add_proxies(const call& k) {
    if (!k.require_session()) return;
    auto in = k.params();
    const auto n = in.read_size();
    std::vector<protocol::proxy> proxies;
    for (std::int32_t i = 0; i < n && in.ok(); ++i) proxies.push_back(protocol::read_proxy(in));
    if (k.malformed(in)) return;
    auto& s = *k.c.current_session();
    for (const auto& p : proxies) {
        if (!p.is_nil() && !s.filters.accepts_proxy(p)) {
            if (k.cfg.trace.client_reject > 0) [[unlikely]]
                trace_reject_proxy(p, s.user_id,
                                   "refused by Glacier2.Filter.Address / ProxySizeMax; connection closed");
            // Glacier2 answers a rejected proxy by dropping the connection (vector filter-address-reject).
            k.c.close(close_reason::policy, "addProxies: proxy rejected by Glacier2.Filter.Address / ProxySizeMax");
            return;
        }
    }
    const auto evicted = s.routes.add(proxies);
    if (k.cfg.trace.routing_table > 0) [[unlikely]] {
        for (const auto& p : proxies)
            if (!p.is_nil()) trace_routing_table(true, p, s.user_id);
        for (const auto& p : evicted) trace_routing_table(false, p, s.user_id);
    }
    k.ok([&](protocol::output_stream& os) {
        os.write_size(static_cast<std::int32_t>(evicted.size()));
        for (const auto& p : evicted) protocol::write_proxy(os, p);
    });
}

void get_category_for_client(const call& k) {
    // Without a server endpoint there are no callbacks, and Glacier2 answers "" even without a session.
    if (k.cfg.server_endpoints.empty()) {
        k.ok([](protocol::output_stream& os) { os.write_string(""); });
        return;
    }
    if (!k.require_session()) return;
    k.ok([&](protocol::output_stream& os) { os.write_string(k.c.current_session()->category); });
}

void create_session_op(const call& k) {
    auto in = k.params();
    const auto user = in.read_string();
    const auto password = in.read_string();
    if (k.malformed(in)) return;
    if (k.c.current_session() || k.c.creating_session) {
        k.send(reply_user_exception(k.r.request_id, k.enc(), cannot_create_session_id, "session exists", true));
        return;
    }
    create_session(k.c, k.r.request_id, k.enc(), std::string(user), std::string(password), k.r.context);
}

void create_secure_session_op(const call& k) {
    if (k.c.current_session() || k.c.creating_session) {
        k.send(reply_user_exception(k.r.request_id, k.enc(), cannot_create_session_id, "session exists", true));
        return;
    }
    create_secure_session(k.c, k.r.request_id, k.enc(), k.r.context);
}

void destroy_session_op(const call& k) {
    if (!k.c.current_session()) {
        k.send(reply_user_exception(k.r.request_id, k.enc(), session_not_exist_id, std::nullopt, false));
        return;
    }
    k.c.destroy_session();
    k.ok_void();
}

/** Router::refreshSession. Like destroySession, without a session the answer is
    SessionNotExistException and the connection stays, so the client can create a session on it.
    With an external SessionManager, the Session it returned is pinged first, as glacier2router
    does: if the ping fails (the manager dropped it), the session ends, the client gets
    SessionNotExistException and the connection is closed after that reply (docs/glacier2.md §4). */
void refresh_session_op(const call& k) {
    const auto* s = k.c.current_session();
    if (!s) return k.send(reply_user_exception(k.r.request_id, k.enc(), session_not_exist_id, std::nullopt, false));
    if (!s->session_proxy) return k.ok_void();
    protocol::output_stream none;
    none.write_empty_encapsulation(protocol::encoding_1_1);
    const auto mode = static_cast<std::uint8_t>(protocol::operation_mode::nonmutating);  // ice_ping
    invoke(k.c.home(), *s->session_proxy, "ice_ping", mode, none.view(),
           [weak = std::weak_ptr(k.c.shared()), id = k.r.request_id, enc = k.enc(),
            category = s->category](const protocol::reply_view* r, std::string_view failure) {
               auto c = weak.lock();
               if (!c || c->closed()) return;
               auto* now = c->current_session();
               if (!now || now->category != category) return;  // destroyed meanwhile: nothing to refresh
               if (r && r->status == protocol::reply_status::ok) {
                   if (id != 0) c->enqueue(reply_void(id, enc));
                   return;
               }
               spdlog::info("session of '{}' ended: its SessionManager's Session did not answer ice_ping ({})",
                            now->user_id, r ? "reply status " + std::to_string(static_cast<int>(r->status))
                                            : std::string(failure));
               if (id != 0) c->enqueue(reply_user_exception(id, enc, session_not_exist_id, std::nullopt, false));
               c->destroy_session();
               c->close_gracefully();
           });
}

bool dispatch_router(const call& k) {
    const auto op = k.r.operation;
    if (dispatch_object_ops(k, router_type_ids, router_type_id)) {
    } else if (op == "getClientProxy") {
        get_client_proxy(k);
    } else if (op == "getServerProxy") {
        get_server_proxy(k);
    } else if (op == "addProxies") {
        add_proxies(k);
    } else if (op == "getCategoryForClient") {
        get_category_for_client(k);
    } else if (op == "createSession") {
        create_session_op(k);
    } else if (op == "createSessionFromSecureConnection") {
        create_secure_session_op(k);
    } else if (op == "refreshSession") {
        refresh_session_op(k);
    } else if (op == "destroySession") {
        destroy_session_op(k);
    } else if (op == "getSessionTimeout") {
        k.ok([&](protocol::output_stream& os) { os.write_long(k.cfg.session_timeout_s); });
    } else if (op == "getACMTimeout") {
        k.ok([&](protocol::output_stream& os) { os.write_int(k.cfg.acm_timeout_s); });
    } else {
        k.send(reply_not_exist(k.r, protocol::reply_status::operation_not_exist));
    }
    return !k.c.closed();
}

bool dispatch_router_finder(const call& k) {
    if (dispatch_object_ops(k, finder_type_ids, "::Ice::RouterFinder")) return !k.c.closed();
    if (k.r.operation == "getRouter") {
        k.ok([&](protocol::output_stream& os) { protocol::write_proxy(os, router_proxy(k.cfg)); });
    } else {
        k.send(reply_not_exist(k.r, protocol::reply_status::operation_not_exist));
    }
    return true;
}

}  // namespace

bool is_router_identity(const config& cfg, protocol::identity_view id) noexcept {
    return (id.name == "router" && id.category == cfg.instance_name) ||
           (id.name == "RouterFinder" && id.category == "Ice");
}

bool dispatch_router_request(client_connection& c, const protocol::request_view& r, std::uint8_t /*compression*/) {
    const call k{c, r, c.local().cfg()};
    if (!r.facet.empty()) {
        k.send(reply_not_exist(r, protocol::reply_status::facet_not_exist));
        return true;
    }
    return r.id.name == "router" ? dispatch_router(k) : dispatch_router_finder(k);
}

}  // namespace moraine::router
