#include <moraine/icestorm_bridge/link_backoff.hpp>

#include <limits>

namespace moraine::icestorm_bridge {

bool link_backoff::admit(clock::time_point now) noexcept {
    if (!down_) return true;
    if (!probing_ && now >= retry_at_) {
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
        retry_at_ = now + schedule.ceiling(attempt_);
        return true;
    }
    if (probing_) {  // the probe failed: wait longer before the next one
        probing_ = false;
        if (attempt_ < std::numeric_limits<unsigned>::max()) ++attempt_;
        retry_at_ = now + schedule.ceiling(attempt_);
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
