#pragma once
// A back end's connection to Glacier2.Server.Endpoints: callbacks into sessions (docs/glacier2.md §6).
#include <moraine/protocol/request.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/net/cross_shard_backlog.hpp>
#include <moraine/net/ice_connection.hpp>
#include <moraine/router/forward_options.hpp>

#include <memory>

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
    void route(const protocol::request_view& r);
    /// Runs `fn(owner shard's session_shard)` on shard `owner`, counted in backlog_ until it ran.
    template <class Fn>
    void post_to(unsigned owner, std::size_t bytes, Fn fn);

    session_shard& local_;
    // Callbacks posted to the shards owning their sessions and not yet handled there.
    std::shared_ptr<net::cross_shard_backlog> backlog_ = std::make_shared<net::cross_shard_backlog>();
};

/** On the shard owning `category`: hands a callback to the session's client connection
    (client_connection::forward_callback: `how`, `override_key`), or answers ObjectNotExist along
    `route` when no such session exists (any more) and route.request_id is not 0. */
void deliver_callback(session_shard& owner, std::string_view category, protocol::byte_buffer message,
                      const forward_options& how, std::string override_key, net::callback_route route);

}  // namespace moraine::router
