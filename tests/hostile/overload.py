#!/usr/bin/python3
"""A publisher that outruns every subscriber: the router's memory stays within its budget, the
publisher is pushed back, and the router serves normally as soon as the flood ends.

  /usr/bin/python3 tests/hostile/overload.py [--bin build/bin] [--budget-mib 32] [--sessions 500]
                                             [--rate 3000] [--seconds 10]

Runs in a network namespace of its own (unshare -n; root) whose TCP socket buffers are small
(net.ipv4.tcp_rmem/tcp_wmem 4-16 KiB), so that a backlog is the router's to hold, not the kernel's.
moraine-router (--threads 1, embedded topic service, Moraine.Topics.MemoryBudget = --budget-mib)
with clock-subscriber --sessions N; once all are up, the subscriber process is stopped (SIGSTOP:
its sockets stop being read, the router can deliver nothing) and clock-publisher offers
N x --rate events/s for --seconds s: unbounded overload, more than any capacity. Then the
publisher stops and the subscribers continue (SIGCONT).
Checks: the router's RSS, sampled every 50 ms, grows by less than the budget plus 16 MiB of
slack (allocator and per-connection buffers) over its level with the sessions up; the publisher
was pushed back (it published fewer ticks than it offered); moraine_reads_held_total counted it;
right after the flood, a real Ice client creates a session in under 1 s, and a normal publish
(10 ticks/s on another topic) reaches a new subscriber session within 1 s. Without the budget (--budget-mib 0), the same run grows the router by up to
N x topics.subscriber_queue_bytes (1 MiB each). One line per check; exit status 1 if any
failed. Every process is stopped by PID; bounded: about 40 s.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "perf"))
from perf_common import status_kib, stop, wait_listening, write_router_config  # noqa: E402
import ports  # noqa: E402  (tests/interop/ports.py, on perf_common's path)


def wait_for(path, pattern, proc, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = re.search(pattern, open(path).read(), re.M)
        if m:
            return m
        if proc.poll() is not None:
            raise RuntimeError("%s exited: see %s" % (proc.args[0], path))
        time.sleep(0.05)
    raise RuntimeError("no /%s/ in %s after %.0f s" % (pattern, path, timeout))


def create_session_seconds(client_port):
    """Seconds a real Ice 3.7 client (Python) takes to connect and create a Glacier2 session."""
    import Ice  # noqa: E402  (Debian's python3-zeroc-ice)
    sys.path.insert(0, os.path.join(REPO, "tests", "interop"))
    import harness  # noqa: F401,E402  (imports Glacier2 the way the interop suite does)
    import Glacier2  # noqa: E402
    communicator = Ice.initialize(["--Ice.Override.Timeout=10000"])
    try:
        t0 = time.monotonic()
        router = Glacier2.RouterPrx.checkedCast(
            communicator.stringToProxy("Glacier2/router:tcp -h 127.0.0.1 -p %d" % client_port))
        router.createSession("late", "any")
        return time.monotonic() - t0
    finally:
        communicator.destroy()


def scrape(port, name):
    """The sum over shards of metric `name` from the router's /metrics."""
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
    return sum(float(m.group(1)) for m in re.finditer(r"^%s(?:\{[^}]*\})? (\S+)$" % re.escape(name), text, re.M))


# Small socket buffers (bytes: min, default, max) in the test's own network namespace, so that
# the backlog stays in the router's queues instead of in the kernel's (with the defaults, a few
# MB per socket would absorb the whole flood).
SOCKET_BUFFERS = "4096 8192 16384"


def in_own_netns():
    """Re-runs this script in a new network namespace (unshare -n) with loopback up and small
    socket buffers; returns its exit status, or None when already inside one."""
    if os.environ.get("MORAINE_OVERLOAD_NETNS") == "1":
        return None
    inner = ("ip link set lo up && sysctl -q -w net.ipv4.tcp_rmem='%s' net.ipv4.tcp_wmem='%s' && exec \"$@\""
             % (SOCKET_BUFFERS, SOCKET_BUFFERS))
    env = dict(os.environ, MORAINE_OVERLOAD_NETNS="1")
    return subprocess.call(["unshare", "-n", "sh", "-c", inner, "sh", sys.executable] + sys.argv, env=env)


