#pragma once
// Counters for the Prometheus exposition (/metrics): families, samples, a latency histogram.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::net {

/// A metric family as Prometheus names it: `name` with its unit and `_total` for counters,
/// `type` one of "counter", "gauge", "histogram", and one line of help.
struct metric_family {
    std::string_view name;
    std::string_view type;
    std::string_view help;
};

/// Latency of forwarded twoway requests, in fixed buckets (seconds), shard-local.
class latency_histogram {
public:
    /// Upper bounds in seconds; an observation above the last lands only in +Inf.
    static constexpr std::array<double, 14> bounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                   0.025,  0.05,    0.1,    0.25,  0.5,    1.0,   5.0};
    /// Records one observation of `seconds`.
    void observe(double seconds) noexcept;
    /// Observations at or below bounds[i] (cumulative, as the exposition wants).
    std::uint64_t cumulative(std::size_t i) const noexcept;
    std::uint64_t count() const noexcept { return count_; }
    double sum() const noexcept { return sum_; }

private:
    std::array<std::uint64_t, bounds.size()> buckets_{};  // per bucket, not cumulative
    std::uint64_t count_ = 0;
    double sum_ = 0;
};

/// One sample: a family, its labels already formatted (`reason="idle"`, may be empty) and a
/// value; a histogram sample carries the histogram instead.
struct metric_sample {
    const metric_family* family;
    std::string labels;
    double value = 0;
    std::optional<latency_histogram> histogram;
};

/** What one shard (or the process) reports for one scrape. Collectors (shard::add_collector)
    add samples on the shard's own thread; the exposition then labels them `shard="N"`.
    Families must outlive the sink (define them as constants). */
class metric_sink {
public:
    /// @param shard the shard index for the `shard` label; nullopt for process-wide samples.
    explicit metric_sink(std::optional<unsigned> shard = std::nullopt) : shard_(shard) {}

    /// Adds `value` to `family`; `labels` are extra labels such as `reason="idle"`.
    void add(const metric_family& family, double value, std::string labels = {});
    /// Adds a histogram sample.
    void add(const metric_family& family, const latency_histogram& h);

    std::optional<unsigned> shard() const noexcept { return shard_; }
    const std::vector<metric_sample>& samples() const noexcept { return samples_; }

private:
    std::optional<unsigned> shard_;
    std::vector<metric_sample> samples_;
};

/** The Prometheus text exposition format 0.0.4 of `sinks`: each family once with its # HELP and
    # TYPE lines, followed by its samples from every sink in order, labelled by shard where the
    sink has one. */
std::string render_metrics(const std::vector<metric_sink>& sinks);

/** Process-wide figures from /proc/self, Prometheus' standard names:
    process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
    process_open_fds, process_max_fds, process_start_time_seconds. Missing files yield no sample. */
metric_sink process_metrics();

}  // namespace moraine::net
