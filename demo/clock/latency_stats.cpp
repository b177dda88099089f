#include "clock/latency_stats.hpp"

#include <algorithm>

namespace moraine::demo {

std::uint32_t latency_stats::percentile(double p) {
    if (samples_.empty()) return 0;
    auto k = static_cast<std::size_t>(p / 100.0 * static_cast<double>(samples_.size() - 1) + 0.5);
    k = std::min(k, samples_.size() - 1);
    std::nth_element(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(k), samples_.end());
    return samples_[k];
}

std::uint32_t latency_stats::max() const noexcept {
    return samples_.empty() ? 0 : *std::max_element(samples_.begin(), samples_.end());
}

}  // namespace moraine::demo