def main():
    rc = in_own_netns()
    if rc is not None:
        return rc
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    ap.add_argument("--budget-mib", type=int, default=32)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--rate", type=float, default=3000)
    ap.add_argument("--seconds", type=float, default=10)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="moraine-overload-")
    cfg, client, tm = write_router_config(tmp, 60)
    metrics_port = ports.free_port()
    with open(cfg, "a") as f:
        f.write("Moraine.Topics.MemoryBudget=%d\n" % (a.budget_mib << 20))
        f.write("Moraine.Metrics.Listen=127.0.0.1:%d\n" % metrics_port)
    endpoint, manager = "tcp -h 127.0.0.1 -p %d" % client, "tcp -h 127.0.0.1 -p %d" % tm
    failures = []

    def check(name, ok, detail):
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
        if not ok:
            failures.append(name)

    procs = []
    try:
        router = subprocess.Popen([os.path.join(a.bin, "moraine-router"), "--ice-config", cfg, "--threads", "1"],
                                  stdout=open(os.path.join(tmp, "router.log"), "w"), stderr=subprocess.STDOUT)
        procs.append(router)
        wait_listening(client, router)
        sub_log = os.path.join(tmp, "subscribers.log")
        subs = subprocess.Popen([os.path.join(a.bin, "clock-subscriber"), "--router", endpoint, "--topic-manager",
                                 manager, "--sessions", str(a.sessions), "--duration", "600"],
                                stdout=open(sub_log, "w"), stderr=subprocess.STDOUT)
        procs.append(subs)
        wait_for(sub_log, r"sessions up in", subs, 60)
        time.sleep(1.0)
        base_kib = status_kib(router.pid, "VmRSS")
        os.kill(subs.pid, signal.SIGSTOP)
        pub_log = os.path.join(tmp, "publisher.log")
        t0 = time.monotonic()
        pub = subprocess.Popen([os.path.join(a.bin, "clock-publisher"), "--topic-manager", manager, "--rate",
                                str(a.rate), "--duration", str(a.seconds)],
                               stdout=open(pub_log, "w"), stderr=subprocess.STDOUT)
        procs.append(pub)
        peak_kib = base_kib
        while pub.poll() is None and time.monotonic() - t0 < a.seconds + 20:
            peak_kib = max(peak_kib, status_kib(router.pid, "VmRSS"))
            time.sleep(0.05)
        flood_s = time.monotonic() - t0
        # The subscribers read again first: the router drains, reads the publisher again, and the
        # publisher's blocked write completes. Its --duration is over, so it then ends by itself
        # and prints its count. (A SIGTERM while the subscribers were still stopped left it blocked
        # in that write on a busy machine, and the SIGKILL after 5 s lost the count.)
        os.kill(subs.pid, signal.SIGCONT)
        published = int(wait_for(pub_log, r"(\d+) ticks published", pub, 60).group(1))
        stop(pub)
        offered = int(a.rate * a.seconds)
        growth_mib = (peak_kib - base_kib) / 1024.0
        limit_mib = a.budget_mib + 16
        check("RSS growth within the budget", a.budget_mib == 0 or growth_mib < limit_mib,
              "%.1f MiB over %.1f MiB with %d sessions up (limit %d MiB = budget %d + 16)"
              % (growth_mib, base_kib / 1024.0, a.sessions, limit_mib, a.budget_mib))
        check("publisher pushed back", a.budget_mib == 0 or published < offered,
              "published %d of %d ticks offered in %.1f s (%d events/s offered, %.0f achieved)"
              % (published, offered, flood_s, a.sessions * a.rate, a.sessions * published / flood_s))
        held = scrape(metrics_port, "moraine_reads_held_total")
        check("reads held counted", a.budget_mib == 0 or held > 0, "moraine_reads_held_total %d" % held)
        # The flood is over (the subscribers still take what was queued for them): a new session
        # at once (a real Ice client, timed), and a normal publish on another topic delivered
        # within 1 s of being sent.
        up_s = create_session_seconds(client)
        check("a new session right after the flood", up_s < 1.0, "createSession took %.3f s" % up_s)
        late_log = os.path.join(tmp, "late.log")
        late = subprocess.Popen([os.path.join(a.bin, "clock-subscriber"), "--router", endpoint, "--topic-manager",
                                 manager, "--topic", "after", "--sessions", "1", "--duration", "2"],
                                stdout=open(late_log, "w"), stderr=subprocess.STDOUT)
        procs.append(late)
        wait_for(late_log, r"sessions up in", late, 10)
        normal = subprocess.Popen([os.path.join(a.bin, "clock-publisher"), "--topic-manager", manager, "--topic",
                                   "after", "--rate", "10", "--duration", "1.5"],
                                  stdout=open(os.path.join(tmp, "normal.log"), "w"), stderr=subprocess.STDOUT)
        procs.append(normal)
        late.wait(30)
        result = json.loads(re.search(r"^result (.*)$", open(late_log).read(), re.M).group(1))
        check("a normal publish delivered within 1 s", result["ticks"] > 0 and result["p99_ms"] < 1000,
              "%d ticks, p99 %.1f ms" % (result["ticks"], result["p99_ms"]))
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            stop(p)
    print("overload (budget %d MiB): %s" % (a.budget_mib, "all passed" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
