#!/usr/bin/python3
"""fanout_rate.py: the embedded topic service's fan-out on one shard, at rising publish rates,
for one or more moraine-router binaries side by side (e.g. a build before and after a change),
and with --nats for nats-server (Debian's 2.9) in the same harness, as a reference.

  /usr/bin/python3 perf/fanout_rate.py [--sessions 500[,2000]] [--rates 100,300] [--duration 6]
        [--repeats 3] [--router build/bin/moraine-router] [--router OTHER/bin/moraine-router]
        [--bin-dir build/bin] [--nats | --nats-only] [--cpu N] [--json FILE]

Per run (systems interleaved: A, B, nats, A, B, nats, ... for each session count, rate and repeat):
  moraine-router --ice-config FILE --threads 1 (client endpoint, topic service, the null
  permissions verifier, server endpoint for the subscribers; FILE is written once, ports below the ephemeral range); clock-subscriber
  --sessions N (N sessions through the router, each subscribing to topic `time`); after all are
  up, clock-publisher --rate R for --duration s. Offered load: N x R events/s.
  --nats: nats-server -c FILE (FILE in the run's temp dir: listen on a free port below the
  ephemeral range, max_connections 64K) with GOMAXPROCS=1, the Go runtime's counterpart of
  --threads 1 (one thread runs Go code at a time; threads blocked in system calls aside); with
  --cpu N both servers run under `taskset -c N` as well (not by default: on a shared 2-core
  machine pinning makes the server wait for whatever else runs on that core); then
  nats-fanout sub --sessions N (N connections, each `SUB time`) and nats-fanout pub --rate R
  (perf/nats/: the same tick text as clock-publisher's string argument, "HH:MM:SS #<seq> @<ns>",
  as the payload, and the same latency and loss accounting as clock-subscriber).
Measured: events delivered (the subscriber's own count), lost, p50/p99 latency from the
publisher's timestamp, and router CPU (utime + stime, and the threads' schedstat) from the
publisher's start to 1.5 s after its end (the subscriber's sessions still up), divided by the
events delivered; the same for the load generators (subscriber over that interval, publisher over
its whole life; the subscriber's from its threads' schedstat), to show they are not the bottleneck. A run "keeps up" when every offered event
arrived and p99 < 50 ms.
Every process is stopped by PID; every wait is bounded. Prints one line per run and a summary
(min / median / max per system and rate); --json FILE also writes one JSON object per run per
line (perf/plot_results.py reads them).
"""
import argparse
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.append(os.path.join(REPO, "tests", "interop"))
import ports  # noqa: E402  (tests/interop/ports.py: listening ports outside the ephemeral range)
from perf_common import portable, sched_ns, status_kib, stop, wait_listening, write_router_config  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """utime + stime of `pid` in seconds (/proc/<pid>/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def write_nats_config(tmp, tag):
    """nats-server's configuration for one run, on a fresh port below the ephemeral range."""
    port = ports.free_port()
    path = os.path.join(tmp, tag + "-nats.conf")
    with open(path, "w") as f:
        f.write('listen: "127.0.0.1:%d"\nmax_connections: 65536\n' % port)
    return path, port


def pinned(a):
    """--cpu: the server under test (moraine-router or nats-server) runs under taskset on that CPU."""
    return ["taskset", "-c", a.cpu] if a.cpu is not None else []


def start_system(system, a, logdir, tag, n, rate):
    """Starts the server under test; returns (proc, subscriber command, publisher command)."""
    log = open(os.path.join(logdir, tag + "-server.log"), "w")
    if system == "nats":
        cfg, port = write_nats_config(logdir, tag)
        env = dict(os.environ, GOMAXPROCS="1")
        server = subprocess.Popen(pinned(a) + [a.nats_server, "-c", cfg], env=env, stdout=log, stderr=subprocess.STDOUT)
        wait_listening(port, server)
        common = ["--port", str(port), "--subject", "time"]
        return (server, [a.nats_bin, "sub", "--sessions", str(n), "--duration", str(a.duration + 6)] + common,
                [a.nats_bin, "pub", "--rate", str(rate), "--duration", str(a.duration)] + common)
    # A --router value may carry options after the binary ("BIN --Moraine.Topics.MemoryBudget=N").
    server = subprocess.Popen(pinned(a) + shlex.split(system) + ["--ice-config", a.cfg, "--threads", "1"], stdout=log,
                              stderr=subprocess.STDOUT)
    wait_listening(a.client, server)
    endpoint = "tcp -h 127.0.0.1 -p %d" % a.client
    manager = "tcp -h 127.0.0.1 -p %d" % a.tm
    return (server, [os.path.join(a.bin_dir, "clock-subscriber"), "--router", endpoint, "--topic-manager", manager,
                     "--sessions", str(n), "--duration", str(a.duration + 6)],
            [os.path.join(a.bin_dir, "clock-publisher"), "--topic-manager", manager, "--rate", str(rate),
             "--duration", str(a.duration)])


