#include <moraine/router/server_connection.hpp>

#include <moraine/protocol/reply.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/router/callback_relay.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/session_control.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/router/session_router.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/router/trace.hpp>

#include <spdlog/spdlog.h>

namespace moraine::router {

using namespace net;

server_connection::server_connection(session_shard& local, net::transport socket)
    : ice_connection(local.io(), std::move(socket)), local_(local) {}

server_connection::~server_connection() = default;

void server_connection::start() { start_accepted(); }

bool server_connection::on_frame(const protocol::frame_view& frame) {
    using protocol::message_type;
    switch (frame.header.type) {
    case message_type::request:
    case message_type::batch_request:
        return for_each_request(frame, [&](const protocol::request_view& r) {
            route(r);
            return true;
        });
    case message_type::close_connection:
        close(close_reason::peer_closed, "back end closed the connection");
        return false;
    case message_type::reply:               // nothing is ever sent to a back end on this connection
    case message_type::validate_connection: // heartbeat
        return true;
    }
    return true;
}

void server_connection::route(const protocol::request_view& r) {
    const auto& cfg = local_.cfg();
    const bool twoway = r.request_id != 0;
    protocol::byte_buffer message;
    protocol::write_request_message(message, 0, r, cfg.server_forward_context);
    // A oneway's route is never followed (nothing answers it): no reference to this connection,
    // which the shard handling it would otherwise release across cores.
    callback_route back{home_.index(), twoway ? weak_from_this() : std::weak_ptr<ice_connection>(), r.request_id};
    auto& router = local_.router();
    if (is_session_control_category(cfg, r.id.category)) {
        // SessionControl objects are named after the session's category, which names its shard.
        const unsigned owner = router.owner_of(r.id.name);
        queue_for(owner, routed_request{true, twoway, {}, std::move(message), {}, {}, std::move(back)});
        return;
    }
    const forward_options how = decide_forward(twoway, r.context, cfg.server_buffered, cfg.server_always_batch);
    if (cfg.trace.server_request > 0) [[unlikely]]
        trace_request(trace_direction::server, r, how, {});
    if (twoway && !how.is_twoway()) {
        // Forwarded oneway, batched or as a datagram: the back end gets its empty OK at once, as
        // from Glacier2.
        enqueue(reply_void(r.request_id, r.params.encoding));
        back.request_id = 0;
        back.origin.reset();
    }
    if (how.is_datagram()) {
        // The client is reached only over its own stream connection: no datagram gets there.
        spdlog::debug("datagram callback to {} dropped: the client has no udp", r.id.category);
        return;
    }
    std::string key = cfg.server_buffered ? override_key(r.context, r.id, r.facet, how, {}) : std::string();
    const unsigned owner = router.owner_of(r.id.category);
    if (owner == home_.index()) {
        deliver_callback(local_, r.id.category, std::move(message), how, std::move(key), std::move(back));
        return;
    }
    queue_for(owner, routed_request{false, twoway, std::string(r.id.category), std::move(message), how, std::move(key),
                                    std::move(back)});
}

void server_connection::queue_for(unsigned owner, routed_request item) {
    backlog_->add(item.message.size());
    if (outboxes_.empty()) outboxes_.resize(home_.set().size());
    auto& box = outboxes_[owner];
    box.bytes += item.message.size();
    box.items.push_back(std::move(item));
    if (std::exchange(flush_posted_, true)) return;
    // Behind the rest of this epoll batch, as turn_flusher: the whole read goes in one message.
    asio::post(home_.io(), [self = std::static_pointer_cast<server_connection>(shared_from_this())] {
        self->flush_outboxes();
    });
}

void server_connection::flush_outboxes() {
    flush_posted_ = false;
    auto& router = local_.router();
    for (unsigned owner = 0; owner < outboxes_.size(); ++owner) {
        auto& box = outboxes_[owner];
        if (box.items.empty()) continue;
        home_.set().invoke_on(owner, [&router, items = std::move(box.items), bytes = box.bytes, backlog = backlog_,
                                      from = home_.index(), origin = weak_from_this()](shard& s) mutable {
            auto& local = router.local(s.index());
            for (auto& i : items) handle_routed(local, std::move(i));
            if (backlog->handled(bytes, s.cfg().connection_queue_low))
                s.set().invoke_on(from, [origin = std::move(origin)](shard&) {
                    if (auto c = origin.lock()) c->resume_reads();
                });
        });
        box = outbox{};
    }
}

void server_connection::handle_routed(session_shard& owner, routed_request item) {
    if (item.session_control)
        dispatch_session_control(owner, std::move(item.message), item.twoway, std::move(item.back));
    else
        deliver_callback(owner, item.category, std::move(item.message), item.how, std::move(item.override_key),
                         std::move(item.back));
}

bool server_connection::reads_paused() const noexcept {
    // A back end flooding sessions of a slow shard waits, as it would for a slow client.
    return out_.above_high() || backlog_->should_pause(home_.cfg().connection_queue_high);
}

void server_connection::on_closed(std::string_view why) { spdlog::debug("server-endpoint connection closed: {}", why); }

void deliver_callback(session_shard& owner, std::string_view category, protocol::byte_buffer message,
                      const forward_options& how, std::string override_key, callback_route route) {
    if (auto* c = owner.find_session(category)) {
        c->forward_callback(std::move(message), how, std::move(override_key), std::move(route));
        return;
    }
    if (owner.moved().contains(category)) {
        // The session lives in the new process (takeover): relayed there, or held until it is.
        parked_callback c{false, std::move(message), how, std::move(override_key), route, false, false, {}};
        if (route_to_moved(owner, category, c)) return;
        message = std::move(c.message);
    }
    if (route.request_id == 0) return;  // nobody waits for an answer
    auto r = protocol::decode_request(protocol::byte_view(message).subspan(protocol::header_size));
    if (!r) return;
    protocol::byte_buffer reply;
    protocol::write_reply_not_exist(reply, route.request_id, protocol::reply_status::object_not_exist, r->id, r->facet,
                                    r->operation);
    send_callback_reply(owner.io().set(), owner.io().index(), route, std::move(reply));
}

}  // namespace moraine::router
