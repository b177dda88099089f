"""Per-process CPU read from /proc, shared by the perf scripts (clock_compare.py, cluster.py)."""
import os


def sched_ns(pid):
    """Sum of on-CPU ns of the live threads (/proc/<pid>/task/*/schedstat): a finer cross-check
    of utime + stime, which count whole clock ticks; None once the process is gone."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total
