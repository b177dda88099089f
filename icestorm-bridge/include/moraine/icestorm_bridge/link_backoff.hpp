#pragma once
// One link's reachability on one shard: back-off while the linked topic cannot be reached.
#include <moraine/protocol/backoff_policy.hpp>

#include <chrono>
#include <cstdint>

namespace moraine::icestorm_bridge {

/** The health of one link (TopicLink::forward to another topic, docs/icestorm.md §6) as seen by
    one shard. While the linked topic is unreachable (a forward got no reply: connection refused
    or lost), events for it are not sent but counted as lost, and one event at a time probes it
    again after a back-off that doubles from 100 ms to 10 s. The first forward that gets any
    reply ends the outage. IceStorm also discards a failed link's events for a while and retries;
    Moraine counts what was lost (moraine_link_events_lost_total). Not thread-safe. */
class link_backoff {
public:
    using clock = std::chrono::steady_clock;
    /// The wait before probe n of an outage: 100 ms doubling to 10 s. No jitter: there is one
    /// prober per shard and link, not a crowd to spread out.
    static constexpr protocol::backoff_policy schedule{.initial_delay = std::chrono::milliseconds{100},
                                                       .max_delay = std::chrono::milliseconds{10'000},
                                                       .multiplier = 2.0,
                                                       .jitter = 0.0};

    /// Whether an event may be forwarded at `now`. False counts it as lost (an outage, and no
    /// probe due or one already in flight).
    bool admit(clock::time_point now) noexcept;

    /** A forward sent at or before `now` got no reply; its event is counted as lost.
        @return true when this starts an outage (the caller logs it once). A failure of a forward
        sent before the outage began, or of a probe already replaced, only counts the event. */
    bool failed(clock::time_point now) noexcept;

    /// A forward got a reply. @return the events lost in the outage it ends (0 if there was none).
    std::uint64_t succeeded() noexcept;

    bool down() const noexcept { return down_; }
    /// Events lost to outages of this link so far.
    std::uint64_t lost_total() const noexcept { return lost_total_; }

private:
    void lose() noexcept {
        ++lost_total_;
        ++lost_in_outage_;
    }

    bool down_ = false;
    bool probing_ = false;  // the one forward allowed through after a back-off is in flight
    clock::time_point retry_at_{};
    unsigned attempt_ = 0;  // the probe being waited for, 1-based (schedule's attempt number)
    std::uint64_t lost_in_outage_ = 0;
    std::uint64_t lost_total_ = 0;
};

}  // namespace moraine::icestorm_bridge
