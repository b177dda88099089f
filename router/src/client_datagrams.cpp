// A session's `_fwd=d` / `_fwd=D` requests: to the back end's udp endpoint, one datagram each or
// one batch datagram per proxy and flush (docs/glacier2.md "udp").
#include <moraine/router/client_connection.hpp>

#include <moraine/protocol/compression.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/datagram_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/shard.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

namespace moraine::router {

namespace {

/// The udp endpoint a datagram to `p` goes to: its first, as Ice picks it for a datagram proxy
/// (datagram_pool::send). Null for a proxy without one, an indirect proxy included.
const protocol::endpoint* first_udp(const protocol::proxy& p) noexcept {
    for (const auto& e : p.endpoints)
        if (e.is_udp()) return &e;
    return nullptr;
}

/// Names the destination in target_key and override_key, as backend_connection::key names a
/// stream peer: batches and overrides never mix a datagram with a stream request.
std::string datagram_peer(const protocol::endpoint& e) { return "udp " + e.host + ":" + std::to_string(e.port); }

/// `p` as Glacier2 invokes it for `_fwd=d`: its exception texts name the proxy with `-d`.
protocol::proxy as_datagram(protocol::proxy p) {
    p.mode = static_cast<std::uint8_t>(protocol::proxy_mode::datagram);
    return p;
}

}  // namespace

void client_connection::forward_datagram(const protocol::request_view& r, const protocol::proxy& target,
                                         const forward_options& how) {
    const auto& cfg = local_.cfg();
    if (!cfg.client_buffered) {
        // glacier2router answers a twoway sent as a datagram once the datagram is handed over,
        // or with the failure (observed: NoEndpointException for a back end without udp).
        auto failure = !first_udp(target)
                           ? net::no_endpoint_text(as_datagram(target))
                           : send_datagram(target, forwarded_message(r), how.compress);
        if (r.request_id != 0)
            enqueue(failure.empty() ? net::reply_void(r.request_id, r.params.encoding)
                                    : net::reply_unknown_local(r.request_id, failure));
        if (!failure.empty()) datagram_lost(target, failure);
        else ++local_.metrics().requests_forwarded;
        return;
    }
    // Buffered: a twoway is answered OK at once, before anything is tried (observed, even for a
    // back end without udp); the request joins the session's queue, so SleepTime, batching
    // (`D`) and `_ovrd` apply to datagrams as in glacier2router's request queue.
    if (r.request_id != 0) enqueue(net::reply_void(r.request_id, r.params.encoding));
    const auto* udp = first_udp(target);
    if (!udp) return datagram_lost(target, net::no_endpoint_text(as_datagram(target)));
    ++local_.metrics().requests_forwarded;
    queued_request q;
    q.message = forwarded_message(r);
    q.how = how;
    q.datagram_to = std::make_shared<const protocol::proxy>(target);
    const std::string where = datagram_peer(*udp);
    q.override_key = override_key(r.context, r.id, r.facet, how, where);
    if (how.is_batch()) q.batch_key = target_key(r.id, r.facet, how, where);
    send_or_queue(std::move(q));
}

std::string client_connection::send_datagram(const protocol::proxy& target, protocol::byte_buffer message,
                                             bool compress) {
    if (compress) protocol::compress_for_peer(message);
    std::string failure;
    home_.datagrams().send(target, message, failure);
    return failure;
}

void client_connection::datagram_lost(const protocol::proxy& target, std::string_view why) {
    ++local_.metrics().datagram_requests_lost;
    // glacier2router loses such a request without a word to the client (the twoway was already
    // answered OK); the log says it once per connection, the counter every time.
    if (std::exchange(warned_datagram_, true)) return;
    std::string line(why);
    std::replace(line.begin(), line.end(), '\n', ' ');  // Ice's texts are two lines: the log wants one
    spdlog::warn("datagram request (_fwd=d/D) to {} lost: {}", protocol::proxy_to_string(target), line);
}

}  // namespace moraine::router
