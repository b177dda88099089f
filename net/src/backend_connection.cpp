#include <moraine/net/backend_connection.hpp>

#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/connection_handshake.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/net/socket_buffers.hpp>

#include <spdlog/spdlog.h>

#include <cstring>
#include <utility>

namespace moraine::net {

namespace {

/// Glacier2 reports a lost back-end connection to the client as an UnknownLocalException with this text.
std::string connection_lost_text(std::string_view why) {
    return "::Ice::ConnectionLostException:\nconnection lost: " + std::string(why);
}

/// ssl and wss endpoints get TLS with the client context (backend_pool only picks one when TLS
/// is set up); ws and wss a WebSocket.
transport transport_for(shard& home, const protocol::endpoint& ep) {
    return transport(tcp::socket(home.executor()), kind_of(ep), ep.secure() ? home.tls() : nullptr, false);
}

}  // namespace

backend_connection::backend_connection(shard& home, std::vector<protocol::endpoint> candidates, std::string key)
    : ice_connection(home, transport_for(home, candidates.at(0))),
      candidates_(std::move(candidates)),
      endpoint_(candidates_.front()),
      key_(std::move(key)),
      deadline_(home.executor()) {
    startup_.hold_writes();  // until the back end's validate connection arrives
}

backend_connection::~backend_connection() = default;

void backend_connection::start() {
    asio::co_spawn(home_.executor(),
                   [self = std::static_pointer_cast<backend_connection>(shared_from_this())] { return self->connect(); },
                   report_bug);
}

asio::awaitable<std::string> backend_connection::connect_tcp() {
    tcp::resolver resolver(home_.executor());
    auto [rec, results] = co_await resolver.async_resolve(endpoint_.host, std::to_string(endpoint_.port),
                                                          nothrow_awaitable);
    if (rec || results.empty()) co_return "::Ice::DNSException:\nDNS error: " + rec.message() + "\nhost: " + endpoint_.host;
    if (closed()) co_return std::string();
    // Each endpoint gets Ice's connect timeout: the timer closes the socket, which ends the wait.
    const unsigned attempt = ++attempt_;
    deadline_.expires_after(std::chrono::milliseconds(home_.cfg().backend_connect_timeout_ms));
    deadline_.async_wait([weak = weak_from_this(), attempt](boost::system::error_code ec) {
        auto c = std::static_pointer_cast<backend_connection>(weak.lock());
        if (ec || !c || c->attempt_ != attempt) return;
        boost::system::error_code ignored;
        c->socket_.close(ignored);
        c->attempt_ = 0;  // tells connect_tcp the close was the timeout
    });
    auto [cec, ep] = co_await asio::async_connect(socket_, results, nothrow_awaitable);
    const bool timed_out = attempt_ == 0;
    attempt_ = attempt + 1;  // the timer of this attempt, if still pending, is stale now
    deadline_.cancel();
    if (timed_out) co_return "::Ice::ConnectTimeoutException:\ntimeout while establishing a connection";
    if (cec) co_return cec == asio::error::connection_refused ? std::string(connection_refused_text)
                                                             : connection_lost_text(cec.message());
    co_return std::string();
}

asio::awaitable<void> backend_connection::connect() {
    // The candidates in turn, as Ice tries a proxy's endpoints: the first that accepts is used;
    // requests fail only when none does, with the last one's failure.
    for (std::size_t i = 0;; ++i) {
        endpoint_ = candidates_[i];
        const std::string failure = co_await connect_tcp();
        if (closed()) co_return;
        if (failure.empty()) break;
        if (i + 1 == candidates_.size()) {
            close(close_reason::io_error, failure);
            co_return;
        }
        spdlog::debug("back end {} unreachable, trying the proxy's next endpoint: {}",
                      protocol::endpoint_to_string(endpoint_), failure);
    }
    // TLS, the WebSocket upgrade and the back end's validate connection share one more timeout.
    deadline_.expires_after(std::chrono::milliseconds(home_.cfg().backend_connect_timeout_ms));
    deadline_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        if (ec) return;
        if (auto c = std::static_pointer_cast<backend_connection>(weak.lock()); c && !c->validated())
            c->close(close_reason::io_error, "::Ice::ConnectTimeoutException:\ntimeout while establishing a connection");
    });
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    apply_socket_buffers(socket_, home_.cfg());
    if (secure() || websocket()) {  // still under deadline_: connect, handshakes and validation share it
        const auto failed = co_await client_handshakes(endpoint_);
        if (closed()) co_return;
        if (!failed.why.empty()) {
            close(close_reason::handshake,
                  failed.tls_failed ? "::Ice::SecurityException:\nSSL error occurred for new outgoing connection: " + failed.why
                                    : connection_lost_text("WebSocket upgrade failed: " + failed.why));
            co_return;
        }
    }
    start_loops();  // the first message must be the back end's validate connection
}

