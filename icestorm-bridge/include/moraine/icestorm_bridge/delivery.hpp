#pragma once
// One subscriber's delivery state machine (docs/icestorm.md §3, "Delivery"): no sockets, no
// clock of its own, so it is tested alone (icestorm-bridge/test/delivery_test.cpp).
#include <moraine/icestorm_bridge/event.hpp>
#include <moraine/icestorm_bridge/qos.hpp>
#include <moraine/net/compact_fifo.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace moraine::icestorm_bridge {

/// What IceStorm.Send.QueueSizeMaxPolicy names: what a full per-subscriber queue does.
enum class queue_policy {
    remove_subscriber,  ///< `RemoveSubscriber` (default): the subscriber fails for good
    drop_events,        ///< `DropEvents`: the oldest queued event makes room
};

/// The service-wide delivery settings (IceStorm.Send.* and IceStorm.Discard.Interval).
struct delivery_limits {
    /// IceStorm.Send.QueueSizeMax: events queued per subscriber (not counting those sent and
    /// awaiting a reply); -1 = no count limit.
    int queue_size_max = -1;
    queue_policy policy = queue_policy::remove_subscriber;  ///< IceStorm.Send.QueueSizeMaxPolicy
    /// IceStorm.Send.Timeout: a twoway event unanswered for this long counts as a failed
    /// delivery (ms); -1 = never.
    std::int64_t send_timeout_ms = 60000;
    /// IceStorm.Discard.Interval: after a failure within retryCount, events are discarded for
    /// this long (s), then delivery is tried again.
    std::int64_t discard_interval_s = 60;
    /// Moraine's own bound (topics.subscriber_queue_bytes): the parameter bytes of the events
    /// queued for one subscriber; a new event that would pass it is dropped.
    std::size_t queue_bytes = 1 << 20;
};

/// How a delivery ended, as IceStorm classes the outcome of a send.
enum class delivery_outcome {
    ok,         ///< a reply (a user exception counts: the subscriber answered)
    transient,  ///< any other failure: retried within retryCount
    hard,       ///< ObjectNotExist (or the session is gone): the subscriber fails for good
};

/** The events of one subscriber between the publish and the subscriber's reply.
    Events wait in a queue and leave in publish order; at most max_outstanding() are sent and
    unanswered at a time: 1 with reliability=ordered, 5 for another twoway subscriber, none
    tracked for a oneway one (a oneway counts as answered once written).
    A failure within retryCount sets the subscriber offline: queued events are dropped, and so
    are new ones until the discard interval ends; a success ends the retrying. A failure past
    retryCount, a hard failure, or a full queue under RemoveSubscriber makes it dead: the next
    offer() says so, and the owner removes the subscriber (IceStorm removes it on the next publish). */
class delivery_state {
public:
    using clock = std::chrono::steady_clock;

    /// One event to send now. `token` names it in completed(); 0 for a oneway (not tracked).
    struct send {
        event_ptr ev;
        std::uint64_t token = 0;
    };

    /// What offer() did with an event.
    enum class offer_result {
        queued,     ///< waiting in the queue (next() hands it out)
        discarded,  ///< offline: dropped until the discard interval ends
        dropped,    ///< a full queue dropped an event (DropEvents, or the byte bound)
        dead,       ///< the subscriber failed for good: remove it
    };

    /// For a subscriber with QoS `q` whose proxy is twoway (or not).
    delivery_state(const qos& q, bool twoway) noexcept;
    /// A oneway subscriber with the default QoS.
    delivery_state() noexcept : delivery_state(qos{}, false) {}

    /// Events sent and unanswered allowed at once: 1 (ordered), 5 (twoway) or 0 (oneway: untracked).
    std::size_t max_outstanding() const noexcept;

    /** A new event for this subscriber at `now`. Expires unanswered events older than the send
        timeout first (each a transient failure). */
    offer_result offer(event_ptr ev, clock::time_point now, const delivery_limits& lim);

    /// The next event to send at `now`, or nullopt (queue empty, window full, offline or dead).
    std::optional<send> next(clock::time_point now);

    /** offer() and next() in one step for the usual case, without queueing the event: when
        nothing is queued, the subscriber is online (or its discard interval is over) and its
        window has room, the new event may go at once. @return its token (0 for a oneway), and
        the state is as if offer() had queued it and next() handed it out. Otherwise nullopt
        and nothing changed but expiry: the caller goes through offer(). Spares each delivery
        the queue's push and pop and the event's reference count. */
    std::optional<std::uint64_t> offer_now(clock::time_point now, const delivery_limits& lim);

    /** The outcome of the send named `token` (0 for a oneway, whose failures only are reported).
        Unknown tokens (already expired) are ignored. */
    void completed(std::uint64_t token, delivery_outcome o, clock::time_point now, const delivery_limits& lim);

    /// The send named `token` was not made after all (the connection was too full): frees its
    /// window slot with no outcome.
    void release(std::uint64_t token) noexcept;

    /// Unanswered events sent before `now - send_timeout` fail (transient), oldest first.
    void expire(clock::time_point now, const delivery_limits& lim);

    bool dead() const noexcept { return state_ == state::dead; }
    bool offline(clock::time_point now) const noexcept { return state_ == state::offline && now < retry_at_; }
    std::size_t queued() const noexcept { return queue_.size(); }
    std::size_t outstanding() const noexcept { return outstanding_.size(); }
    int retries() const noexcept { return current_retry_; }

private:
    enum class state { online, offline, dead };
    struct in_flight {
        std::uint64_t token;
        clock::time_point sent;
    };

    void fail(delivery_outcome o, clock::time_point now, const delivery_limits& lim);
    /// True if online at `now`; an offline subscriber whose discard interval is over comes back
    /// online here (offer() and offer_now() alike). False while offline or dead.
    bool resume_if_due(clock::time_point now) noexcept;
    /// Opens a window slot for an event sent now: its token (0 for an untracked oneway).
    std::uint64_t take_slot(clock::time_point now);
    void clear_queue() noexcept;

    int retry_count_;
    std::size_t max_outstanding_;
    state state_ = state::online;
    clock::time_point retry_at_{};
    int current_retry_ = 0;
    net::compact_fifo<event_ptr> queue_;  // no memory while empty (an idle subscriber)
    std::size_t queue_bytes_ = 0;
    std::vector<in_flight> outstanding_;  // in send order; at most 5 (twoway_window), none for a oneway
    std::uint64_t next_token_ = 1;
};

}  // namespace moraine::icestorm_bridge
