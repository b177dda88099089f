#pragma once
// One link's reachability on one shard: back-off while the linked topic cannot be reached.
#include <moraine/protocol/backoff_policy.hpp>

#include <chrono>
#include <cstdint>

namespace moraine::icestorm_bridge {

/** The health of one link (TopicLink::forward to another topic, docs/icestorm.md §6) as seen by
    one shard. While the linked topic is unreachable (a forward got no reply: connection refused
    or lost), events for it are not sent but counted as lost, and after a back-off a trial sends
    every event again until the first outcome (a failure starts the next, longer wait); the back-off that doubles from 100 ms to 10 s, or to IceStorm.Discard.Interval
    when that is shorter: IceStorm discards a failed link's events for that interval and then
    tries again, so a linked service that is back is reached at the latest when IceStorm would
    reach it. The first forward that gets any reply ends the outage. Moraine counts what was
    lost (moraine_link_events_lost_total). Not thread-safe. */
class link_backoff {
public:
    using clock = std::chrono::steady_clock;
    /// The longest wait between trials unless the discard interval is shorter.
    static constexpr std::chrono::milliseconds longest_backoff{10'000};

    /// `discard_interval`: IceStorm.Discard.Interval, the cap of the back-off when under 10 s.
    explicit link_backoff(std::chrono::milliseconds discard_interval = longest_backoff) noexcept;

    /// The wait before trial n of an outage: 100 ms doubling to the cap. No jitter: there is one
    /// trial per shard and link, not a crowd to spread out.
    const protocol::backoff_policy& schedule() const noexcept { return schedule_; }

    /// Whether an event may be forwarded at `now`. False counts it as lost (an outage whose
    /// wait is not over).
    bool admit(clock::time_point now) noexcept;

    /** A forward sent at or before `now` got no reply; its event is counted as lost.
        @return true when this starts an outage (the caller logs it once). A failure of a forward
        sent before the outage began, or of a trial already failed, only counts the event. */
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

    protocol::backoff_policy schedule_;
    bool down_ = false;
    bool probing_ = false;  // a trial: the wait was over, forwards go until the first outcome
    clock::time_point retry_at_{};
    unsigned attempt_ = 0;  // the trial being waited for, 1-based (schedule's attempt number)
    std::uint64_t lost_in_outage_ = 0;
    std::uint64_t lost_total_ = 0;
};

}  // namespace moraine::icestorm_bridge
