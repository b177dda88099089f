#pragma once
// A published event, shared by every shard and subscriber it reaches (docs/icestorm.md §4).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/net/write_queue.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace moraine::icestorm_bridge {

/// One event: what a publisher sent to `<topic>.publish`, minus the target. Immutable once made;
/// one instance serves every subscriber (only the small per-subscriber head is built per delivery).
struct event {
    std::string topic;
    std::string operation;
    std::uint8_t mode = 0;
    /// Operation string, mode byte and encoded context: the request bytes between the facet and
    /// the params, the same for every subscriber (IceStorm forwards the publisher's context).
    protocol::byte_buffer suffix;
    /// The same with an empty context: what a session subscriber gets unless the router forwards
    /// contexts on its server side (Glacier2.Server.ForwardContext), as glacier2router + IceStorm do.
    protocol::byte_buffer suffix_without_context;
    protocol::byte_buffer context;  ///< the encoded context alone (for TopicLink::forward)
    /// The whole params encapsulation, forwarded byte for byte.
    std::shared_ptr<const protocol::byte_buffer> params;
    int cost = 0;                   ///< the context's "cost" entry (integer, default 0): link filter
    std::string only_subscriber;    ///< non-empty: a per-subscriber publisher; deliver to that identity only
    bool from_link = false;         ///< arrived through TopicLink::forward: not forwarded over links again
    /// Bytes this event holds (its struct, strings and buffers): what a post of it to another
    /// shard counts against the memory budget.
    std::size_t memory_bytes() const noexcept {
        return sizeof(event) + topic.size() + operation.size() + suffix.size() + suffix_without_context.size() +
               context.size() + (params ? params->size() : 0) + only_subscriber.size();
    }
};
using event_ptr = std::shared_ptr<const event>;

/// The context's "cost" entry as an integer; 0 when absent or not a number (docs/icestorm.md §6).
int event_cost(const protocol::context_view& ctx) noexcept;

/// Makes the event a publisher's request `r` carries for topic `topic`.
std::shared_ptr<event> make_event(std::string topic, const protocol::request_view& r);

/// Makes an event from the fields of an IceStorm::EventData (TopicLink::forward).
/// `params` is the data byte sequence: a whole encapsulation; `context` the encoded context.
std::shared_ptr<event> make_event(std::string topic, std::string_view operation, std::uint8_t mode, protocol::byte_view params,
                     protocol::byte_view context, int cost);

/// Params up to this size (bytes) are copied into each subscriber's frame head instead of being
/// shared: copying them costs less than the shared tail's two atomic reference-count updates per
/// delivery, which the shards delivering the same event would contend on (perf/RESULTS.md).
inline constexpr std::size_t inline_params_max = 256;

/** The frame for one subscriber: head = header + request id 0 + `target` (the subscriber's
    encoded identity and facet) + the event's suffix (with or without its context), and the
    params too when they are at most inline_params_max bytes; otherwise tail = the shared
    params. The header's size counts head and tail. */
net::outbound_frame frame_for(const event& ev, protocol::byte_view target, bool with_context);

/// The encoded identity and facet of a subscriber (a request's target bytes up to the operation).
protocol::byte_buffer encode_target(const protocol::identity& id, std::string_view facet);

}  // namespace moraine::icestorm_bridge
