#include <moraine/router/callback_relay.hpp>

#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/server_connection.hpp>
#include <moraine/router/session_control.hpp>
#include <moraine/router/session_router.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace moraine::router {

namespace {

/// Order of preference: plain before TLS (no handshake, no TLS client configuration needed).
int relay_rank(const protocol::endpoint& e) {
    if (e.is_tcp()) return 0;
    if (e.is_ws()) return 1;
    return 2;
}

bool wildcard(const std::string& host) { return host.empty() || host == "*" || host == "0.0.0.0" || host == "::"; }

}  // namespace

std::vector<protocol::endpoint> relay_endpoints(const std::vector<protocol::endpoint>& bound) {
    std::vector<protocol::endpoint> out;
    for (auto e : bound) {
        if (!e.stream()) continue;
        if (wildcard(e.host)) e.host = e.host == "::" ? "::1" : "127.0.0.1";
        out.push_back(std::move(e));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return relay_rank(a) < relay_rank(b); });
    return out;
}

namespace {

/// A topic event that reaches no session: its delivery state hears "no reply" (nullptr), as for
/// a closed connection, on `home` once the caller's call has returned.
void reply_none_later(net::shard& home, net::session_directory::reply_done done) {
    if (done) net::asio::post(home.io(), [done = std::move(done)] { done(nullptr); });
}

/// A topic event for a session the new process took: written to its server endpoint as the
/// topic service writes to an external subscriber; a twoway one's reply (or nullptr, the relay
/// failed) goes to the event's delivery state on this shard, never inside the caller's call.
void relay_event(net::shard& home, net::backend_connection* conn, const std::string& failure, parked_callback c) {
    if (!conn) {
        spdlog::warn("takeover: cannot relay a topic event to the new process: {}", failure);
        reply_none_later(home, std::move(c.event_reply));
        return;
    }
    if (!c.twoway) {
        conn->send(net::outbound_frame{std::move(c.message), {}}, nullptr);
        return;
    }
    conn->invoke(std::move(c.message), [done = std::move(c.event_reply)](const protocol::reply_view* reply, std::string_view) {
        if (done) done(reply);
    });
}

}  // namespace

void relay_callback(session_shard& owner, parked_callback c) {
    ++owner.metrics().callbacks_relayed;
    auto& home = owner.io();
    std::string failure;
    auto conn = home.backends().get(owner.router().relay_target(), failure);
    if (c.topic_event) return relay_event(home, conn.get(), failure, std::move(c));
    const auto back = c.back;
    if (!conn) {
        spdlog::warn("takeover: cannot relay a callback to the new process: {}", failure);
        if (back.request_id != 0)
            net::send_callback_reply(home.set(), home.index(), back, net::reply_unknown_local(back.request_id, failure));
        return;
    }
    if (back.request_id == 0) {  // oneway: nothing comes back
        conn->send(net::outbound_frame{std::move(c.message), {}}, nullptr);
        return;
    }
    conn->invoke(std::move(c.message), [&home, back](const protocol::reply_view* reply, std::string_view why) {
        protocol::byte_buffer out;
        if (reply) protocol::write_reply_message(out, back.request_id, *reply);
        else out = net::reply_unknown_local(back.request_id, why);
        net::send_callback_reply(home.set(), home.index(), back, std::move(out));
    });
}

bool route_to_moved(session_shard& owner, std::string_view category, parked_callback& c) {
    auto& moved = owner.moved();
    if (moved.taken(category)) {
        relay_callback(owner, std::move(c));
        return true;
    }
    if (!moved.park(category, c)) return false;
    ++owner.metrics().callbacks_parked;
    return true;
}

void deliver_event_here(session_shard& owner, std::string_view category, parked_callback c) {
    auto* session = owner.find_session(category);
    const auto r = session ? session->deliver_event(net::outbound_frame{std::move(c.message), {}}, c.twoway, c.event_reply)
                           : net::enqueue_result::over_limit;
    // Not queued (the session is gone again, or its connection closed on the limit): as a closed connection.
    if (r == net::enqueue_result::over_limit) reply_none_later(owner.io(), std::move(c.event_reply));
}

void release_parked(session_shard& owner, std::string_view category, std::vector<parked_callback> parked, bool taken) {
    for (auto& c : parked) {
        if (taken) relay_callback(owner, std::move(c));
        else if (c.topic_event)
            deliver_event_here(owner, category, std::move(c));
        else if (c.session_control)
            dispatch_session_control(owner, std::move(c.message), c.back.request_id != 0, std::move(c.back));
        else
            deliver_callback(owner, category, std::move(c.message), c.how, std::move(c.override_key), std::move(c.back));
    }
}

}  // namespace moraine::router
