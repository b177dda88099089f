"""Helpers shared by the perf scripts (clock_compare.py, cluster.py, fanout_rate.py,
idle_rss.py): per-process CPU from /proc, file digests, waiting for a listener, stopping by PID."""
import hashlib
import os
import socket
import subprocess
import time


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


def wait_listening(port, proc, timeout=10.0):
    """Returns once 127.0.0.1:port accepts a connection; raises if proc exits or after timeout s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError("router exited with %d" % proc.returncode)
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("router not listening on %d after %.0f s" % (port, timeout))


def stop(proc):
    """SIGTERM, then SIGKILL after 5 s, by PID (None or an exited process: nothing)."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
