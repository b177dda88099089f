#include <moraine/protocol/backoff_policy.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace moraine::protocol {

std::chrono::milliseconds backoff_policy::ceiling(unsigned attempt) const noexcept {
    const double cap = static_cast<double>(std::max<std::int64_t>(max_delay.count(), 0));
    const double growth = std::isnan(multiplier) ? 1.0 : std::max(multiplier, 1.0);
    const unsigned n = std::max(attempt, 1u) - 1;
    double c = static_cast<double>(std::max<std::int64_t>(initial_delay.count(), 0));
    // initial_delay 0: the first attempt at once, then growing from 1 ms (unless multiplier is 1),
    // so that a router that stays down is not retried in a busy loop.
    if (n > 0 && (c > 0 || growth > 1.0)) c = std::max(c, 1.0) * std::pow(growth, static_cast<double>(n));
    if (!(c < cap)) c = cap;  // pow may overflow to inf for a large n: the cap then, as it should
    return std::chrono::milliseconds(static_cast<std::int64_t>(c));
}

std::chrono::milliseconds backoff_policy::delay(unsigned attempt, double u) const noexcept {
    const double j = std::clamp(std::isnan(jitter) ? 0.0 : jitter, 0.0, 1.0);
    const double draw = std::clamp(std::isnan(u) ? 0.0 : u, 0.0, 1.0);
    const double c = static_cast<double>(ceiling(attempt).count());
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::floor(c * (1.0 - j * draw))));
}

}  // namespace moraine::protocol
