"""Helpers shared by the perf scripts (clock_compare.py, cluster.py, fanout_rate.py,
idle_rss.py): per-process CPU and memory from /proc, file digests, a router's property file,
waiting for a listener, stopping by PID."""
import hashlib
import os
import socket
import subprocess
import sys
import time

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "interop"))
import ports  # noqa: E402  (tests/interop/ports.py: listening ports outside the ephemeral range)


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


def status_kib(pid, key):
    """A `kB` line of /proc/<pid>/status (VmRSS, RssAnon), in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError("no %s in /proc/%d/status" % (key, pid))


def write_router_config(tmp, session_timeout_s):
    """tmp/router.cfg for moraine-router --ice-config: client and server endpoints, the null
    permissions verifier, unbuffered, and the embedded topic service in memory (the fan-out or the
    sessions are measured, not a database), each on a free port below the ephemeral range.
    Returns (path, client port, TopicManager port)."""
    client, server, tm, pub = ports.free_port(), ports.free_port(), ports.free_port(), ports.free_port()
    path = os.path.join(tmp, "router.cfg")
    with open(path, "w") as f:
        f.write("Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p %d\n" % client)
        f.write("Glacier2.Server.Endpoints=tcp -h 127.0.0.1 -p %d\n" % server)  # subscribers' callbacks
        f.write("Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier\n")
        f.write("Glacier2.SessionTimeout=%d\nGlacier2.Client.Buffered=0\nGlacier2.Server.Buffered=0\n" % session_timeout_s)
        f.write("IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p %d\n" % tm)
        f.write("IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p %d\n" % pub)
        f.write("IceStorm.Transient=1\n")
    return path, client, tm


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


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def portable(value):
    """A copy of a result with no machine paths: paths inside the checkout become relative to
    its root, temporary ones start with $TMPDIR (committed results name no machine's folders)."""
    if isinstance(value, dict):
        return {k: portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(v) for v in value]
    if isinstance(value, str) and value.startswith("/"):
        if value == REPO_ROOT or value.startswith(REPO_ROOT + "/"):
            return os.path.relpath(value, REPO_ROOT)
        import re
        return re.sub(r"^/(tmp|var/tmp)(?=/)", "$TMPDIR", value)
    if isinstance(value, str) and "/" in value:  # a path inside an option: --Ice.Config=/tmp/...
        import re
        value = value.replace(REPO_ROOT + "/", "")
        return re.sub(r"(?<![\w.])/(tmp|var/tmp)(?=/)", "$TMPDIR", value)
    return value
