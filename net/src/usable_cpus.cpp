// How many CPUs the process may use (see usable_cpus.hpp).
#include <moraine/net/usable_cpus.hpp>

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace moraine::net {

namespace {

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::optional<long long> parse_int(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
    long long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

unsigned affinity_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

/// The quota of this process's cgroup, v2 first, then v1's cpu controller.
std::optional<unsigned> quota_cpus() {
    const auto cgroups = read_file("/proc/self/cgroup");
    if (!cgroups) return std::nullopt;
    if (auto path = cgroup_path(*cgroups, "")) {
        if (auto max = read_file("/sys/fs/cgroup" + std::string(*path) + "/cpu.max")) return cpus_from_cpu_max(*max);
    }
    auto path = cgroup_path(*cgroups, "cpu");
    if (!path) return std::nullopt;
    for (const char* mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
        const std::string dir = mount + std::string(*path);
        auto quota = read_file(dir + "/cpu.cfs_quota_us");
        auto period = read_file(dir + "/cpu.cfs_period_us");
        if (!quota || !period) continue;
        auto q = parse_int(*quota);
        auto p = parse_int(*period);
        if (q && p) return cpus_from_quota(*q, *p);
    }
    return std::nullopt;
}

}  // namespace

std::optional<unsigned> cpus_from_quota(long long quota_us, long long period_us) {
    if (quota_us <= 0 || period_us <= 0) return std::nullopt;
    return static_cast<unsigned>(std::max(1LL, (quota_us + period_us - 1) / period_us));
}

std::optional<unsigned> cpus_from_cpu_max(std::string_view cpu_max) {
    const auto space = cpu_max.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    auto quota = parse_int(cpu_max.substr(0, space));  // "max" fails to parse: no quota
    auto period = parse_int(cpu_max.substr(space + 1));
    if (!quota || !period) return std::nullopt;
    return cpus_from_quota(*quota, *period);
}

std::optional<std::string_view> cgroup_path(std::string_view text, std::string_view controller) {
    // Lines "ID:CONTROLLERS:PATH"; v2's unified hierarchy is "0::PATH".
    while (!text.empty()) {
        const auto eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
        const auto c1 = line.find(':');
        const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
        const std::string_view path = line.substr(c2 + 1);
        if (controller.empty()) {
            if (controllers.empty()) return path;
            continue;
        }
        while (!controllers.empty()) {  // "cpu,cpuacct"
            const auto comma = controllers.find(',');
            if (controllers.substr(0, comma) == controller) return path;
            controllers = comma == std::string_view::npos ? std::string_view() : controllers.substr(comma + 1);
        }
    }
    return std::nullopt;
}

unsigned usable_cpus() {
    const unsigned cpus = affinity_cpus();
    const auto quota = quota_cpus();
    return quota ? std::min(cpus, *quota) : cpus;
}

}  // namespace moraine::net
