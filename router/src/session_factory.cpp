#include <moraine/router/session_factory.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/user_exception.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/connection_context.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/router/session_control.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/router/exception_ids.hpp>
#include <moraine/router/session_router.hpp>

#include <spdlog/spdlog.h>

#include <optional>
#include <utility>

namespace moraine::router {

using namespace net;

namespace {

/// A createSession waiting for its authentication or SessionManager answer.
struct pending_session {
    std::weak_ptr<client_connection> conn;  // locked only on the connection's shard
    std::int32_t request_id = 0;
    protocol::encoding_version enc;
    std::string user_id;                // createSessionFromSecureConnection: the certificate's subject
    std::optional<net::tls_peer> ssl;   // set for createSessionFromSecureConnection
    std::string address;                // the client's, for the login back-off
    bool password_login = false;        // a password was checked: its outcome feeds the back-off
    session_router* router = nullptr;   // outlives every shard's work
    std::shared_ptr<void> reservation;  // room under the session limit, freed with the last copy
    protocol::context ctx;              // of the verifier and session manager calls (session_call_context)
};

/// Glacier2::SSLInfo, as SSLPermissionsVerifier::authorize and SSLSessionManager::create take it.
void write_ssl_info(protocol::output_stream& os, const net::tls_peer& info) {
    os.write_string(info.remote_host);
    os.write_int(info.remote_port);
    os.write_string(info.local_host);
    os.write_int(info.local_port);
    os.write_string(info.cipher);
    os.write_size(static_cast<std::int32_t>(info.certs.size()));
    for (const auto& pem : info.certs) os.write_string(pem);
}

/// The connection, if it is still open; a session created for a vanished client is not installed.
std::shared_ptr<client_connection> still_open(const pending_session& p) {
    auto c = p.conn.lock();
    if (!c || c->closed()) return nullptr;
    c->creating_session = false;
    return c;
}

void refuse(client_connection& c, const pending_session& p, std::string_view type_id, std::string_view reason) {
    spdlog::debug("createSession for '{}' refused: {}", p.user_id, reason);
    auto& m = c.local().metrics();
    ++(type_id == permission_denied_id ? m.auth_failures : m.sessions_refused);
    c.enqueue(reply_user_exception(p.request_id, p.enc, type_id, reason, true));
}

/// The string member of a user exception `type_id` in reply `r`, if that is what it carries.
std::optional<std::string> exception_reason(const protocol::reply_view& r, std::string_view type_id) {
    if (r.status != protocol::reply_status::user_exception) return std::nullopt;
    auto ex = protocol::decode_user_exception(r.payload);
    if (!ex || ex->type_id != type_id) return std::nullopt;
    protocol::input_stream in(ex->members);
    auto reason = in.read_string();
    if (!in.ok()) return std::nullopt;
    return std::string(reason);
}

std::unique_ptr<session::session> new_session(client_connection& c, const pending_session& p) {
    const auto& cfg = c.local().cfg();
    return std::make_unique<session::session>(p.user_id, c.local().new_category(), cfg.routing_table_max, cfg.filters);
}

/// Answers createSession with the session proxy (nil without a SessionManager).
void reply_created(client_connection& c, const pending_session& p) {
    const auto& held = c.session_state()->session_proxy;
    const protocol::proxy returned = held ? *held : protocol::proxy{};
    c.enqueue(reply_ok(p.request_id, p.enc, [&](protocol::output_stream& os) { protocol::write_proxy(os, returned); }));
}

/** Glacier2::SessionManager::create(userId, control), or SSLSessionManager::create(info, control)
    for a secure-connection session: the returned Session* goes to the client. The session state
    exists (unrouted) during the call, so the manager can set its filters through the
    SessionControl before create returns. */
void call_session_manager(client_connection& c, pending_session p) {
    auto& home = c.home();
    const auto& cfg = c.local().cfg();
    auto manager = protocol::proxy_from_string(p.ssl ? cfg.ssl_session_manager : cfg.session_manager);
    if (!manager) return refuse(c, p, cannot_create_session_id, "invalid session manager proxy");
    c.set_session(new_session(c, p));
    c.creating_session = true;
    protocol::output_stream params;
    const auto start = params.start_encapsulation(protocol::encoding_1_1);
    if (p.ssl)
        write_ssl_info(params, *p.ssl);
    else
        params.write_string(p.user_id);
    protocol::write_proxy(params, session_control_proxy(cfg, c.local().router().server_endpoints(), c.session_state()->category));
    params.end_encapsulation(start);
    invoke(home, *manager, "create", 0, params.view(),
           [p, &home](const protocol::reply_view* r, std::string_view failure) {
               auto session_proxy = proxy_result(r);
               auto c = still_open(p);
               if (!c || !c->session_state()) {  // the client left meanwhile
                   if (session_proxy && !session_proxy->is_nil()) invoke_and_forget(home, *session_proxy, "destroy");
                   return;
               }
               if (session_proxy) {
                   if (!session_proxy->is_nil())  // a nil Session* is kept as none: nothing to ping or destroy
                       c->session_state()->session_proxy = std::make_unique<const protocol::proxy>(std::move(*session_proxy));
                   return reply_created(*c, p);
               }
               c->destroy_session();
               if (!r) return refuse(*c, p, cannot_create_session_id, failure);
               auto reason = exception_reason(*r, cannot_create_session_id);
               refuse(*c, p, cannot_create_session_id, reason ? *reason : "internal server error");
           },
           p.ctx);
}

/// Authentication finished on the connection's shard.
void authenticated(pending_session p, bool ok, std::string_view reason) {
    auto c = still_open(p);
    if (p.password_login) {  // even if the client left: a guesser must not escape by hanging up
        auto& gate = (c ? c->local().router() : *p.router).admission();
        if (ok)
            gate.succeeded(p.address, p.user_id, std::chrono::steady_clock::now());
        else
            gate.failed(p.address, p.user_id, std::chrono::steady_clock::now());
    }
    if (!c) return;
    if (!ok) return refuse(*c, p, permission_denied_id, reason);
    const auto& cfg = c->local().cfg();
    if (!(p.ssl ? cfg.ssl_session_manager : cfg.session_manager).empty()) return call_session_manager(*c, std::move(p));
    c->set_session(new_session(*c, p));
    reply_created(*c, p);
}

/** The set-up limits, checked before any authentication work: the router-wide session limit,
    the set-up rate per address and the login back-off (session::admission). A refusal is
    answered at once, with a log line. @return false after refusing. */
bool admitted(client_connection& c, pending_session& p) {
    auto& router = c.local().router();
    const auto& limits = c.local().cfg().admission;
    if (limits.sessions_max > 0) {
        if (!router.begin_setup(limits.sessions_max)) {
            spdlog::warn("createSession from {} refused: the session limit ({}) is reached", p.address, limits.sessions_max);
            refuse(c, p, cannot_create_session_id, "the router's session limit is reached");
            return false;
        }
        // Held by the pending call and its copies; by the time the last goes, the session (if
        // any) counts in sessions_open.
        p.reservation = std::shared_ptr<void>(nullptr, [r = &router](void*) { r->end_setup(); });
    }
    const auto r = router.admission().check(p.address, p.user_id, std::chrono::steady_clock::now(), p.password_login);
    if (!r) return true;
    const auto ms = r.retry_after.count();
    using kind = session::admission_refusal::kind;
    if (r.why == kind::rate) {
        spdlog::info("createSession from {} refused: over {}/s session set-ups from that address", p.address,
                     limits.setups_per_second);
        refuse(c, p, cannot_create_session_id,
               "too many session set-ups from this address; retry in " + std::to_string(ms) + " ms");
        return false;
    }
    const char* who = r.why == kind::backoff_user ? "the user waits" : r.why == kind::backoff_address ? "the address waits"
                                                                     : "earlier checks still running, retry in";
    spdlog::info("createSession for '{}' from {} refused: login back-off after failed logins ({} {} ms)", p.user_id,
                 p.address, who, ms);
    refuse(c, p, permission_denied_id, "too many failed logins; retry in " + std::to_string(ms) + " ms");
    return false;
}

/// crypt(3) takes milliseconds: run it on the blocking pool, then come back to the shard.
void check_crypt_password(session_shard& local, pending_session p, std::string password) {
    auto& set = local.io().set();
    const unsigned owner = local.io().index();
    auto passwords = local.passwords();  // owned by the task: a reload may replace the shard's
    asio::post(set.blocking_pool(), [&set, passwords, owner, p = std::move(p), password = std::move(password)]() mutable {
        const bool ok = passwords && passwords->check(p.user_id, password);
        set.invoke_on(owner, [p = std::move(p), ok](shard&) mutable {
            authenticated(std::move(p), ok, "permission denied");
        });
    });
}

/// The answer of PermissionsVerifier::checkPermissions or SSLPermissionsVerifier::authorize:
/// `bool op(..., out string reason) throws PermissionDeniedException`.
void on_verifier_answer(pending_session p, const protocol::reply_view* r, std::string_view failure) {
    if (!r) {
        spdlog::warn("permissions verifier unreachable: {}", failure);
        return authenticated(std::move(p), false, "internal server error");
    }
    if (r->status == protocol::reply_status::ok) {
        if (auto in = results_of(*r)) {
            const auto reason = in->read_string();  // out-params precede the return value
            const bool ok = in->read_bool();
            if (in->ok()) return authenticated(std::move(p), ok, reason);
        }
    }
    auto reason = exception_reason(*r, permission_denied_id);
    authenticated(std::move(p), false, reason ? *reason : "internal server error");
}

/// Glacier2::PermissionsVerifier::checkPermissions(userId, password, out reason) -> bool.
void check_with_verifier(session_shard& local, pending_session p, const std::string& password) {
    auto& home = local.io();
    auto verifier = protocol::proxy_from_string(local.cfg().permissions_verifier);
    if (!verifier) return authenticated(std::move(p), false, "invalid permissions verifier proxy");
    protocol::output_stream params;
    const auto start = params.start_encapsulation(protocol::encoding_1_1);
    params.write_string(p.user_id);
    params.write_string(password);
    params.end_encapsulation(start);
    invoke(home, *verifier, "checkPermissions", 1, params.view(),
           [p](const protocol::reply_view* r, std::string_view failure) mutable { on_verifier_answer(std::move(p), r, failure); },
           p.ctx);
}

/// Glacier2::SSLPermissionsVerifier::authorize(SSLInfo, out reason) -> bool.
void check_with_ssl_verifier(session_shard& local, pending_session p) {
    auto verifier = protocol::proxy_from_string(local.cfg().ssl_permissions_verifier);
    if (!verifier) return authenticated(std::move(p), false, "invalid ssl permissions verifier proxy");
    protocol::output_stream params;
    const auto start = params.start_encapsulation(protocol::encoding_1_1);
    write_ssl_info(params, *p.ssl);
    params.end_encapsulation(start);
    invoke(local.io(), *verifier, "authorize", 1, params.view(),
           [p](const protocol::reply_view* r, std::string_view failure) mutable { on_verifier_answer(std::move(p), r, failure); },
           p.ctx);
}

/// The context of the verifier and session manager calls for a createSession* with context `client`.
protocol::context call_context(client_connection& c, const protocol::context_view& client) {
    const int add = c.local().cfg().add_connection_context;
    return session_call_context(client, add, add == 0 ? protocol::context{} : c.connection_context());
}

}  // namespace

void create_session(client_connection& c, std::int32_t request_id, protocol::encoding_version enc,
                    std::string user_id, std::string password, const protocol::context_view& client_ctx) {
    auto& local = c.local();
    const bool password_login = local.cfg().auth == auth_mode::crypt_file || local.cfg().auth == auth_mode::verifier;
    pending_session p{c.shared(), request_id, enc, std::move(user_id), {}, c.peer_address(), password_login, &local.router(), {},
                      call_context(c, client_ctx)};
    if (!admitted(c, p)) return;
    c.creating_session = true;
    switch (local.cfg().auth) {
    case auth_mode::allow_all:
        return authenticated(std::move(p), true, {});
    case auth_mode::crypt_file:
        return check_crypt_password(local, std::move(p), std::move(password));
    case auth_mode::verifier:
        return check_with_verifier(local, std::move(p), password);
    case auth_mode::none:
        break;
    }
    authenticated(std::move(p), false, "no configured permissions verifier");
}

void create_secure_session(client_connection& c, std::int32_t request_id, protocol::encoding_version enc,
                           const protocol::context_view& client_ctx) {
    auto& local = c.local();
    const auto& cfg = local.cfg();
    pending_session p{c.shared(), request_id, enc, {}, {}, c.peer_address(), false, &local.router(), {},
                      call_context(c, client_ctx)};
    if (!admitted(c, p)) return;
    c.creating_session = true;
    if (cfg.ssl_permissions_verifier.empty())
        return authenticated(std::move(p), false, "no configured ssl permissions verifier");
    p.ssl = c.peer_ssl_info();
    if (!p.ssl) return authenticated(std::move(p), false, "not ssl connection");
    p.user_id = c.peer_subject();
    if (cfg.ssl_allow_all) return authenticated(std::move(p), true, {});
    check_with_ssl_verifier(local, std::move(p));
}

}  // namespace moraine::router
