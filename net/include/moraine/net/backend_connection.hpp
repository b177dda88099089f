#pragma once
// An outgoing connection from the router to a back end (or verifier, session manager).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/net/ice_connection.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace moraine::net {

class shard;

/// Completion of a router-originated twoway call: `reply` is set on a reply; otherwise
/// `failure` says why the call failed (connection refused, lost...).
using reply_handler = std::function<void(const protocol::reply_view* reply, std::string_view failure)>;

/// One TCP connection to a back end, shared by the sessions of its shard. Connects lazily to the
/// first of its candidate endpoints that accepts (a proxy's endpoints of one transport, in the
/// order backend_pool chose); frames queued while connecting go out once the back end's validate
/// connection arrives.
/// Replies return through its own read loop, so a slow back end never holds up other clients.
class backend_connection final : public ice_connection {
public:
    /// `candidates`: the endpoints to try in turn (at least one, all of one transport kind).
    backend_connection(shard& home, std::vector<protocol::endpoint> candidates, std::string key);
    ~backend_connection() override;

    /// Spawns connect + read/write loops.
    void start();

    /** Forwards a client's request with a fresh request id of this connection (oneway: id 0).
        The context is copied when `keep_context`, else sent empty (Glacier2.Client.ForwardContext).
        For a twoway, the reply goes to `client->relay_reply` under `client_request_id`.
        @return above_high when the caller should pause reading its client until resume_reads(). */
    enqueue_result forward(const protocol::request_view& r, bool keep_context, bool twoway,
                           const std::shared_ptr<ice_connection>& client, std::int32_t client_request_id,
                           std::uint8_t compression);

    /** As forward, for a request already framed: `message` is a whole uncompressed request
        message with request id 0 (a twoway gets its id here). `compress` sends it bzip2-compressed
        when it is large enough (the `_fwd=z` option). A twoway with `client_request_id` 0 is
        sent as a twoway but its reply is dropped (a oneway the client asked to forward twoway). */
    enqueue_result forward_message(protocol::byte_buffer message, bool twoway,
                                   const std::shared_ptr<ice_connection>& client, std::int32_t client_request_id,
                                   std::uint8_t compression, bool compress);

    /// Sends a router-originated twoway request: `message` is a whole request message whose
    /// request id (offset 14) this connection fills in. `done` runs on this shard.
    void invoke(protocol::byte_buffer message, reply_handler done) { send(outbound_frame{std::move(message), {}}, std::move(done)); }

    /** Sends a request frame built by the router (e.g. a topic event): twoway when `done` is set
        (this connection writes the request id at offset 14 of `f.head`; `done` runs on this shard),
        else oneway (id 0 as built). A closed connection fails `done` at once.
        @return the queue's state, for a caller applying its own slow-consumer policy. */
    enqueue_result send(outbound_frame f, reply_handler done);

    /// Registers a connection to wake (on_backend_drained) when this connection's queue falls below its low watermark.
    void add_paused_feeder(std::weak_ptr<ice_connection> c) { paused_feeders_.push_back(std::move(c)); }

    const std::string& key() const noexcept { return key_; }
    /// True once the connection closed without ever being established (connect or validation
    /// failed): nothing queued on it was sent, oneways included.
    bool failed_unconnected() const noexcept { return closed() && !validated(); }
    /// The back end's validate connection arrived: requests may have been written. Until then
    /// nothing was sent, so a request failed on this connection can be sent elsewhere safely.
    /// (A back end holds its writes from construction until then: startup_state.)
    bool validated() const noexcept { return startup_.writes_enabled(); }
    /// Runs `fn` (on this shard) if this connection closes before the back end validated it:
    /// its endpoints did not answer. Used to drop a locator answer that led here. Ignored once
    /// validated or closed.
    void on_connect_failed(std::function<void()> fn) {
        if (!validated() && !closed()) connect_failed_.push_back(std::move(fn));
    }
    /// Twoway requests sent and not yet answered.
    std::size_t in_flight() const noexcept { return pending_.size(); }

private:
    struct pending {
        std::weak_ptr<ice_connection> client;  // forwarded request: relay to this client
        std::int32_t client_request_id = 0;
        std::uint8_t compression = 0;
        reply_handler done;                       // router-originated call
        std::chrono::steady_clock::time_point sent;  // forwarded request: for moraine_forward_latency_seconds
    };

    asio::awaitable<void> connect();
    /// Resolves and connects the TCP socket to endpoint_ within the connect timeout.
    /// @return "" once connected, else Ice's failure text for this endpoint.
    asio::awaitable<std::string> connect_tcp();
    bool on_frame(const protocol::frame_view& frame) override;
    void on_closed(std::string_view why) override;
    bool reads_paused() const noexcept override { return false; }  // replies must always flow
    void on_drained() override;
    void on_reply(const protocol::reply_view& r);
    std::int32_t next_request_id() noexcept;
    void fail_pending(std::string_view why);

    std::vector<protocol::endpoint> candidates_;
    protocol::endpoint endpoint_;  // the candidate being tried, then the one connected
    std::string key_;
    unsigned attempt_ = 0;         // which connect_tcp() call a connect timer belongs to
    std::unordered_map<std::int32_t, pending> pending_;
    std::vector<std::weak_ptr<ice_connection>> paused_feeders_;
    std::int32_t next_id_ = 1;
    asio::steady_timer deadline_;  // connect + validation must finish before it expires
    std::string failure_;  // why the connection failed, for pending requests
    std::vector<std::function<void()>> connect_failed_;  // on_connect_failed, until validated
};

/// The failure text Glacier2 sends (UnknownLocalException) when a back end refuses the connection.
inline constexpr std::string_view connection_refused_text =
    "src/Ice/Network.cpp:2714: ::Ice::ConnectionRefusedException:\nconnection refused: Connection refused";

}  // namespace moraine::net
