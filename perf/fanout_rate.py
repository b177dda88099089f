#!/usr/bin/python3
"""fanout_rate.py: the embedded topic service's fan-out on one shard, at rising publish rates,
for one or more moraine-router binaries side by side (e.g. a build before and after a change).

  /usr/bin/python3 perf/fanout_rate.py [--sessions 500] [--rates 100,300] [--duration 6]
        [--repeats 3] [--router build/bin/moraine-router] [--router OTHER/bin/moraine-router]
        [--bin-dir build/bin]

Per run (binaries interleaved: A, B, A, B, ... for each rate and repeat):
  moraine-router --ice-config FILE --threads 1 (client endpoint, topic service, the null
  permissions verifier, server endpoint for the subscribers; FILE is written once, ports below the ephemeral range); clock-subscriber
  --sessions N (N sessions through the router, each subscribing to topic `time`); after all are
  up, clock-publisher --rate R for --duration s. Offered load: N x R events/s.
Measured: events delivered (clock-subscriber's own count), lost, p50/p99 latency from the
publisher's timestamp, and router CPU (utime + stime, and the threads' schedstat) from the
publisher's start to 1.5 s after its end (the subscriber's sessions still up), divided by the
events delivered. A run "keeps up" when every offered event arrived and p99 < 50 ms.
Every process is stopped by PID; every wait is bounded. Prints one line per run and a summary
(min / median / max per binary and rate).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.append(os.path.join(REPO, "tests", "interop"))
import ports  # noqa: E402  (tests/interop/ports.py: listening ports outside the ephemeral range)
from perf_common import sched_ns  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """utime + stime of `pid` in seconds (/proc/<pid>/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def wait_listening(port, proc, timeout=10.0):
    import socket
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
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def write_config(tmp):
    client, server, tm, pub = ports.free_port(), ports.free_port(), ports.free_port(), ports.free_port()
    path = os.path.join(tmp, "router.cfg")
    with open(path, "w") as f:
        f.write("Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p %d\n" % client)
        f.write("Glacier2.Server.Endpoints=tcp -h 127.0.0.1 -p %d\n" % server)  # subscribers' callbacks
        f.write("Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier\n")
        f.write("Glacier2.SessionTimeout=60\nGlacier2.Client.Buffered=0\nGlacier2.Server.Buffered=0\n")
        f.write("IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p %d\n" % tm)
        f.write("IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p %d\n" % pub)
        f.write("IceStorm.Transient=1\n")  # topics in memory: the fan-out is measured, not the disk
    return path, client, tm


def one_run(router_bin, cfg, client, tm, a, rate, logdir, tag):
    router = subprocess.Popen([router_bin, "--ice-config", cfg, "--threads", "1"],
                              stdout=open(os.path.join(logdir, tag + "-router.log"), "w"), stderr=subprocess.STDOUT)
    sub = pubp = None
    try:
        wait_listening(client, router)
        endpoint = "tcp -h 127.0.0.1 -p %d" % client
        manager = "tcp -h 127.0.0.1 -p %d" % tm
        sub_log = os.path.join(logdir, tag + "-subscriber.log")
        sub = subprocess.Popen([os.path.join(a.bin_dir, "clock-subscriber"), "--router", endpoint, "--topic-manager",
                                manager, "--sessions", str(a.sessions), "--duration", str(a.duration + 6)],
                               stdout=open(sub_log, "w"), stderr=subprocess.STDOUT)
        end = time.monotonic() + 60
        while time.monotonic() < end and not re.search(r"sessions up in", open(sub_log).read()):
            if sub.poll() is not None:
                raise RuntimeError("clock-subscriber exited: see " + sub_log)
            time.sleep(0.1)
        time.sleep(1.0)
        c0, s0 = cpu_s(router.pid), sched_ns(router.pid)
        pubp = subprocess.Popen([os.path.join(a.bin_dir, "clock-publisher"), "--topic-manager", manager, "--rate",
                                 str(rate), "--duration", str(a.duration)],
                                stdout=open(os.path.join(logdir, tag + "-publisher.log"), "w"), stderr=subprocess.STDOUT)
        pubp.wait(a.duration + 30)
        time.sleep(1.5)  # the backlog of a run that keeps up drains; sessions are not torn down yet
        c1, s1 = cpu_s(router.pid), sched_ns(router.pid)
        sub.wait(a.duration + 60)  # it ends by itself (its --duration) and prints its counts
        result = json.loads(re.search(r"^result (.*)$", open(sub_log).read(), re.M).group(1))
        if result["sessions_up"] != a.sessions:
            raise RuntimeError("%d of %d sessions up: see %s" % (result["sessions_up"], a.sessions, sub_log))
    finally:
        for p in (pubp, sub):
            if p is not None:
                stop(p)
        stop(router)
    ticks = result["ticks"]
    offered = a.sessions * rate * a.duration
    return {"router": router_bin, "rate": rate, "offered_events_per_s": a.sessions * rate, "delivered": ticks,
            "offered": offered, "lost": result["lost"], "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
            "router_cpu_us_per_event": (c1 - c0) * 1e6 / ticks if ticks else None,
            "router_sched_us_per_event": (s1 - s0) / 1e3 / ticks if ticks and s0 is not None and s1 is not None else None,
            "keeps_up": ticks >= offered and result["lost"] == 0 and result["p99_ms"] < 50}


def spread(vals, spec):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return "/".join(spec % v for v in (min(vals), statistics.median(vals), max(vals)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--rates", default="100,300", help="publisher ticks/s, comma-separated")
    ap.add_argument("--duration", type=int, default=6, help="seconds of publishing per run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--router", action="append", help="moraine-router binary (repeat to compare)")
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"), help="clock-subscriber/publisher")
    a = ap.parse_args()
    routers = a.router or [os.path.join(REPO, "build", "bin", "moraine-router")]
    rates = [int(r) for r in a.rates.split(",")]
    tmp = tempfile.mkdtemp(prefix="moraine-fanout-")
    cfg, client, tm = write_config(tmp)
    runs = []
    for rep in range(a.repeats):
        for rate in rates:
            for i, rb in enumerate(routers):
                r = one_run(rb, cfg, client, tm, a, rate, tmp, "r%d-%d-%d" % (rep, rate, i))
                runs.append(r)
                print("%-50s %4d/s x %d = %7d ev/s: delivered %8d of %8d, lost %d, p50/p99 %.1f/%.1f ms, "
                      "router %.2f us/event%s" % (rb[-50:], rate, a.sessions, r["offered_events_per_s"], r["delivered"],
                                                  r["offered"], r["lost"], r["p50_ms"], r["p99_ms"],
                                                  r["router_cpu_us_per_event"] or 0, "" if r["keeps_up"] else "  (behind)"),
                      flush=True)
    print("\nsummary (min/median/max of %d runs; logs in %s)" % (a.repeats, tmp))
    for rate in rates:
        for rb in routers:
            rs = [r for r in runs if r["rate"] == rate and r["router"] == rb]
            print("%-50s %7d ev/s offered: delivered/s %s, p99 %s ms, router %s us/event (schedstat %s), kept up %d/%d" % (
                rb[-50:], rs[0]["offered_events_per_s"], spread([r["delivered"] / a.duration for r in rs], "%.0f"),
                spread([r["p99_ms"] for r in rs], "%.1f"), spread([r["router_cpu_us_per_event"] for r in rs], "%.2f"),
                spread([r["router_sched_us_per_event"] for r in rs], "%.2f"), sum(r["keeps_up"] for r in rs), len(rs)))
    with open(os.path.join(tmp, "runs.json"), "w") as f:
        json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
