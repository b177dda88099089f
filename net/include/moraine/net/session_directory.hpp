#pragma once
// How a service on the runtime reaches servants that live in the sessions of a router on the
// same shards (the topic service's session subscribers), without knowing the router's classes.
#include <moraine/net/write_queue.hpp>
#include <moraine/protocol/proxy.hpp>

#include <moraine/protocol/reply.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace moraine::net {

class ice_connection;
class shard;

/// Offered by a session router (Glacier2) to the services beside it. Every call but
/// owner_of and hosts are made on the shard that owns the session.
class session_directory {
public:
    virtual ~session_directory() = default;

    /// True if `p` designates a servant in a session of this router: its endpoints are the
    /// router's (published) server endpoints, so requests to it go down the session's client connection.
    virtual bool hosts(const protocol::proxy& p) const = 0;

    /// The shard that owns the session whose category is `category` (any thread).
    virtual unsigned owner_of(std::string_view category) const noexcept = 0;

    /// True if requests to session servants keep their context (Glacier2.Server.ForwardContext).
    virtual bool forwards_context() const noexcept = 0;

    /// What session_connection remembers between calls for one caller (a topic subscriber): the
    /// connection found last time and which of its sessions it held then.
    struct session_cache {
        std::weak_ptr<ice_connection> connection;
        std::uint64_t serial = 0;  ///< the directory's number for that session on that connection
    };

    /** On shard `sh`, the owner: the client connection of session `category`, or nullptr when
        there is no such session (any more). Answered from `cache` while its connection is open
        and holds the session it held when cached, else looked up by `category` and cached
        again: one lookup (a hash of the category) per subscriber rather than per event. The
        caller may read the connection (queued_bytes) and pass it to deliver(), on this shard,
        before its next co_await. */
    virtual ice_connection* session_connection(shard& sh, std::string_view category, session_cache& cache) noexcept = 0;

    /// Told the client's reply to a delivered twoway request, or nullptr when the connection
    /// closed first. Runs on the session's shard, never inside deliver().
    using reply_done = std::function<void(const protocol::reply_view* reply)>;

    /** Sends request `f` (request id 0 at offset 14 of `f.head`) to `client`, a connection
        session_connection() returned. A twoway request gets a fresh request id; its reply goes
        to `done` when set, else it is dropped. @return the queue's state; over_limit closes the
        connection and `done` is never called (the caller counts the failure itself). */
    virtual enqueue_result deliver(ice_connection& client, outbound_frame f, bool twoway, reply_done done) = 0;
};

}  // namespace moraine::net
