#include <moraine/router/datagram_callback.hpp>

#include <moraine/protocol/request.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/router/server_connection.hpp>
#include <moraine/router/session_control.hpp>
#include <moraine/router/session_router.hpp>
#include <moraine/router/trace.hpp>

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

namespace moraine::router {

namespace {

/// Runs `fn(session_shard&)` on shard `owner`: at once when it is `sh`, else as one post.
/// Datagrams are not gathered per loop turn as a server connection's callbacks are: the
/// receiver reads one datagram per completion, so there is no turn's worth to gather.
template <class Fn>
void on_owner(session_router& router, net::shard& sh, unsigned owner, Fn fn) {
    if (owner == sh.index()) {
        fn(router.local(owner));
        return;
    }
    sh.set().invoke_on(owner, [&router, fn = std::move(fn)](net::shard& s) mutable { fn(router.local(s.index())); });
}

}  // namespace

void route_datagram_callback(session_router& router, net::shard& sh, const protocol::request_view& r) {
    auto& local = router.local(sh.index());
    const auto& cfg = local.cfg();
    ++local.metrics().datagram_callbacks;
    protocol::byte_buffer message;
    protocol::write_request_message(message, 0, r, cfg.server_forward_context);
    // No origin: a oneway's route is never followed.
    const net::callback_route nowhere{sh.index(), {}, 0};
    if (is_session_control_category(cfg, r.id.category)) {
        // SessionControl objects are named after the session's category, which names its shard.
        on_owner(router, sh, router.owner_of(r.id.name), [message = std::move(message), nowhere](session_shard& s) mutable {
            dispatch_session_control(s, std::move(message), false, nowhere);
        });
        return;
    }
    const forward_options how = decide_forward(false, r.context, cfg.server_buffered, cfg.server_always_batch);
    if (cfg.trace.server_request > 0) [[unlikely]]
        trace_request(trace_direction::server, r, how, {});
    if (how.is_datagram()) {
        // The client is reached only over its own stream connection: no datagram gets there
        // (server_connection::route says the same for a callback that came over tcp).
        spdlog::debug("datagram callback to {} with _fwd=d/D lost: the client has no udp", r.id.category);
        return;
    }
    std::string key = cfg.server_buffered ? override_key(r.context, r.id, r.facet, how, {}) : std::string();
    on_owner(router, sh, router.owner_of(r.id.category),
             [category = std::string(r.id.category), message = std::move(message), how, key = std::move(key),
              nowhere](session_shard& s) mutable {
                 deliver_callback(s, category, std::move(message), how, std::move(key), nowhere);
             });
}

}  // namespace moraine::router
