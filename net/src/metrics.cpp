#include <moraine/net/metrics.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace moraine::net {

namespace {

/// Prometheus wants Go's float syntax: integers without a fraction, "+Inf", "NaN".
void append_value(std::string& out, double v) {
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
        return;
    }
    char buf[32];
    const bool integral = v == std::floor(v) && std::fabs(v) < 1e15;
    std::snprintf(buf, sizeof buf, integral ? "%.0f" : "%.9g", v);
    out += buf;
}

/// `{a="x",b="y"}` from the shard label, the sample's own labels and an extra one (le), or nothing.
void append_labels(std::string& out, std::optional<unsigned> shard, std::string_view labels, std::string_view extra) {
    std::string all;
    if (shard) all = "shard=\"" + std::to_string(*shard) + "\"";
    for (std::string_view part : {labels, extra}) {
        if (part.empty()) continue;
        if (!all.empty()) all += ',';
        all += part;
    }
    if (all.empty()) return;
    out += '{';
    out += all;
    out += '}';
}

void append_line(std::string& out, std::string_view name, std::optional<unsigned> shard, std::string_view labels,
                 std::string_view extra, double v) {
    out += name;
    append_labels(out, shard, labels, extra);
    out += ' ';
    append_value(out, v);
    out += '\n';
}

void append_histogram(std::string& out, const metric_family& f, std::optional<unsigned> shard,
                      std::string_view labels, const latency_histogram& h) {
    const std::string bucket = std::string(f.name) + "_bucket";
    for (std::size_t i = 0; i < latency_histogram::bounds.size(); ++i) {
        std::string le = "le=\"";
        append_value(le, latency_histogram::bounds[i]);
        le += '"';
        append_line(out, bucket, shard, labels, le, static_cast<double>(h.cumulative(i)));
    }
    append_line(out, bucket, shard, labels, "le=\"+Inf\"", static_cast<double>(h.count()));
    append_line(out, std::string(f.name) + "_sum", shard, labels, {}, h.sum());
    append_line(out, std::string(f.name) + "_count", shard, labels, {}, static_cast<double>(h.count()));
}

}  // namespace

void latency_histogram::observe(double seconds) noexcept {
    const auto it = std::lower_bound(bounds.begin(), bounds.end(), seconds);
    if (it != bounds.end()) ++buckets_[static_cast<std::size_t>(it - bounds.begin())];
    ++count_;
    sum_ += seconds;
}

std::uint64_t latency_histogram::cumulative(std::size_t i) const noexcept {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k <= i && k < buckets_.size(); ++k) n += buckets_[k];
    return n;
}

void metric_sink::add(const metric_family& family, double value, std::string labels) {
    samples_.push_back(metric_sample{&family, std::move(labels), value, std::nullopt});
}

void metric_sink::add(const metric_family& family, const latency_histogram& h) {
    samples_.push_back(metric_sample{&family, {}, 0, h});
}

std::string render_metrics(const std::vector<metric_sink>& sinks) {
    // Families in the order first seen; each family's samples must be contiguous in the text.
    std::vector<const metric_family*> families;
    for (const auto& s : sinks)
        for (const auto& m : s.samples())
            if (std::none_of(families.begin(), families.end(),
                             [&](const metric_family* f) { return f->name == m.family->name; }))
                families.push_back(m.family);
    std::string out;
    out.reserve(4096);
    for (const auto* f : families) {
        out += "# HELP ";
        out += f->name;
        out += ' ';
        out += f->help;
        out += "\n# TYPE ";
        out += f->name;
        out += ' ';
        out += f->type;
        out += '\n';
        for (const auto& s : sinks)
            for (const auto& m : s.samples()) {
                if (m.family->name != f->name) continue;
                if (m.histogram)
                    append_histogram(out, *f, s.shard(), m.labels, *m.histogram);
                else
                    append_line(out, f->name, s.shard(), m.labels, {}, m.value);
            }
    }
    return out;
}

}  // namespace moraine::net
