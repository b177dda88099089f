#pragma once
// Takeover, old side: back ends' requests for sessions that moved to the new process go there
// through this process, on the connection they came in on (docs/takeover.md "Back ends").
#include <moraine/protocol/endpoint.hpp>
#include <moraine/router/moved_sessions.hpp>

#include <string_view>
#include <vector>

namespace moraine::router {

class session_shard;

/** The endpoints this process reaches its own server endpoints through, for relaying to the
    process that holds them after a takeover: the stream endpoints of `bound` (tcp first, then ws,
    then ssl and wss), a wildcard host ("", "*", 0.0.0.0, ::) made loopback. */
std::vector<protocol::endpoint> relay_endpoints(const std::vector<protocol::endpoint>& bound);

/** Sends `c` (a callback or a SessionControl call for a session the new process took) to the new
    process's server endpoint (session_router::relay_target), from `owner`'s back-end pool; a
    twoway's reply (or an UnknownLocalException with the failure text, if the new process
    cannot be reached) goes back along c.back under its request id. */
void relay_callback(session_shard& owner, parked_callback c);

/** A request from a back end for `category`, which left `owner` for a new process: relayed
    there if the new process took it, else parked until it answers (moved_sessions). @return
    false when neither is possible (too many parked), with `c` untouched (its message where
    it was, so views into it stay valid): the caller answers it as for a session that does
    not exist. */
bool route_to_moved(session_shard& owner, std::string_view category, parked_callback& c);

/** A topic event parked for `category`, whose session came back (the new process refused it):
    queued on its client connection here; if it is gone, a twoway event's reply is nullptr. */
void deliver_event_here(session_shard& owner, std::string_view category, parked_callback c);

/** The new process answered for session `category`, in transit: its parked requests are
    relayed there (`taken`) or delivered here, to the session that came back. On `owner`'s shard. */
void release_parked(session_shard& owner, std::string_view category, std::vector<parked_callback> parked, bool taken);

}  // namespace moraine::router
