#pragma once
// How many CPUs this process may use: what `threads: 0` starts one shard for.
#include <optional>
#include <string_view>

namespace moraine::net {

/** The CPUs this process may run on and has time for: the smaller of the CPUs in its affinity
    mask (taskset, systemd CPUAffinity=, cpuset) and its cgroup CPU quota rounded up (systemd
    CPUQuota=, `docker --cpus`; cgroup v2 `cpu.max`, else v1 `cpu.cfs_quota_us` /
    `cpu.cfs_period_us`). At least 1. std::thread::hardware_concurrency counts every CPU of the
    machine, whatever the process is allowed. */
unsigned usable_cpus();

/// CPUs granted by a cgroup v2 `cpu.max` text ("200000 100000" → 2, "150000 100000" → 2);
/// nullopt for "max ..." (no quota) or text that is not "QUOTA PERIOD".
std::optional<unsigned> cpus_from_cpu_max(std::string_view cpu_max);

/// The same for cgroup v1: quota and period in µs (quota -1 = no quota).
std::optional<unsigned> cpus_from_quota(long long quota_us, long long period_us);

/// The cgroup path of controller `controller` ("" = the v2 unified hierarchy) in a
/// /proc/self/cgroup text, e.g. "/system.slice/moraine-router.service"; nullopt if absent.
std::optional<std::string_view> cgroup_path(std::string_view proc_self_cgroup, std::string_view controller);

}  // namespace moraine::net
