#pragma once
// How a service on the runtime reaches servants that live in the sessions of a router on the
// same shards (the topic service's session subscribers), without knowing the router's classes.
#include <moraine/net/write_queue.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstddef>
#include <string_view>

namespace moraine::net {

class shard;

/// What deliver() did with a request for a session's servant.
enum class session_delivery {
    queued,      ///< on the session's client connection
    too_slow,    ///< not queued: the client connection already holds `queue_limit` bytes
    no_session,  ///< no session with that category (any more): the servant is gone for good
};

/// Offered by a session router (Glacier2) to the services beside it. Every call but
/// owner_of is made on the shard that owns the session.
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

    /** On shard `sh`, the owner: sends request `f` (request id 0 at offset 14 of `f.head`) to
        the client of session `category`. A twoway request gets a fresh request id whose reply
        is dropped. A client connection holding `queue_limit` bytes or more is too slow. */
    virtual session_delivery deliver(shard& sh, std::string_view category, outbound_frame f, bool twoway,
                                     std::size_t queue_limit) = 0;
};

}  // namespace moraine::net
