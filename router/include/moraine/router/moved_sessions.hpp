#pragma once
// Takeover, old side: the sessions a shard handed over to a new process, and the callbacks that
// arrive for them meanwhile (docs/takeover.md "Back ends").
#include <moraine/net/callback_route.hpp>
#include <moraine/net/session_directory.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/router/forward_options.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace moraine::router {

/// A request for a session in transit, held until the new process answers: from a back end,
/// or an event of the topic service beside the router.
struct parked_callback {
    bool session_control = false;  ///< a SessionControl call (dispatch_session_control), else a callback
    protocol::byte_buffer message;  ///< the whole request message, request id 0
    forward_options how;           ///< callbacks: how it is forwarded
    std::string override_key;      ///< callbacks: `_ovrd` key in buffered mode, or empty
    net::callback_route back;      ///< where the reply goes (request_id 0: a oneway)
    /// A topic event (session_router::deliver) rather than a back end's request: `back` is unused;
    /// a twoway one's reply goes to `event_reply`, with nullptr if it cannot be delivered.
    bool topic_event = false;
    bool twoway = false;  ///< topic events: a twoway request
    net::session_directory::reply_done event_reply;
};

/** One shard's sessions that left for a new process. A session is **in transit** from the
    moment its connection is handed over until the new process answers (at most the takeover's
    answer timeout, 10 s): a callback for it cannot go anywhere yet, since the new process may
    not have adopted it, so it is parked here (at most `max_parked` per session). Once the new
    process **took** it, its callbacks are relayed there; if the new process refused it, it
    **came back** and its parked callbacks are delivered here. Shard-local, no locking. */
class moved_sessions {
public:
    /// Callbacks held per session in transit; more are answered ObjectNotExist by the caller.
    static constexpr std::size_t max_parked = 64;

    /// Session `category` was handed over: in transit from now on.
    void leave(const std::string& category);
    /// Whether `category` left (in transit or taken).
    bool contains(std::string_view category) const;
    /// Whether the new process took `category` (its callbacks go there).
    bool taken(std::string_view category) const;
    /** Holds `c` for a session in transit. @return false (and `c` untouched) when `category`
        is not in transit or already holds max_parked callbacks. */
    bool park(std::string_view category, parked_callback& c);
    /// The new process took `category`: @return its parked callbacks, in arrival order, to relay.
    std::vector<parked_callback> take(std::string_view category);
    /// The new process refused `category`, which is served here again: @return its parked
    /// callbacks, in arrival order, to deliver here. The session is forgotten.
    std::vector<parked_callback> come_back(std::string_view category);

    /// Callbacks parked now, over every session (for tests and logs).
    std::size_t parked() const noexcept { return parked_; }

private:
    struct entry {
        bool taken = false;
        std::vector<parked_callback> parked;
    };
    std::unordered_map<std::string, entry> sessions_;
    std::size_t parked_ = 0;
};

}  // namespace moraine::router
