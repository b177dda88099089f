#include <moraine/router/client_connection.hpp>

#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/router/connection_context.hpp>
#include <moraine/router/router_servant.hpp>
#include <moraine/router/session_router.hpp>
#include <moraine/router/trace.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <cstring>

namespace moraine::router {

using namespace net;

client_connection::client_connection(session_shard& local, net::transport socket)
    : ice_connection(local.io(), std::move(socket)),
      local_(local),
      request_hold_ms_(local.cfg().client_sleep_time_ms),
      callback_hold_ms_(local.cfg().server_sleep_time_ms) {}

client_connection::~client_connection() = default;

void client_connection::start() {
    local_.add_client(this);
    start_accepted();
}

std::optional<net::tls_peer> client_connection::peer_ssl_info() {
    if (!transport_.secure()) return std::nullopt;
    return net::describe_tls_peer(transport_.ssl(), socket_);
}

std::string client_connection::peer_address() const {
    boost::system::error_code ec;
    const auto ep = socket_.remote_endpoint(ec);
    return ec ? std::string("(unknown)") : ep.address().to_string();
}

const protocol::context& client_connection::connection_context() {
    if (connection_context_) return *connection_context_;
    boost::system::error_code ec;
    const auto local = socket_.local_endpoint(ec);
    const auto remote = socket_.remote_endpoint(ec);
    connection_facts f;
    f.type = transport_.websocket() ? (transport_.secure() ? "wss" : "ws") : (transport_.secure() ? "ssl" : "tcp");
    f.local_address = local.address().to_string();
    f.local_port = local.port();
    f.remote_address = remote.address().to_string();
    f.remote_port = remote.port();
    // The cipher and certificate come with ssl only: a wss connection describes itself as
    // WebSocket first, and glacier2router looks no deeper for them.
    if (transport_.secure() && !transport_.websocket()) {
        if (auto info = peer_ssl_info()) {
            f.cipher = std::move(info->cipher);
            if (!info->certs.empty()) f.peer_cert = std::move(info->certs.front());
        }
    }
    connection_context_ = make_connection_context(f);
    return *connection_context_;
}

std::string client_connection::peer_subject() {
    return transport_.secure() ? net::peer_subject(transport_.ssl()) : std::string();
}

bool client_connection::reads_paused() const noexcept { return out_.above_high() || blocked_on_backend_; }

bool client_connection::on_frame(const protocol::frame_view& frame) {
    const auto compression = static_cast<std::uint8_t>(frame.header.compression);
    switch (frame.header.type) {
    case protocol::message_type::request:
        return for_each_request(frame, [&](const protocol::request_view& r) { return dispatch_request(r, compression); });
    case protocol::message_type::batch_request:
        // Each batched request is forwarded as its own oneway (docs/ice-wire.md §5).
        return for_each_request(frame, [&](const protocol::request_view& r) { return dispatch_request(r, 0); });
    case protocol::message_type::reply: {
        auto r = protocol::decode_reply(frame.body());
        if (!r) return reject("malformed reply", r.error());
        on_callback_reply(*r);
        return true;
    }
    case protocol::message_type::validate_connection:
        return true;  // a heartbeat: never answered, it only refreshes last_activity
    case protocol::message_type::close_connection:
        close(close_reason::peer_closed, "client closed the connection");
        return false;
    }
    return true;
}

bool client_connection::dispatch_request(const protocol::request_view& r, std::uint8_t compression) {
    // Draining: neither answered nor forwarded. The close-connection message that follows
    // tells the Ice client this request was never dispatched, so it retries it elsewhere.
    if (local_.draining()) return true;
    if (is_router_identity(local_.cfg(), r.id)) return dispatch_router_request(*this, r, compression);
    if (!session_) {
        // Glacier2 answers a routed request without a session by dropping the connection.
        close(close_reason::policy, "request before a session exists");
        return false;
    }
    forward(r, compression);
    return !closed();
}

void client_connection::relay_reply(std::int32_t client_request_id, const protocol::reply_view& r,
                                      std::uint8_t compression) {
    if (closed() || client_request_id == 0) return;  // 0: a oneway the client asked to forward twoway
    protocol::byte_buffer out;
    protocol::write_reply_message(out, client_request_id, r, 0);
    // Per hop, as Glacier2: a client that accepts compression gets replies >= 100 bytes compressed
    // (status 1 below that).
    if (compression != 0) protocol::compress_for_peer(out);
    ++local_.metrics().replies_forwarded;
    enqueue(std::move(out));
}

std::size_t client_connection::in_flight() const noexcept {
    return calls_.callbacks() + (buffered_ && !buffered_->requests.empty() ? 1 : 0) +
           (buffered_ && !buffered_->callbacks.empty() ? 1 : 0) +
           (creating_session ? 1 : 0) + resolving_;
}

client_connection::pinned_table& client_connection::pinned() {
    if (!pinned_) pinned_ = std::make_unique<pinned_table>();
    return *pinned_;
}

enqueue_result client_connection::deliver_event(outbound_frame f, bool twoway, net::session_directory::reply_done done) {
    if (closed()) return enqueue_result::over_limit;
    std::int32_t id = 0;
    if (twoway) {
        // A fresh id. Remembered only when someone waits for the reply (an ordered or windowed
        // subscriber); otherwise the reply is dropped as one to an unknown id.
        id = calls_.next_id();
        std::memcpy(f.head.data() + protocol::header_size, &id, sizeof id);  // little-endian host
    }
    const auto result = enqueue(std::move(f));
    // Kept after the enqueue: an over_limit enqueue has closed the connection, and the caller
    // counts that failure from the result.
    if (id != 0 && done && result != enqueue_result::over_limit && !closed())
        calls_.add_event(id, std::move(done));
    return result;
}

void client_connection::on_callback_reply(const protocol::reply_view& r) {
    auto done = calls_.complete(r.request_id);
    if (done.event) {
        done.event(&r);
        return;
    }
    if (!done.callback) return;  // unknown request id: ignored, as Ice does
    const callback_route& route = *done.callback;
    if (route.request_id == 0) return;  // a oneway callback the back end asked to forward twoway
    protocol::byte_buffer out;
    protocol::write_reply_message(out, route.request_id, r);
    send_callback_reply(home_.set(), home_.index(), route, std::move(out));
}

void client_connection::fail_callback(const callback_route& route) noexcept {
    if (route.request_id == 0) return;  // a oneway forwarded twoway (`_fwd=t`): nobody waits
    send_callback_reply(home_.set(), home_.index(), route,
                        reply_unknown_local(route.request_id,
                                            "::Ice::ConnectionLostException:\nconnection lost: client gone"));
}

void client_connection::fail_callbacks() noexcept {
    for (const auto& route : calls_.take_callbacks()) fail_callback(route);
}

void client_connection::fail_event_replies() noexcept {
    // Posted: the close may happen inside the topic service's own deliver() call.
    for (auto& done : calls_.take_events()) boost::asio::post(home_.io(), [done = std::move(done)] { done(nullptr); });
}

void client_connection::set_session(std::unique_ptr<session::session> s) {
    session_ = std::move(s);
    ++session_serial_;
    local_.add_session(session_->category, this);
    local_.router().session_opened();
    ++local_.metrics().sessions_created;
    spdlog::debug("session created for '{}' on shard {}", session_->user_id, home_.index());
    if (local_.cfg().trace.session > 0) [[unlikely]] {
        traced_address_ = peer_address();  // the socket may be gone when the session ends
        trace_session(true, session_->user_id, traced_address_, session_->category, {});
    }
}

void client_connection::destroy_session() {
    if (!session_) return;
    // What the session queued still leaves, as with Glacier2, which drains a queue before dropping it.
    flush_requests();
    flush_callbacks();
    local_.remove_session(session_->category);
    ++session_serial_;
    // Tell the external SessionManager's session, as Glacier2 does; nobody waits for the answer.
    // With Glacier2.AddConnectionContext (1 or 2) it carries the _con.* entries, as create did.
    if (session_->session_proxy) {
        const bool with_con = local_.cfg().add_connection_context != 0;
        invoke_and_forget(home_, *session_->session_proxy, "destroy",
                          with_con ? connection_context() : protocol::context{});
    }
    spdlog::debug("session of '{}' destroyed", session_->user_id);
    if (local_.cfg().trace.session > 0) [[unlikely]]
        trace_session(false, session_->user_id, traced_address_.empty() ? peer_address() : traced_address_,
                      session_->category, {});
    session_.reset();
    if (pinned_) pinned_->clear();  // its routing table is gone: a new session's proxies resolve afresh
    local_.router().session_closed();
    ++local_.metrics().sessions_destroyed;
}

void client_connection::on_closed(std::string_view why) {
    spdlog::debug("client connection closed: {}", why);
    local_.remove_client(this);
    if (moving_) {  // the session lives on in the new process: nothing ends, nothing is told
        if (session_) local_.remove_session(session_->category);
        ++session_serial_;
        session_.reset();
        return;
    }
    if (buffered_) {
        buffered_->request_timing.cancel();
        buffered_->callback_timing.cancel();
    }
    destroy_session();
    flush_requests();  // requests queued by the client still reach their back ends
    fail_queued_callbacks();
    fail_callbacks();
    fail_event_replies();
}

}  // namespace moraine::router
