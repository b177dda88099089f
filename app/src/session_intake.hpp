#pragma once
// moraine-router's new side of a takeover, after the confirmation (docs/takeover.md): the
// sessions, the topic catalog, the topic connections and the topic database the old router hands
// over, taken on a thread of its own.
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/net/takeover_client.hpp>
#include <moraine/net/unique_fd.hpp>
#include <moraine/router/session_router.hpp>

#include <chrono>
#include <optional>
#include <thread>

namespace moraine::app {

/** Adopts the sessions the old router moves, on a thread of its own (each adoption waits for a
    shard), until the old router is done, the channel fails, or this router stops (the destructor
    cancels and joins). */
class session_intake {
public:
    /// `topics` (may be null) holds its intake until the old router's topic service has moved or
    /// stays, and its database, if it keeps one, is open here. @throws std::runtime_error (no pipe).
    session_intake(net::takeover_client channel, router::session_router& glacier2, icestorm_bridge::topic_service* topics,
                   std::chrono::milliseconds idle_limit);
    ~session_intake();
    session_intake(const session_intake&) = delete;
    session_intake& operator=(const session_intake&) = delete;

private:
    void run(router::session_router& glacier2, std::chrono::milliseconds idle_limit);
    /// The old router's topic catalog and connections go to this router's topic service.
    net::takeover_client::topic_receiver topic_receiver();
    /** The topic database the old router held: tried every 200 ms for at most `limit` (none:
        until it opens or this router stops), read if no catalog came. @return true once it is
        open, or failed otherwise than held (logged: the service serves on without it); false if
        still held at `limit` or this router stops. */
    bool await_store(std::optional<std::chrono::milliseconds> limit);

    static constexpr std::size_t adopt_batch = 64;  // sessions adopted at once, at most
    net::takeover_client channel_;
    icestorm_bridge::topic_service* topics_;
    bool catalog_received_ = false;  // the old router's catalog is installed; the intake thread's
    net::unique_fd cancel_read_, cancel_write_;
    std::thread thread_;
};

}  // namespace moraine::app
