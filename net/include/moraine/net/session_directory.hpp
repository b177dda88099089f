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

    /// Told on the session's shard (`sh`) that a service beside the router keeps state for the
    /// session `category` in this process: a topic subscription of one of its servants. Such a
    /// session stays in this process in a takeover, where the state would be missing
    /// (docs/takeover.md). Nothing happens if no such session lives on `sh`.
    virtual void note_subscription(shard& sh, std::string_view category) = 0;

    /// True if session `category` lives on `sh` in this process (it has not moved away).
    /// Called on `sh`.
    virtual bool session_here(shard& sh, std::string_view category) const = 0;

    /// True if requests to session servants keep their context (Glacier2.Server.ForwardContext).
    virtual bool forwards_context() const noexcept = 0;

    /// What deliver() remembers between calls for one caller (a topic subscriber): the
    /// connection found last time and which of its sessions it held then.
    struct session_cache {
        std::weak_ptr<ice_connection> connection;
        std::uint64_t serial = 0;  ///< the directory's number for that session on that connection
    };

    /// Told the client's reply to a delivered twoway request, or nullptr when the connection
    /// closed first. Runs on the session's shard, never inside deliver().
    using reply_done = std::function<void(const protocol::reply_view* reply)>;

    /// Builds one delivery's frame, called only when the frame will be queued (a subscriber
    /// whose queue is full costs no allocation). Refers to a callable that outlives the call.
    class frame_source {
    public:
        template <class Fn>
        explicit frame_source(Fn& fn) noexcept
            : fn_(&fn), make_([](void* f) { return (*static_cast<Fn*>(f))(); }) {}
        outbound_frame operator()() const { return make_(fn_); }

    private:
        void* fn_;
        outbound_frame (*make_)(void*);
    };

    /// What deliver() did.
    enum class delivery {
        queued,       ///< on the session's client connection
        no_session,   ///< no such session (any more): for IceStorm, ObjectNotExist
        queue_full,   ///< the connection's queue holds queue_limit bytes or more: missed, nothing built
        over_limit,   ///< queueing passed the connection's hard limit: it was closed
    };

    /** On shard `sh`, the owner of session `category`: one call per subscriber per event. Finds
        the session's client connection (from `cache` while that connection is open and holds the
        session it held when cached, else by `category`, cached again: one hash lookup per
        subscriber rather than per event), checks its queue against `queue_limit` bytes, then
        builds the frame with `frame` (request id 0 at offset 14 of its head) and queues it. A
        twoway request gets a fresh request id; its reply goes to `done` when set, else it is
        dropped; `done` is called only for a queued twoway. */
    virtual delivery deliver(shard& sh, std::string_view category, session_cache& cache, std::size_t queue_limit,
                             frame_source frame, bool twoway, reply_done done) = 0;
};

}  // namespace moraine::net