def reap_with_cpu(proc, timeout, sample=None):
    """Waits (bounded) for `proc` to end by itself and reaps it; its CPU seconds (rusage).
    `sample()` runs every 50 ms meanwhile (the server's peak RSS)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if sample:
            sample()
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return ru.ru_utime + ru.ru_stime
        time.sleep(0.05)
    raise RuntimeError("%s still running after %.0f s" % (proc.args[0], timeout))


def one_run(system, n, rate, a, logdir, tag):
    server, sub_cmd, pub_cmd = start_system(system, a, logdir, tag, n, rate)
    sub = pubp = None
    try:
        sub_log = os.path.join(logdir, tag + "-subscriber.log")
        sub = subprocess.Popen(sub_cmd, stdout=open(sub_log, "w"), stderr=subprocess.STDOUT)
        end = time.monotonic() + 60 + n / 200  # set-up: a busy machine opens a few hundred sessions/s
        while time.monotonic() < end and not re.search(r"sessions up in", open(sub_log).read()):
            if sub.poll() is not None:
                raise RuntimeError("subscriber exited: see " + sub_log)
            time.sleep(0.1)
        time.sleep(1.0)
        c0, s0, g0 = cpu_s(server.pid), sched_ns(server.pid), sched_ns(sub.pid)
        pub_log = os.path.join(logdir, tag + "-publisher.log")
        rss0 = status_kib(server.pid, "VmRSS")
        peak = [rss0]
        t_pub = time.monotonic()
        pubp = subprocess.Popen(pub_cmd, stdout=open(pub_log, "w"), stderr=subprocess.STDOUT)
        pub_cpu = reap_with_cpu(pubp, a.duration + 30,
                                lambda: peak.__setitem__(0, max(peak[0], status_kib(server.pid, "VmRSS"))))
        pub_wall = time.monotonic() - t_pub
        time.sleep(1.5)  # the backlog of a run that keeps up drains; sessions are not torn down yet
        c1, s1, g1 = cpu_s(server.pid), sched_ns(server.pid), sched_ns(sub.pid)
        rss_kib = status_kib(server.pid, "VmRSS")
        sub.wait(a.duration + 60)  # it ends by itself (its --duration) and prints its counts
        result = json.loads(re.search(r"^result (.*)$", open(sub_log).read(), re.M).group(1))
        # Both publishers stop after --duration s, so a late wake-up can cost the last tick:
        # what is offered is what they say they published.
        published = int(re.search(r"(\d+) ticks published", open(pub_log).read()).group(1))
        if result["sessions_up"] != n:
            raise RuntimeError("%d of %d sessions up: see %s" % (result["sessions_up"], n, sub_log))
    finally:
        for p in (pubp, sub):
            if p is not None:
                stop(p)
        stop(server)
    ticks = result["ticks"]
    offered = n * published
    per_event = lambda cpu: cpu * 1e6 / ticks if ticks else None  # noqa: E731
    return {"script": "fanout_rate", "system": "nats" if system == "nats" else "moraine", "router": system,
            "sessions": n, "rate": rate, "duration_s": a.duration, "pinned_cpu": a.cpu,
            "offered_events_per_s": n * rate, "published": published, "delivered": ticks, "offered": offered,
            "lost": result["lost"], "dropped": result.get("dropped", 0),
            "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
            "router_cpu_us_per_event": per_event(c1 - c0),
            "router_sched_us_per_event": (s1 - s0) / 1e3 / ticks if ticks and s0 is not None and s1 is not None else None,
            "router_rss_kib": rss_kib,
            "router_rss_before_kib": rss0, "router_rss_peak_kib": peak[0],
            "publisher_achieved_events_per_s": n * published / pub_wall if pub_wall > 0 else None,
            "subscriber_cpu_us_per_event": per_event((g1 - g0) / 1e9) if g0 is not None and g1 is not None else None,
            "publisher_cpu_s": pub_cpu,
            "keeps_up": ticks >= offered and result["lost"] == 0 and result["p99_ms"] < 50}


def spread(vals, spec):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return "/".join(spec % v for v in (min(vals), statistics.median(vals), max(vals)))


def raise_fd_limit():
    """Soft descriptor limit up to the hard one: the servers and load generators inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def label(system):
    return system[-50:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", default="500", help="subscriber sessions, comma-separated")
    ap.add_argument("--rates", default="100,300", help="publisher ticks/s, comma-separated")
    ap.add_argument("--duration", type=int, default=6, help="seconds of publishing per run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--router", action="append",
                    help="moraine-router binary, optionally with options after it, e.g. \"build/bin/moraine-router "
                         "--Moraine.Topics.MemoryBudget=8388608\" (repeat to compare)")
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"), help="clock-subscriber/publisher")
    ap.add_argument("--nats", action="store_true", help="also nats-server, as a reference")
    ap.add_argument("--nats-only", action="store_true",
                    help="nats-server alone (e.g. its side of a clock_compare.py sweep at --rates 1)")
    ap.add_argument("--nats-server", default="/usr/sbin/nats-server")
    ap.add_argument("--nats-bin", default=None, help="nats-fanout (default: BIN_DIR/nats-fanout)")
    ap.add_argument("--cpu", default=None,
                    help="pin the server under test (moraine-router, nats-server) to this CPU (taskset -c); "
                         "the load generators are not pinned")
    ap.add_argument("--json", metavar="FILE", help="also write one JSON object per run per line to FILE")
    a = ap.parse_args()
    a.nats_bin = a.nats_bin or os.path.join(a.bin_dir, "nats-fanout")
    systems = [] if a.nats_only else a.router or [os.path.join(REPO, "build", "bin", "moraine-router")]
    if a.nats or a.nats_only:
        for path in (a.nats_server, a.nats_bin):
            if not os.access(path, os.X_OK):
                sys.exit("--nats: %s is missing (scripts/setup installs nats-server; nats-fanout is built with "
                         "the perf targets)" % path)
        systems = systems + ["nats"]
    rates = [int(r) for r in a.rates.split(",")]
    counts = [int(n) for n in a.sessions.split(",")]
    raise_fd_limit()
    tmp = tempfile.mkdtemp(prefix="moraine-fanout-")
    a.cfg, a.client, a.tm = write_router_config(tmp, 60)
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    out = open(a.json, "w") if a.json else None
    runs = []
    for rep in range(a.repeats):
        for n in counts:
            for rate in rates:
                for i, system in enumerate(systems):
                    r = one_run(system, n, rate, a, tmp, "r%d-%d-%d-%d" % (rep, n, rate, i))
                    r["repeat"] = rep
                    runs.append(r)
                    if out:
                        out.write(json.dumps(portable(r)) + "\n")
                        out.flush()
                    print("%-50s %5d x %4d/s = %7d ev/s: delivered %8d of %8d, lost %d, p50/p99 %.1f/%.1f ms, "
                          "router %.2f us/event, subscriber %.2f us/event, publisher %.2f s CPU%s"
                          % (label(system), n, rate, r["offered_events_per_s"], r["delivered"], r["offered"],
                             r["lost"], r["p50_ms"], r["p99_ms"], r["router_cpu_us_per_event"] or 0,
                             r["subscriber_cpu_us_per_event"] or 0, r["publisher_cpu_s"],
                             "" if r["keeps_up"] else "  (behind)"), flush=True)
    print("\nsummary (min/median/max of %d runs; logs in %s)" % (a.repeats, tmp))
    for n in counts:
        for rate in rates:
            for system in systems:
                rs = [r for r in runs if r["rate"] == rate and r["router"] == system and r["sessions"] == n]
                print("%-50s %7d ev/s offered: delivered/s %s, p99 %s ms, router %s us/event (schedstat %s), "
                      "subscriber %s us/event, kept up %d/%d" % (
                          label(system), rs[0]["offered_events_per_s"],
                          spread([r["delivered"] / a.duration for r in rs], "%.0f"),
                          spread([r["p99_ms"] for r in rs], "%.1f"), spread([r["router_cpu_us_per_event"] for r in rs], "%.2f"),
                          spread([r["router_sched_us_per_event"] for r in rs], "%.2f"),
                          spread([r["subscriber_cpu_us_per_event"] for r in rs], "%.2f"),
                          sum(r["keeps_up"] for r in rs), len(rs)))
    with open(os.path.join(tmp, "runs.json"), "w") as f:
        json.dump(portable(runs), f, indent=1)
    if out:
        out.close()


if __name__ == "__main__":
    main()
