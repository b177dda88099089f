// How a session's requests leave: client -> back end and back end -> client, at once or through
// the session's buffered queues (Glacier2.Client/Server.Buffered; docs/glacier2.md §5,
// docs/architecture.md "Buffered mode").
#include <moraine/router/client_connection.hpp>

#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/net/datagram_listener.hpp>
#include <moraine/router/trace.hpp>

#include "pending_batch.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace moraine::router {

using namespace net;

namespace {

/** Queues `e` in a buffered-mode queue; true if it replaced a queued entry (`_ovrd`). With
    `trace`, the replacing request is logged under Glacier2.<Client|Server>.Trace.Override: its
    message is kept aside and decoded again, since the queue takes it (and a request may have come
    back from the locator, its view long gone). */
template <class Entry>
bool add_traced(request_queue<Entry>& queue, Entry e, bool trace, trace_direction d) {
    std::optional<protocol::byte_buffer> traced;
    if (trace) [[unlikely]]
        traced = e.message;
    if (!queue.add(std::move(e))) return false;
    if (traced) [[unlikely]]
        if (auto r = protocol::decode_request(protocol::byte_view(*traced).subspan(protocol::header_size)))
            trace_override(d, *r);
    return true;
}

/// Glacier2 logs `_fwd` letters it does not know and goes on; here once per connection, so a
/// client cannot flood the log.
void warn_unknown_letters(const forward_options& how, bool& warned) {
    if (how.unknown.empty() || warned) return;
    warned = true;
    spdlog::warn("unknown forward option(s) '{}' in _fwd, ignored", how.unknown);
}

/// Batch oneways gathered during one flush toward back ends: one batch message per proxy, as
/// Glacier2 sends them.
class batches {
public:
    void add(const queued_request& q) {
        auto it = std::find_if(open_.begin(), open_.end(),
                               [&](const open_batch& b) { return b.to == q.backend && b.key == q.batch_key; });
        if (it == open_.end()) it = open_.insert(open_.end(), open_batch{q.backend, q.batch_key, pending_batch()});
        if (auto full = it->batch.add(q.message, q.how.compress); !full.empty()) write(*it->to, std::move(full));
    }
    /// Sends the batches for `to`, if any: before a twoway or oneway to it, so order holds.
    void send(const backend_connection* to) {
        for (auto& b : open_)
            if (b.to.get() == to && !b.batch.empty()) write(*b.to, b.batch.finish());
    }
    void send_all() {
        for (auto& b : open_)
            if (!b.batch.empty()) write(*b.to, b.batch.finish());
        open_.clear();
    }

private:
    struct open_batch {
        std::shared_ptr<backend_connection> to;  // owned: a closed connection may have left the pool
        std::string key;
        pending_batch batch;
    };
    static void write(backend_connection& to, protocol::byte_buffer message) {
        to.send(outbound_frame{std::move(message), {}}, {});
    }
    std::vector<open_batch> open_;
};

/// Batch datagrams gathered during one flush: one batch message per proxy, each cut before it
/// would pass a datagram's size (a batch datagram leaves as one datagram, as Ice flushes it).
class datagram_batches {
public:
    using sender = std::function<void(const protocol::proxy&, protocol::byte_buffer)>;
    explicit datagram_batches(sender send) : send_(std::move(send)) {}
    void add(const queued_request& q) {
        auto it = std::find_if(open_.begin(), open_.end(), [&](const open_batch& b) { return b.key == q.batch_key; });
        if (it == open_.end())
            it = open_.insert(open_.end(), open_batch{q.datagram_to, q.batch_key, pending_batch(net::max_datagram_bytes)});
        if (auto full = it->batch.add(q.message, q.how.compress); !full.empty()) send_(*it->to, std::move(full));
    }
    void send_all() {
        for (auto& b : open_)
            if (!b.batch.empty()) send_(*b.to, b.batch.finish());
        open_.clear();
    }

private:
    struct open_batch {
        std::shared_ptr<const protocol::proxy> to;
        std::string key;
        pending_batch batch;
    };
    sender send_;
    std::vector<open_batch> open_;
};

}  // namespace

// -- client -> back end --------------------------------------------------------------------------