bool backend_connection::on_frame(const protocol::frame_view& frame) {
    using protocol::message_type;
    if (!validated()) {
        if (frame.header.type != message_type::validate_connection) {
            close(close_reason::protocol_error, "back end did not validate the connection");
            return false;
        }
        startup_.release_writes();  // validated(): requests queued meanwhile go now
        connect_failed_.clear();
        deadline_.cancel();
        wake_writer();
        return true;
    }
    switch (frame.header.type) {
    case message_type::reply: {
        auto r = protocol::decode_reply(frame.body());
        if (!r) return reject("malformed reply from back end", r.error());
        on_reply(*r);
        return true;
    }
    case message_type::close_connection:
        close(close_reason::peer_closed, "back end closed the connection");
        return false;
    case message_type::validate_connection:
        return true;  // heartbeat
    case message_type::request:
    case message_type::batch_request:
        // Nothing is served on outgoing back-end connections; callbacks use the server endpoints.
        return true;
    }
    return true;
}

void backend_connection::on_reply(const protocol::reply_view& r) {
    auto it = pending_.find(r.request_id);
    if (it == pending_.end()) return;  // unknown request id: ignored, as Ice does
    pending p = std::move(it->second);
    pending_.erase(it);
    if (p.done) {
        p.done(&r, {});
        return;
    }
    if (auto c = p.client.lock()) {
        c->request_settled();
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - p.sent;
        home().metrics().forward_latency.observe(took.count());
        c->relay_reply(p.client_request_id, r, p.compression);
    }
}

std::int32_t backend_connection::next_request_id() noexcept {
    for (;;) {
        const std::int32_t id = next_id_;
        next_id_ = next_id_ == INT32_MAX ? 1 : next_id_ + 1;
        if (!pending_.contains(id)) return id;
    }
}

enqueue_result backend_connection::forward(const protocol::request_view& r, bool keep_context, bool twoway,
                                           const std::shared_ptr<ice_connection>& client,
                                           std::int32_t client_request_id, std::uint8_t compression) {
    protocol::byte_buffer message;
    protocol::write_request_message(message, 0, r, keep_context);
    return forward_message(std::move(message), twoway, client, client_request_id, compression, false);
}

enqueue_result backend_connection::forward_message(protocol::byte_buffer message, bool twoway,
                                                   const std::shared_ptr<ice_connection>& client,
                                                   std::int32_t client_request_id, std::uint8_t compression,
                                                   bool compress) {
    if (closed()) {
        if (twoway && client && client_request_id != 0)
            client->enqueue(reply_unknown_local(client_request_id, failure_));
        return enqueue_result::queued;
    }
    if (twoway) {
        const std::int32_t id = next_request_id();
        std::memcpy(message.data() + protocol::header_size, &id, sizeof id);  // little-endian host
        pending_.emplace(id, pending{client, client_request_id, compression, {}, std::chrono::steady_clock::now()});
        if (client) client->request_forwarded();
    }
    if (compress) protocol::compress_for_peer(message);
    return enqueue(std::move(message));
}

enqueue_result backend_connection::send(outbound_frame f, reply_handler done) {
    if (closed()) {
        if (done) done(nullptr, failure_);
        return enqueue_result::over_limit;
    }
    if (done) {
        const std::int32_t id = next_request_id();
        std::memcpy(f.head.data() + protocol::header_size, &id, sizeof id);  // little-endian host
        pending_.emplace(id, pending{{}, 0, 0, std::move(done), {}});
    }
    return enqueue(std::move(f));
}

void backend_connection::on_drained() {
    for (auto& weak : paused_feeders_)
        if (auto c = weak.lock()) c->on_backend_drained();
    paused_feeders_.clear();
}

void backend_connection::fail_pending(std::string_view why) {
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& [id, p] : pending) {
        if (p.done) {
            p.done(nullptr, why);
            continue;
        }
        if (auto c = p.client.lock()) {
            c->request_settled();
            c->enqueue(reply_unknown_local(p.client_request_id, why));
        }
    }
}

void backend_connection::on_closed(std::string_view why) {
    spdlog::debug("back-end connection {} closed: {}", key_, why);
    deadline_.cancel();
    failure_ = validated() ? connection_lost_text(why) : std::string(why);
    home_.backends().remove(key_, this);
    // First: a request failed below may resolve its proxy again at once, which must not find
    // the answer that led here.
    for (auto& fn : std::exchange(connect_failed_, {})) fn();
    fail_pending(failure_);
    on_drained();  // paused clients must not wait for a queue that will never drain
}

}  // namespace moraine::net
