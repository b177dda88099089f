// Requests to indirect proxies (`object@adapter`, well-known `object`): resolved through the
// shard's locator (Ice.Default.Locator) before they leave, and resolved once more when the
// connection to the resolved endpoints cannot be made (docs/glacier2.md §9).
#include <moraine/router/client_connection.hpp>

#include <moraine/protocol/compression.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/locator_resolver.hpp>
#include <moraine/net/shard.hpp>

#include <spdlog/spdlog.h>

namespace moraine::router {

using namespace net;

void client_connection::forward_indirect(const protocol::request_view& r, const protocol::proxy& target,
                                         const forward_options& how, std::uint8_t compression) {
    const bool twoway = r.request_id != 0;
    queued_request q;
    q.message = forwarded_message(r);  // the request view dies with this read: copy it now
    q.how = how;
    q.client_request_id = twoway && how.is_twoway() ? r.request_id : 0;
    q.compression = compression;
    // Batching and overriding need the peer before it is known: the indirect proxy names it.
    const std::string where = "@" + target.adapter_id;
    if (local_.cfg().client_buffered) q.override_key = override_key(r.context, r.id, r.facet, how, where);
    if (how.is_batch()) q.batch_key = target_key(r.id, r.facet, how, where);
    if (!how.secure && pinned_) {
        auto it = pinned_->find(target.id);
        if (it != pinned_->end() && it->second.target->adapter_id == target.adapter_id) {
            if (auto c = it->second.connection.lock(); c && !c->closed()) {
                q.indirect = it->second.target;
                q.backend = std::move(c);
                ++local_.metrics().requests_forwarded;
                send_or_queue(std::move(q));
                return;
            }
        }
    }
    // A copy: the routing-table entry may be evicted while the locator answers.
    q.indirect = std::make_shared<const protocol::proxy>(target);
    auto& resolver = *home_.resolver();
    if (const auto endpoints = resolver.cached(target)) {
        forward_resolved(std::move(q), *endpoints);
        return;
    }
    // Later requests to the same proxy join this resolution and leave after it, in order.
    resolve_and_forward(std::move(q));
}

void client_connection::resolve_and_forward(queued_request q) {
    const protocol::proxy target = *q.indirect;
    ++resolving_;
    home_.resolver()->resolve(target, [weak = weak_from_this(), q = std::move(q)](
                                          const std::vector<protocol::endpoint>* endpoints, std::string_view failure) mutable {
        auto self = std::static_pointer_cast<client_connection>(weak.lock());
        if (!self) return;
        --self->resolving_;
        if (self->closed()) return;
        if (!endpoints) return self->unresolved(q, failure);
        self->forward_resolved(std::move(q), *endpoints);
    });
}

void client_connection::unresolved(const queued_request& q, std::string_view failure) {
    if (q.client_request_id != 0) enqueue(reply_unknown_local(q.client_request_id, failure));
    else spdlog::debug("oneway to {} dropped: {}", protocol::proxy_to_string(*q.indirect), failure);
}

void client_connection::forward_resolved(queued_request q, const std::vector<protocol::endpoint>& endpoints) {
    std::string failure;
    auto backend = home_.backends().get(with_endpoints(*q.indirect, endpoints), failure, q.how.secure);
    if (!backend) return unresolved(q, failure);
    // A connection still being made: should it fail, the locator's answer that chose it is
    // dropped, so the next request (oneways included, which are not retried) asks again.
    auto& pinned_by_id = pinned();
    auto pinned = pinned_by_id.find(q.indirect->id);
    const bool watched = pinned != pinned_by_id.end() && pinned->second.connection.lock() == backend;
    if (!backend->validated() && !watched)
        backend->on_connect_failed([resolver = home_.resolver(), target = q.indirect] {
            if (resolver) resolver->forget(*target);
        });
    if (!q.how.secure) {
        // Bounded like the routing table whose entries it follows; past that, start afresh.
        if (pinned_by_id.size() >= local_.cfg().routing_table_max && !pinned_by_id.contains(q.indirect->id))
            pinned_by_id.clear();
        pinned_by_id.insert_or_assign(q.indirect->id, pinned_connection{q.indirect, backend});
    }
    q.backend = std::move(backend);
    if (!q.resolved_again) ++local_.metrics().requests_forwarded;  // once per request, retried or not
    send_or_queue(std::move(q));
}

void client_connection::send_retriable(queued_request q) {
    auto backend = std::move(q.backend);  // not kept by the handler: the connection holds the handler
    protocol::byte_buffer message = q.message;
    if (q.how.compress) protocol::compress_for_peer(message);
    request_forwarded();
    auto done = [weak = weak_from_this(), conn = std::weak_ptr<backend_connection>(backend), q = std::move(q)](
                    const protocol::reply_view* reply, std::string_view failure) mutable {
        auto self = std::static_pointer_cast<client_connection>(weak.lock());
        if (!self) return;
        self->request_settled();
        if (reply) {
            self->relay_reply(q.client_request_id, *reply, q.compression);
            return;
        }
        auto c = conn.lock();
        auto* resolver = self->home_.resolver();
        // Nothing was sent on a connection that never validated: asking the locator again is
        // safe whatever the operation, and finds a back end that moved (Ice does the same).
        if (self->closed() || !c || c->validated() || !resolver) {
            if (!self->closed()) self->enqueue(reply_unknown_local(q.client_request_id, failure));
            return;
        }
        spdlog::debug("{} unreachable at its resolved endpoints, asking the locator again: {}",
                      protocol::proxy_to_string(*q.indirect), failure);
        resolver->forget(*q.indirect);
        q.resolved_again = true;
        self->resolve_and_forward(std::move(q));
    };
    if (backend->send(outbound_frame{std::move(message), {}}, std::move(done)) == enqueue_result::above_high) {
        pause_for_backend();
        backend->add_paused_feeder(shared());
    }
}

void client_connection::resend_if_connect_fails(const queued_request& q) {
    queued_request copy = q;
    copy.backend.reset();  // the handler lives in that connection: no cycle
    copy.resolved_again = true;
    q.backend->on_connect_failed([weak = weak_from_this(), copy = std::move(copy)]() mutable {
        auto self = std::static_pointer_cast<client_connection>(weak.lock());
        auto* resolver = self ? self->home_.resolver() : nullptr;
        if (!self || self->closed() || !resolver) return;
        resolver->forget(*copy.indirect);
        self->resolve_and_forward(std::move(copy));
    });
}

}  // namespace moraine::router
