// session_client: the operations (open, routed calls, servants, destroy).
#include "session_client_impl.hpp"

#include "endpoint_order.hpp"
#include "reconnect_state.hpp"

#include <moraine/client/params.hpp>
#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <algorithm>
#include <optional>

namespace moraine::client {

namespace {
using clock = std::chrono::steady_clock;
using protocol::operation_mode;

/// How a request leaves: its context, and whether it is compressed.
struct request_options {
    const protocol::context* context = nullptr;  // null: empty
    bool compress = false;
};

/// Bytes a request of these parts takes at most: each string's size costs 5 bytes at most.
std::size_t request_bound(protocol::identity_view target, std::string_view facet, std::string_view operation,
                          const protocol::context* context, std::size_t params) {
    std::size_t n = protocol::header_size + 4 + target.name.size() + target.category.size() + 10 + facet.size() + 10 +
                    operation.size() + 5 + 1 + 5 + params;
    if (context)
        for (const auto& [key, value] : *context) n += key.size() + value.size() + 10;
    return n;
}

/// A request message (docs/ice-wire.md §4); `params` is a whole encapsulation.
protocol::byte_buffer request_message(std::int32_t id, protocol::identity_view target, std::string_view facet,
                                      std::string_view operation, operation_mode mode, protocol::byte_view params,
                                      request_options opts = {}) {
    protocol::output_stream out;
    // One allocation, not one per growth of the buffer: a restored session sends six requests.
    out.buffer().reserve(request_bound(target, facet, operation, opts.context, params.size()));
    out.start_message(protocol::message_type::request);
    out.write_int(id);
    out.write_identity(target);
    out.write_facet(facet);
    out.write_string(operation);
    out.write_byte(static_cast<std::uint8_t>(mode));
    out.write_context(opts.context ? *opts.context : protocol::context{});
    out.write_bytes(params);
    out.end_message();
    auto message = out.take();
    if (opts.compress) protocol::compress_for_peer(message);
    return message;
}


/// Why async_open refuses `routers` before connecting anywhere (empty: it does not).
error_info refusal(const router_endpoints& routers, bool tls_configured) {
    if (routers.empty()) return make_error(errc::bad_endpoint, "no router endpoint given");
    const auto ssl = std::find_if(routers.begin(), routers.end(), [](const router_address& a) { return a.tls; });
    if (ssl == routers.end() || tls_configured) return {};
    // Never over tcp (or ws) instead: the caller asked for TLS and would get a plain connection.
    return make_error(errc::tls_not_configured, "the router address " + ssl->host + ":" + std::to_string(ssl->port) +
                                                    " is " + (ssl->websocket ? "wss" : "ssl") +
                                                    " but session_options::tls is not set");
}

/// A set-up step found its connection gone.
error_info lost_in_set_up() { return make_error(errc::connection_lost, "closed during session set-up"); }

/// Results of Ice::Router::addProxies: the evicted proxies (ObjectProxySeq).
std::vector<protocol::proxy> evicted_of(const call_result& r) {
    std::vector<protocol::proxy> out;
    (void)decode_results(r.encaps, [&](protocol::input_stream& in) {
        const auto n = in.read_size();
        for (std::int32_t i = 0; i < n && in.ok(); ++i) out.push_back(protocol::read_proxy(in));
    });
    return out;
}
}  // namespace

error_info session_client::impl::not_open() const {
    // A session the router dropped reports why; one never opened, or closed by us: not_connected.
    if (reconnect_ && reconnect_->active)
        return make_error(errc::reconnecting, "the connection to the router was lost; reconnect attempt " +
                                                  std::to_string(reconnect_->attempt));
    if (closed_by_.code == errc::connection_lost) return closed_by_;
    return make_error(errc::not_connected, "the session is not open");
}

// -- open -------------------------------------------------------------------------------------

asio::awaitable<error_info> session_client::impl::open(router_endpoints routers, std::optional<credentials> login) {
    if (phase_ != phase::idle) co_return make_error(errc::not_connected, "async_open called twice");
    if (auto refused = refusal(routers, opts_.tls != nullptr)) {
        close(refused);
        co_return refused;
    }
    if (reconnect_) {
        reconnect_->routers = routers;
        reconnect_->login = login;
    }
    co_return co_await establish(routers, login);
}

asio::awaitable<error_info> session_client::impl::establish(const router_endpoints& routers,
                                                      const std::optional<credentials>& login) {
    if (auto err = co_await reach_any(routers)) co_return err;
    const std::uint32_t gen = conn_gen_;
    // Closes this connection unless it is gone already (the next attempt may own the socket).
    auto fail = [&](error_info err) {
        if (!gone(gen)) close(err);
        return err;
    };
    phase_ = phase::creating;
    phase_deadline_ = clock::time_point::max();
    // Both are ["amd", "format:sliced"] and raise the same exceptions (docs/glacier2.md §2).
    const char* operation = login ? "createSession" : "createSessionFromSecureConnection";
    protocol::byte_buffer params = empty_params();
    if (login)
        params = encode_params([&](protocol::output_stream& out) {
            out.write_string(login->user);
            out.write_string(login->password);
        });
    const call_result created = co_await router_call(operation, operation_mode::normal, std::move(params));
    if (auto err = map_session_error(created)) co_return fail(std::move(err));
    if (auto err = co_await fetch_session_info(gen)) co_return fail(std::move(err));
    if (gone(gen)) co_return closed_by_ ? closed_by_ : lost_in_set_up();
    if (reconnect_ && heartbeat_every_.count() > 0) {
        // A router that vanished without a FIN or RST (host down, partition) never acknowledges
        // our heartbeats: the kernel then fails the connection after the ACM timeout (twice the
        // heartbeat period), instead of after minutes of retransmissions, and we reconnect.
        conn_->set_user_timeout(2 * heartbeat_every_);
    }
    // The set-up's four calls grew the table's buckets: an open session with no call in flight
    // keeps none (the first call makes them again).
    if (pending_.empty()) decltype(pending_)().swap(pending_);
    phase_ = phase::open;
    last_write_ = clock::now();
    timer_.cancel();  // re-arm for heartbeats
    co_return error_info{};
}

asio::awaitable<error_info> session_client::impl::reach_any(const router_endpoints& routers) {
    error_info last;
    const auto order = shuffled_order(routers.size());  // per attempt: sessions spread, retries move on
    for (std::size_t i = 0; i < order.size(); ++i) {
        // Until the last endpoint, a failure drops only this connection (close() checks the flag):
        // the session is not over while a router may still take it. The last one's failure
        // closes as a single endpoint's always did (ends the open, or fails a reconnect attempt).
        failing_over_ = i + 1 < order.size();
        last = co_await reach(routers[order[i]]);
        failing_over_ = false;
        if (!last || phase_ == phase::closed) break;  // reached, or close() / async_destroy meanwhile
    }
    co_return last;
}

asio::awaitable<error_info> session_client::impl::reach(const router_address& a) {
    const std::uint32_t gen = conn_gen_;
    phase_ = phase::connecting;
    phase_deadline_ = clock::now() + opts_.connect_timeout;
    arm_timer();
    // The connection keeps this session alive until it ends (aliasing: the owner's reference
    // count, our interface). open_coro refused a TLS address without session_options::tls.
    conn_ = router_connection::create(ex(), {opts_.max_message_bytes, opts_.write_queue_limit},
                                      std::shared_ptr<connection_events>(keep(), this));
    const auto conn = conn_;  // through the set-up, even if it is dropped meanwhile (timeout)
    if (auto err = settled(co_await conn->open(a, opts_.tls.get()), gen)) co_return err;
    co_return co_await wait_validated(gen);
}

error_info session_client::impl::settled(error_info err, std::uint32_t gen) {
    if (gone(gen)) return closed_by_ ? closed_by_ : not_open();  // timeout, or close()
    if (err) close(err);
    return err;
}

template <class Done>
asio::awaitable<bool> session_client::impl::wait_until(Done done, std::uint32_t gen) {
    while (!gone(gen) && !done()) co_await wait_event();
    co_return !gone(gen);
}

asio::awaitable<error_info> session_client::impl::wait_validated(std::uint32_t gen) {
    if (co_await wait_until([this] { return conn_->validated(); }, gen)) co_return error_info{};
    if (closed_by_) co_return closed_by_;  // e.g. timeout, or the router refused our TLS certificate
    co_return make_error(errc::connection_lost, "closed before the router validated the connection");
}

asio::awaitable<error_info> session_client::impl::fetch_session_info(std::uint32_t gen) {
    // All three in one round trip: none depends on another's answer. getServerProxy answers a
    // null proxy when the router has no server endpoints, and its answer is used only when the
    // category says there are (an empty category: no callbacks). After a failover thousands of
    // sessions run this at once, and each round trip more is one more pass over all of them.
    auto acm = std::make_shared<std::optional<call_result>>();
    auto server = std::make_shared<std::optional<call_result>>();
    const auto alongside = [this](const char* operation, std::shared_ptr<std::optional<call_result>> into) {
        asio::co_spawn(ex(), router_call(operation, operation_mode::nonmutating, empty_params()),
                       [this, into = std::move(into), self = keep()](std::exception_ptr, call_result r) {
                           *into = std::move(r);
                           event_.cancel();
                       });
    };
    alongside("getACMTimeout", acm);
    alongside("getServerProxy", server);
    const call_result cat = co_await router_call("getCategoryForClient", operation_mode::nonmutating, empty_params());
    if (!co_await wait_until([&] { return acm->has_value(); }, gen)) co_return lost_in_set_up();
    if (!cat.ok()) co_return cat.error;
    auto category = decode_string_result(cat.encaps);
    if (!category) co_return make_error(errc::protocol_error, "bad getCategoryForClient result");
    category_ = std::move(*category);
    std::int32_t acm_seconds = 0;
    if ((*acm)->ok()) (void)decode_results((*acm)->encaps, [&](protocol::input_stream& in) { acm_seconds = in.read_int(); });
    if (opts_.keep_alive)
        heartbeat_every_ = acm_seconds > 0 ? std::chrono::milliseconds(acm_seconds * 500) : opts_.fallback_heartbeat;
    if (category_.empty()) co_return error_info{};  // no server endpoints: no callbacks (its answer is dropped)
    if (!co_await wait_until([&] { return server->has_value(); }, gen)) co_return lost_in_set_up();
    const call_result& sp = **server;
    if (!sp.ok()) co_return sp.error;
    if (auto ec = decode_results(sp.encaps, [&](protocol::input_stream& in) { server_proxy_ = protocol::read_proxy(in); }))
        co_return make_error(errc::protocol_error, "bad getServerProxy result: " + ec.message());
    co_return error_info{};
}

// -- calls ------------------------------------------------------------------------------------

asio::awaitable<call_result> session_client::impl::twoway(protocol::identity_view id, std::string_view facet,
                                                    std::string_view operation, operation_mode mode,
                                                    protocol::byte_view params, const call* options) {
    if (phase_ == phase::closed || phase_ == phase::reconnecting) co_return call_result::failure(not_open());
    const std::int32_t rid = next_request_id();
    auto msg = request_message(rid, id, facet, operation, mode, params,
                               options ? request_options{&options->context, options->compress} : request_options{});
    co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(call_result)>(
        [this, rid, &msg](auto handler) {
            if (auto err = enqueue(std::move(msg))) return complete(std::move(handler), call_result::failure(err));
            add_pending(rid, std::move(handler));
        },
        asio::use_awaitable);
}

asio::awaitable<call_result> session_client::impl::router_call(std::string operation, operation_mode mode,
                                                         protocol::byte_buffer params) {
    co_return co_await twoway(router_id_.view(), {}, operation, mode, params);
}

asio::awaitable<error_info> session_client::impl::ensure_route(const protocol::proxy& target) {
    for (;;) {
        if (phase_ != phase::open) co_return not_open();
        switch (routes_.find(target.id.view())) {
        case routing_cache::state::added: co_return error_info{};
        case routing_cache::state::adding: co_await wait_event(); continue;
        case routing_cache::state::absent: break;
        }
        co_return co_await answer_of(send_add_proxy(target));
    }
}

asio::awaitable<error_info> session_client::impl::answer_of(std::shared_ptr<std::optional<error_info>> added) {
    while (!added->has_value()) co_await wait_event();  // it always comes: reply, timeout or drop
    co_return std::move(**added);
}

std::shared_ptr<std::optional<error_info>> session_client::impl::send_add_proxy(const protocol::proxy& target) {
    auto added = std::make_shared<std::optional<error_info>>();
    routes_.begin_add(target.id);
    auto params = encode_params([&](protocol::output_stream& out) {
        out.write_size(1);
        protocol::write_proxy(out, target);
    });
    const std::int32_t rid = next_request_id();
    auto on_answer = [this, self = keep(), added, id = target.id, gen = conn_gen_](call_result r) {
        if (!gone(gen)) {  // else routes_ belongs to a later connection: its state is not ours
            routes_.add_done(id.view(), r.ok());
            if (r.ok()) routes_.evict(evicted_of(r));
        }
        *added = std::move(r.error);
        event_.cancel();  // wake the calls waiting for this identity
    };
    if (auto err = enqueue(request_message(rid, router_id_.view(), {}, "addProxies", operation_mode::idempotent, params)))
        complete(std::move(on_answer), call_result::failure(std::move(err)));
    else
        add_pending(rid, std::move(on_answer));
    return added;
}

// g++ 12 inlines asio's frame `operator new` (aligned_alloc) into this coroutine but not its
// sized `operator delete`, and reports the pair as a mismatch: a false -Wmismatched-new-delete
// (as in client/CMakeLists.txt and demo/CMakeLists.txt).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
asio::awaitable<call_result> session_client::impl::invoke(call c) {
    // The frame stays within 1 KiB, so malloc's per-thread cache serves it (every call allocates
    // one): the identity is viewed where it is used, the addProxies answer awaited inline.
    for (int attempt = 0;; ++attempt) {
        // The first call to an identity goes right behind its addProxies, in the same write,
        // instead of one round trip later: the router handles a connection's requests in order,
        // so the route is in its table when the call arrives. A router that answered the call
        // first says ObjectNotExist "ice_add_proxy", and the call is sent again below.
        std::shared_ptr<std::optional<error_info>> added;
        if (phase_ == phase::open && routes_.find(c.target.id.view()) == routing_cache::state::absent)
            added = send_add_proxy(c.target);
        else if (auto err = co_await ensure_route(c.target))
            co_return call_result::failure(std::move(err));
        call_result r = co_await twoway(c.target.id.view(), c.target.facet, c.operation, c.mode, c.params, &c);
        if (added && !r.ok()) {  // its answer decides
            while (!added->has_value()) co_await wait_event();
            if (**added) co_return call_result::failure(std::move(**added));  // not routed: why, as if we had waited
        }
        if (!needs_add_proxy(r, c.target.id.view())) co_return r;
        // The router does not route it (evicted, or a new session): add again, and retry once.
        routes_.forget(c.target.id.view());
        if (attempt > 0) co_return r;
    }
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic pop
#endif

asio::awaitable<error_info> session_client::impl::oneway(call c) {
    // Waits for addProxies: a oneway the router drops for want of a route is lost unseen.
    if (auto err = co_await ensure_route(c.target)) co_return err;
    co_return enqueue(request_message(0, c.target.id.view(), c.target.facet, c.operation, c.mode, c.params,
                                      request_options{&c.context, c.compress}));
}

asio::awaitable<error_info> session_client::impl::destroy() {
    if (reconnect_ && reconnect_->active) {  // no session on any router: just stop
        reconnect_->stopped = true;
        close(error_info{});
        co_return error_info{};
    }
    if (phase_ != phase::open) co_return not_open();
    if (reconnect_) reconnect_->stopped = true;  // a loss from here on ends the session
    const call_result r = co_await router_call("destroySession", operation_mode::normal, empty_params());
    if (phase_ == phase::closed) co_return r.error ? r.error : error_info{};
    // Graceful close (docs/ice-wire.md §3): close connection, flush, then the socket.
    phase_ = phase::closing;
    phase_deadline_ = clock::now() + opts_.connect_timeout;
    timer_.cancel();
    const auto& bye = protocol::close_connection_message;
    if (enqueue(protocol::byte_buffer(bye.begin(), bye.end()))) close(error_info{});
    else conn_->close_after_flush();
    while (phase_ != phase::closed) co_await wait_event();
    co_return r.error;
}

// -- servants ---------------------------------------------------------------------------------

protocol::proxy session_client::impl::add_servant(std::string name, servant s) {
    auto p = server_proxy(name);
    servants_.add(std::move(name), std::move(s));
    return p;
}

protocol::proxy session_client::impl::server_proxy(std::string_view name) const {
    if (server_proxy_.is_nil()) return {};
    protocol::proxy p = server_proxy_;
    p.id = protocol::identity{std::string(name), category_};
    return p;
}

}  // namespace moraine::client