void client_connection::forward(const protocol::request_view& r, std::uint8_t compression) {
    const bool twoway = r.request_id != 0;
    const auto& cfg = local_.cfg();
    const protocol::proxy* target = session_->routes.find(r.id);
    if (!target) {
        if (cfg.trace.client_reject > 1) [[unlikely]]
            trace_reject(r, session_->user_id, "no routing-table entry (the client is told to add the proxy)");
        // The Ice client re-adds the proxy and retries when it sees operation ice_add_proxy.
        if (twoway) {
            protocol::byte_buffer out;
            protocol::write_reply_not_exist(out, r.request_id, protocol::reply_status::object_not_exist, r.id, "",
                                            "ice_add_proxy");
            enqueue(std::move(out));
        }
        return;
    }
    if (!session_->filters.accepts_request(r.id, target->adapter_id)) {
        if (cfg.trace.client_reject > 0) [[unlikely]]
            trace_reject(r, session_->user_id, "refused by Glacier2.Filter.Category / Identity / AdapterId");
        if (twoway) {
            protocol::byte_buffer out;
            protocol::write_reply_not_exist(out, r.request_id, protocol::reply_status::object_not_exist, r.id,
                                            r.facet, r.operation);
            enqueue(std::move(out));
        }
        return;
    }
    const forward_options how = decide_forward(twoway, r.context, cfg.client_buffered, cfg.client_always_batch);
    warn_unknown_letters(how, warned_fwd_);
    if (cfg.trace.client_request > 0) [[unlikely]]
        trace_request(trace_direction::client, r, how, session_->user_id);
    if (how.is_datagram()) {
        forward_datagram(r, *target, how);  // answers a twoway itself: it may fail first
        return;
    }
    // A twoway forwarded as oneway or batch is answered at once, with an empty OK.
    if (twoway && !how.is_twoway()) enqueue(reply_void(r.request_id, r.params.encoding));
    // An indirect proxy (object@adapter, well-known object) first goes through the locator
    // (client_indirect.cpp); without one configured it has no endpoint, as in Ice.
    if (target->endpoints.empty() && home_.resolver()) {
        forward_indirect(r, *target, how, compression);
        return;
    }
    std::string failure;
    auto backend = home_.backends().get(*target, failure, how.secure);
    if (!backend) {
        if (twoway && how.is_twoway()) enqueue(reply_unknown_local(r.request_id, failure));
        else spdlog::debug("oneway to {} dropped: {}", protocol::proxy_to_string(*target), failure);
        return;
    }
    queued_request q;
    q.message = forwarded_message(r);
    q.how = how;
    q.client_request_id = twoway && how.is_twoway() ? r.request_id : 0;
    q.compression = compression;
    if (cfg.client_buffered) q.override_key = override_key(r.context, r.id, r.facet, how, backend->key());
    if (how.is_batch()) q.batch_key = target_key(r.id, r.facet, how, backend->key());
    q.backend = std::move(backend);
    ++local_.metrics().requests_forwarded;
    send_or_queue(std::move(q));
}

protocol::byte_buffer client_connection::forwarded_message(const protocol::request_view& r) {
    const auto& cfg = local_.cfg();
    protocol::byte_buffer message;
    // Glacier2.AddConnectionContext=1: the back end learns about the client's connection (1 and 2
    // both add the entries to createSession*'s verifier and session manager calls: session_factory.cpp).
    if (cfg.add_connection_context == 1)
        protocol::write_request_message(message, 0, r, cfg.client_forward_context, connection_context());
    else
        protocol::write_request_message(message, 0, r, cfg.client_forward_context);
    return message;
}

void client_connection::send_or_queue(queued_request q) {
    const auto& cfg = local_.cfg();
    if (!cfg.client_buffered) {
        send_request(std::move(q));
        return;
    }
    auto& b = buffered();
    if (add_traced(b.requests, std::move(q), cfg.trace.client_override > 0, trace_direction::client))
        ++local_.metrics().requests_overridden;
    // A full queue leaves at once, hold or not; small ones wait for the end of the turn.
    if (b.requests.bytes() >= home_.cfg().connection_queue_high) flush_requests();
    else schedule_flush(b.request_timing, &client_connection::flush_requests);
}

void client_connection::send_request(queued_request q) {
    // A twoway to a resolved indirect proxy whose connection is still being made keeps a way
    // back to the locator, should the connection fail (client_indirect.cpp).
    if (q.indirect && !q.resolved_again && !q.backend->validated()) {
        if (q.client_request_id != 0) {
            send_retriable(std::move(q));
            return;
        }
        resend_if_connect_fails(q);
    }
    auto& backend = *q.backend;
    const auto result = backend.forward_message(std::move(q.message), q.how.is_twoway(), shared(),
                                                q.client_request_id, q.compression, q.how.compress);
    if (result == enqueue_result::above_high) {
        pause_for_backend();
        backend.add_paused_feeder(shared());
    }
}

void client_connection::flush_requests() {
    if (!buffered_ || buffered_->requests.empty()) return;
    auto& b = *buffered_;
    batches pending;
    // Nobody waits for these any more: a failure is only counted and logged.
    auto datagram = [this](const protocol::proxy& to, protocol::byte_buffer message, bool compress) {
        if (auto failure = send_datagram(to, std::move(message), compress); !failure.empty()) datagram_lost(to, failure);
    };
    datagram_batches datagrams([&datagram](const protocol::proxy& to, protocol::byte_buffer message) {
        datagram(to, std::move(message), false);  // a batch is compressed as it is finished
    });
    while (!b.requests.empty()) {
        queued_request q = b.requests.pop();
        if (q.datagram_to) {
            if (q.how.is_batch()) datagrams.add(q);
            else datagram(*q.datagram_to, std::move(q.message), q.how.compress);
            continue;
        }
        if (q.how.is_batch()) {
            pending.add(q);
            continue;
        }
        pending.send(q.backend.get());
        send_request(std::move(q));
    }
    pending.send_all();
    datagrams.send_all();
    if (!closed()) start_hold(b.request_timing, &client_connection::flush_requests);
}

