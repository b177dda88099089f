#pragma once
// A back end's connection to Glacier2.Server.Endpoints: callbacks into sessions (docs/glacier2.md §6).
#include <moraine/protocol/request.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/net/cross_shard_backlog.hpp>
#include <moraine/net/ice_connection.hpp>
#include <moraine/router/forward_options.hpp>

#include <memory>
#include <string>
#include <vector>

namespace moraine::router {

class session_shard;

/// Accepted on a server endpoint. A request whose identity category is a session's category
/// goes to that session's client connection, on whichever shard owns it; the reply comes back here.
class server_connection final : public net::ice_connection {
public:
    server_connection(session_shard& local, net::transport socket);
    ~server_connection() override;

    /// Sends validate connection and starts the loops.
    void start();

private:
    bool on_frame(const protocol::frame_view& frame) override;
    void on_closed(std::string_view why) override;
    bool reads_paused() const noexcept override;
    /// Back ends (IceStorm delivering events, servers calling back) can outrun the clients:
    /// reading stops while the memory budget is spent.
    bool holds_for_budget() const noexcept override { return true; }
    void route(const protocol::request_view& r);
    /// A request for a session on another shard (a callback or a SessionControl call), waiting
    /// in an outbox for the end of this loop turn.
    struct routed_request {
        bool session_control = false;  ///< SessionControl (dispatch_session_control), else a callback
        bool twoway = false;
        std::string category;          ///< callbacks: the session's category
        protocol::byte_buffer message;  ///< the whole request message, request id 0
        forward_options how;           ///< callbacks: how it is forwarded
        std::string override_key;      ///< callbacks: `_ovrd` key in buffered mode, or empty
        net::callback_route back;      ///< where the reply goes (no origin for a oneway)
    };
    /// One shard's share of this turn's routed requests.
    struct outbox {
        std::vector<routed_request> items;
        std::size_t bytes = 0;
    };
    /** Routes `item` to shard `owner`, counted in backlog_ until handled there. What one turn
        routes to a shard (the callbacks of one read: an IceStorm fan-out is thousands) goes
        there as one message at the turn's end, not one each: one post, one allocation and
        one round of cross-core reference counting per batch. Order per shard is kept. */
    void queue_for(unsigned owner, routed_request item);
    void flush_outboxes();
    /// On the owner's shard: runs one routed request.
    static void handle_routed(session_shard& owner, routed_request item);

    session_shard& local_;
    // Callbacks posted to the shards owning their sessions and not yet handled there.
    std::shared_ptr<net::cross_shard_backlog> backlog_ = std::make_shared<net::cross_shard_backlog>();
    std::vector<outbox> outboxes_;  // by shard index; sized on first use
    bool flush_posted_ = false;     // flush_outboxes is posted for this turn
};

/** On the shard owning `category`: hands a callback to the session's client connection
    (client_connection::forward_callback: `how`, `override_key`), or answers ObjectNotExist along
    `route` when no such session exists (any more) and route.request_id is not 0. */
void deliver_callback(session_shard& owner, std::string_view category, protocol::byte_buffer message,
                      const forward_options& how, std::string override_key, net::callback_route route);

}  // namespace moraine::router
