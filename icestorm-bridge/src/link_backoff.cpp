#include <moraine/icestorm_bridge/link_backoff.hpp>

#include <algorithm>
#include <limits>

namespace moraine::icestorm_bridge {

link_backoff::link_backoff(std::chrono::milliseconds discard_interval) noexcept
    : schedule_{.initial_delay = std::chrono::milliseconds{100},
                .max_delay = std::clamp(discard_interval, std::chrono::milliseconds{100}, longest_backoff),
                .multiplier = 2.0,
                .jitter = 0.0} {}

bool link_backoff::admit(clock::time_point now) noexcept {
    // A trial once the wait is over: every event goes until the first outcome, as IceStorm sends
    // again after its discard interval. Holding all but one back would lose the events that
    // arrive while the new connection is being made.
    if (!down_ || probing_) return true;
    if (now >= retry_at_) {
        probing_ = true;
        return true;
    }
    lose();
    return false;
}

bool link_backoff::failed(clock::time_point now) noexcept {
    lose();
    if (!down_) {
        down_ = true;
        probing_ = false;
        attempt_ = 1;
        retry_at_ = now + schedule_.ceiling(attempt_);
        return true;
    }
    if (probing_) {  // the probe failed: wait longer before the next one
        probing_ = false;
        if (attempt_ < std::numeric_limits<unsigned>::max()) ++attempt_;
        retry_at_ = now + schedule_.ceiling(attempt_);
    }
    return false;
}

std::uint64_t link_backoff::succeeded() noexcept {
    const std::uint64_t lost = down_ ? lost_in_outage_ : 0;
    down_ = false;
    probing_ = false;
    attempt_ = 0;
    lost_in_outage_ = 0;
    return lost;
}

}  // namespace moraine::icestorm_bridge