// -- back end -> client ---------------------------------------------------------------------------

void client_connection::forward_callback(protocol::byte_buffer message, const forward_options& how,
                                         std::string key, callback_route route) {
    if (closed()) return;
    warn_unknown_letters(how, warned_fwd_);
    // The callback proxy is bound to this connection: `s` asks for TLS it may not have.
    if (how.secure && !secure()) {
        if (route.request_id != 0)
            send_callback_reply(home_.set(), home_.index(), route,
                                reply_unknown_local(route.request_id,
                                                    "::Ice::NoEndpointException:\nno suitable endpoint available "
                                                    "for a secure callback on a non-secure client connection"));
        return;
    }
    ++local_.metrics().callbacks_forwarded;
    queued_callback q{std::move(message), how, std::move(route), std::move(key)};
    if (!local_.cfg().server_buffered) {
        send_callback(std::move(q));
        return;
    }
    auto& b = buffered();
    if (add_traced(b.callbacks, std::move(q), local_.cfg().trace.server_override > 0, trace_direction::server))
        ++local_.metrics().callbacks_overridden;
    if (b.callbacks.bytes() > home_.cfg().connection_queue_max) {
        ++home_.metrics().slow_consumers_closed;
        close(close_reason::slow_consumer, "slow consumer: buffered callbacks over the queue limit");
        return;
    }
    if (b.callbacks.bytes() >= home_.cfg().connection_queue_high) flush_callbacks();
    else schedule_flush(b.callback_timing, &client_connection::flush_callbacks);
}

void client_connection::send_callback(queued_callback q) {
    if (q.how.is_twoway()) {
        const std::int32_t id = calls_.next_id();
        calls_.add_callback(id, std::move(q.route));
        std::memcpy(q.message.data() + protocol::header_size, &id, sizeof id);  // little-endian host
    }
    if (q.how.compress) protocol::compress_for_peer(q.message);
    enqueue(std::move(q.message));
}

void client_connection::flush_callbacks() {
    // While the client has not taken what was sent, keep the rest here, where newer callbacks
    // can still override it; on_written() flushes again (Glacier2's slow-client rule).
    if (closed() || !buffered_ || buffered_->callbacks.empty() || write_backlogged()) return;
    auto& b = *buffered_;
    pending_batch batch;  // toward a client: one batch for the connection, whatever the identity
    while (!b.callbacks.empty() && !write_backlogged() && !closed()) {
        queued_callback q = b.callbacks.pop();
        if (q.how.is_batch()) {
            if (auto full = batch.add(q.message, q.how.compress); !full.empty()) enqueue(std::move(full));
            continue;
        }
        if (!batch.empty()) enqueue(batch.finish());
        send_callback(std::move(q));
    }
    if (!batch.empty()) enqueue(batch.finish());
    if (!closed()) start_hold(b.callback_timing, &client_connection::flush_callbacks);
}

void client_connection::on_written() {
    if (buffered_ && !buffered_->callback_timing.holding && !buffered_->callbacks.empty())
        schedule_flush(buffered_->callback_timing, &client_connection::flush_callbacks);
}

void client_connection::fail_queued_callbacks() noexcept {
    if (!buffered_) return;
    while (!buffered_->callbacks.empty()) {
        queued_callback q = buffered_->callbacks.pop();
        if (q.how.is_twoway()) fail_callback(q.route);
    }
}

// -- flush timing --------------------------------------------------------------------------------

client_connection::buffered_queues& client_connection::buffered() {
    if (!buffered_) buffered_ = std::make_unique<buffered_queues>(request_hold_ms_, callback_hold_ms_);
    return *buffered_;
}

void client_connection::schedule_flush(flush_timing& timing, void (client_connection::*flush)()) {
    if (timing.posted || timing.holding) return;
    timing.posted = true;
    // Posted, so that every request of the messages read in this turn joins the same flush.
    asio::post(home_.executor(), [weak = weak_from_this(), &timing, flush] {
        auto self = std::static_pointer_cast<client_connection>(weak.lock());
        if (!self) return;
        timing.posted = false;
        ((*self).*flush)();
    });
}

void client_connection::start_hold(flush_timing& timing, void (client_connection::*flush)()) {
    if (timing.hold.count() <= 0 || timing.holding) return;
    timing.holding = true;
    if (!timing.timer) timing.timer = std::make_unique<asio::steady_timer>(home_.executor());
    timing.timer->expires_after(timing.hold);
    timing.timer->async_wait([weak = weak_from_this(), &timing, flush](boost::system::error_code ec) {
        auto self = std::static_pointer_cast<client_connection>(weak.lock());
        if (!self) return;
        timing.holding = false;
        if (ec || self->closed()) return;
        ((*self).*flush)();
    });
}

}  // namespace moraine::router
