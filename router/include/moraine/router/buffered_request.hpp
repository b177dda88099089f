#pragma once
// What a session's buffered queues hold, one type per direction (docs/architecture.md,
// "Buffered mode").
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/asio.hpp>
#include <moraine/net/backend_connection.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/router/forward_options.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace moraine::router {

/// A client's request on its way to a back end (Glacier2.Client.Buffered).
struct queued_request {
    protocol::byte_buffer message;                     ///< whole uncompressed request message, request id 0
    std::shared_ptr<net::backend_connection> backend;  ///< chosen when it arrived; null for a datagram
    /// For a datagram or batch datagram (`_fwd=d`, `D`): the proxy whose udp endpoint it goes
    /// to, copied (the routing table may evict it before the flush); null otherwise.
    std::shared_ptr<const protocol::proxy> datagram_to;
    forward_options how;
    std::int32_t client_request_id = 0;  ///< for a twoway: the client's id; 0 = the reply is dropped
    std::uint8_t compression = 0;        ///< the client request's compression byte (may the reply be compressed)
    std::string override_key;            ///< `_ovrd` value + target; empty = none
    std::string batch_key;               ///< for a batch oneway: its target_key (one batch message per proxy)
    /// The indirect proxy (adapter id or well-known) the locator resolved for this request; null for a direct one.
    std::shared_ptr<const protocol::proxy> indirect;
    bool resolved_again = false;  ///< the locator was asked again after a failed connection: no second retry
    std::size_t size() const noexcept { return message.size(); }
};

/// A back end's callback on its way to the client (Glacier2.Server.Buffered).
struct queued_callback {
    protocol::byte_buffer message;  ///< whole uncompressed request message, request id 0
    forward_options how;
    net::callback_route route;      ///< for a twoway: where the reply goes (request_id 0 = dropped)
    std::string override_key;       ///< `_ovrd` value + target; empty = none
    std::size_t size() const noexcept { return message.size(); }
};

/** When one direction's queue is flushed: at the end of the loop turn in which a request
    reached the idle queue, then at most once per `hold` (Glacier2.*.SleepTime): requests that
    arrive meanwhile wait, batch and override one another. */
struct flush_timing {
    explicit flush_timing(int hold_ms) : hold(hold_ms) {}
    /// Made by the first hold: a session that never buffers (the default) keeps no timer.
    std::unique_ptr<net::asio::steady_timer> timer;
    /// Ends a running hold (its flush does not run); nothing without a timer.
    void cancel() noexcept {
        if (timer) timer->cancel();
    }
    std::chrono::milliseconds hold;
    bool posted = false;   ///< a flush is posted to the end of this loop turn
    bool holding = false;  ///< the hold after the last flush is running
};

}  // namespace moraine::router
