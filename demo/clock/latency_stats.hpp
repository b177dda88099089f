#pragma once
// Latency samples and their percentiles, for the clock demo's status line and summary.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace moraine::demo {

/// Collects latencies in microseconds; percentiles by selection on demand.
class latency_stats {
public:
    void add(std::uint32_t micros) { samples_.push_back(micros); }
    void merge(const latency_stats& other) { samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end()); }
    std::size_t count() const noexcept { return samples_.size(); }
    /// The p-th percentile (0..100) in microseconds; 0 with no samples. Reorders the samples.
    std::uint32_t percentile(double p);
    std::uint32_t max() const noexcept;
    void clear() noexcept { samples_.clear(); }

private:
    std::vector<std::uint32_t> samples_;
};

}  // namespace moraine::demo
