"""Helpers shared by the perf scripts (clock_compare.py, cluster.py): per-process CPU from
/proc, file digests."""
import hashlib
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


def sha256(path):
    """Hex SHA-256 of a file (which binary a run used)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
