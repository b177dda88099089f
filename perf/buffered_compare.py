#!/usr/bin/python3
"""buffered_compare.py: a burst of oneway updates to a slow consumer through moraine-router and glacier2router,
unbuffered vs buffered (batching, overriding), in both directions.

  /usr/bin/python3 perf/buffered_compare.py [--quick] [--repeats 3] [--sessions 100]
        [--updates 1000] [--keys 4] [--payload 128] [--sleep-time 20] [--modes unbuffered,batch,override]
        [--directions to-backend,to-client] [--routers moraine,glacier2] [--bin-dir build/bin]

Buffered mode exists for this case: many oneway updates queue in front of a slow receiver, and a
router that holds them per session can send them as batches (_fwd=O) or drop the ones a newer
update of the same key supersedes (_ovrd=<key>). Two directions:

  to-backend  update-burst opens K Glacier2 sessions and sends each session's B updates through the
              router to ONE slow back end (slow_consumer.py backend: one dispatch thread for all the
              router's connections). Glacier2.Client.* settings apply.
  to-client   slow_consumer.py clients opens K sessions (K slow clients, one service clock each);
              update-burst, as a back end on one connection to the router's server endpoint, sends
              B callbacks to each client. Glacier2.Server.* settings apply.

Modes (one Glacier2 property file each, read by both routers: moraine-router --ice-config FILE,
glacier2router --Ice.Config=FILE; only the binary differs):
  unbuffered   Glacier2.Client.Buffered=0, Glacier2.Server.Buffered=0; plain oneway updates.
  batch        Buffered=1, SleepTime=--sleep-time (both directions); updates carry _fwd=O.
  override     Buffered=1, SleepTime=--sleep-time; updates carry _ovrd=<key> (plain oneway).
  (also: alwaysbatch: Buffered=1 + AlwaysBatch=1 and plain oneways; batch+override: both contexts.)
Common keys: Glacier2.InstanceName=Glacier2, client and server endpoints on free loopback ports,
Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier, Glacier2.SessionTimeout=60.

The slow side (perf/buffered/slow_consumer.py) speaks the Ice protocol itself, so it counts the
messages on the router -> consumer wire (requests, batch requests) and the updates in them. A
message costs it --backend-cost / --client-cost (per message, per update, in us) of service time on
its clock, and it reads nothing more while busy, so the router meets TCP back-pressure; its sockets
have SO_RCVBUF --rcvbuf. The sending side (perf/rpc/update_burst.cpp, real Ice 3.7 C++, built
here with cmake into --peer-build) issues all K x B updates at once (AMI), round-robin over the
targets, key s<i>/k<seq % N>.

Per run (interleaved: for each repeat, direction, mode, router): consumer and router up, router
VmRSS (before any session), sessions up, CPU snapshot, SIGUSR1 to update-burst (the burst), until
the consumer has the last update of every key (or --drain-timeout), 0.3 s more, CPU snapshot,
router VmHWM (the process's peak RSS: each run starts a fresh router). Every process is stopped by
PID (SIGTERM, SIGKILL after 5 s). Writes perf/out/buffered_compare-<time>.json (and logs in
perf/out/buffered_compare-<time>/) and prints a table; the README's "Buffered mode" section explains
the columns.
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clock_compare as cc  # noqa: E402  (processes, /proc readers, readiness probe)
from rpc_compare import LineReader, build_peers, free_port  # noqa: E402  (peer stdout lines, the Ice peers, a port)

PERF, REPO, HOST = cc.PERF, cc.REPO, cc.HOST
log, RunError = cc.log, cc.RunError

# mode: (Glacier2 properties of both directions beyond Buffered, update-burst arguments)
MODES = {
    "unbuffered": (None, []),
    "batch": ({}, ["--fwd", "O"]),
    "override": ({}, ["--override"]),
    "alwaysbatch": ({"AlwaysBatch": "1"}, []),
    "batch+override": ({}, ["--fwd", "O", "--override"]),
}
DIRECTIONS = ("to-backend", "to-client")
CONSUMER_ROLE = {"to-backend": "backend", "to-client": "clients"}


# ---------------------------------------------------------------------------------------------
# Configuration


def router_props(mode, a):
    props = {"Glacier2.InstanceName": "Glacier2",
             "Glacier2.Client.Endpoints": "tcp -h %s -p %d" % (HOST, a.client_port),
             "Glacier2.Server.Endpoints": "tcp -h %s -p %d" % (HOST, a.server_port),
             "Glacier2.SessionTimeout": "60",  # longer than a run: the raw slow clients send no heartbeats
             "Glacier2.PermissionsVerifier": "Glacier2/NullPermissionsVerifier",
             "Ice.Warn.Connections": "0"}
    extra, _ = MODES[mode]
    for d in ("Client", "Server"):
        props["Glacier2.%s.Buffered" % d] = "0" if extra is None else "1"
        if extra is not None:  # SleepTime only with Buffered=1: moraine-router warns about it otherwise
            props["Glacier2.%s.SleepTime" % d] = str(a.sleep_time)
            props.update({"Glacier2.%s.%s" % (d, k): v for k, v in extra.items()})
    return props


def write_configs(a, tmp):
    """{mode: path of the property file both routers read}."""
    out = {}
    for mode in a.mode_list:
        path = os.path.join(tmp, "router-%s.cfg" % mode.replace("+", "-"))
        with open(path, "w") as f:
            f.write("# perf/buffered_compare.py, mode %s: read by moraine-router --ice-config and glacier2router"
                    " --Ice.Config alike\n" % mode)
            f.write("".join("%s=%s\n" % kv for kv in router_props(mode, a).items()))
        out[mode] = path
    return out


def status_kib(pid, field):
    """A `kB` line of /proc/<pid>/status (VmRSS, VmHWM: the peak resident set size)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


# ---------------------------------------------------------------------------------------------
# Processes of one run


def start_router(kind, cfg, a, bins, logdir):
    """The router under test, once both its endpoints answer with a validate connection message."""
    if kind == "moraine":
        p = cc.Proc("moraine-router", [bins["moraine-router"], "--ice-config", cfg], logdir)
    else:
        p = cc.Proc("glacier2router", ["/usr/bin/glacier2router", "--Ice.Config=" + cfg], logdir)
    try:
        for port in (a.client_port, a.server_port):
            cc.wait_ready(p, port)
    except BaseException:
        p.stop()
        raise
    return p


def start_piped(name, cmd, logdir):
    """A process whose stdout lines are read by a LineReader (raw copy in <name>.out)."""
    p = cc.Proc(name, cmd, logdir, pipe_stdout=True)
    reader = LineReader(p, os.path.join(logdir, name + ".out"))
    reader.start()
    return p, reader


def consumer_cmd(direction, a, bins, categories):
    role = CONSUMER_ROLE[direction]
    msg_us, upd_us = a.backend_cost if role == "backend" else a.client_cost
    cmd = [sys.executable, bins["slow_consumer.py"], role, "--sessions", str(a.sessions), "--updates",
           str(a.updates), "--keys", str(a.keys), "--msg-cost-us", str(msg_us), "--update-cost-us", str(upd_us),
           "--rcvbuf", str(a.rcvbuf)]
    if role == "clients":
        cmd += ["--router", "tcp -h %s -p %d" % (HOST, a.client_port), "--categories-out", categories]
    return cmd


def load_cmd(direction, mode, a, bins, consumer_port, categories):
    cmd = [bins["update-burst"], "--Ice.Warn.Connections=0", "--updates", str(a.updates), "--keys", str(a.keys),
           "--payload", str(a.payload)] + MODES[mode][1]
    if direction == "to-backend":
        return cmd + ["--sessions", str(a.sessions), "--router", "tcp -h %s -p %d" % (HOST, a.client_port),
                      "--target", "updates:tcp -h %s -p %d" % (HOST, consumer_port)]
    return cmd + ["--server", "tcp -h %s -p %d" % (HOST, a.server_port), "--categories", categories]


def set_up(direction, kind, mode, a, bins, logdir, procs, readers):
    """Starts consumer, router and update-burst in the direction's order, filling procs/readers;
    returns the router's VmRSS (KiB) before the first session."""
    categories = os.path.join(logdir, "categories.txt")
    deadline = time.monotonic() + a.setup_timeout
    port = None
    if direction == "to-backend":  # the back end first: the sessions' first ping reaches it
        procs["consumer"], readers["consumer"] = start_piped("slow-consumer", consumer_cmd(direction, a, bins, None),
                                                             logdir)
        port = int(readers["consumer"].expect(r"listening (\d+)", deadline, "slow consumer's port").group(1))
    procs["router"] = start_router(kind, a.cfgs[mode], a, bins, logdir)
    time.sleep(0.3)
    rss_before = status_kib(procs["router"].pid, "VmRSS")
    if direction == "to-client":  # the clients' sessions first: the back end needs their categories
        procs["consumer"], readers["consumer"] = start_piped("slow-consumer",
                                                             consumer_cmd(direction, a, bins, categories), logdir)
        readers["consumer"].expect(r"ready (\d+)", deadline, "slow clients' sessions")
    procs["load"], readers["load"] = start_piped("update-burst", load_cmd(direction, mode, a, bins, port, categories),
                                                 logdir)
    readers["load"].expect(r"ready (\d+)", deadline, "update-burst ready")
    return rss_before


def burst(procs, readers, a):
    """Fires the burst and waits until the consumer has every key's last update. Returns
    (burst_start_ns, burst_sent_ns, sent, done)."""
    procs["load"].popen.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + a.drain_timeout
    t0 = int(readers["load"].expect(r"burst-start (\d+)", time.monotonic() + 10, "burst-start").group(1))
    m = readers["load"].expect(r"burst-sent (\d+) sent (\d+) errors (\d+)", deadline, "burst-sent")
    if int(m.group(3)):
        raise RunError("update-burst: %s updates failed" % m.group(3))
    try:
        readers["consumer"].expect(r"done (\d+)", deadline, "the consumer's last update")
        done = True
    except RunError as e:
        log("  %s" % e)
        done = False
    return t0, int(m.group(1)), int(m.group(2)), done


def consumer_result(procs, readers, done):
    """The consumer's counts, asked for with SIGUSR1 (the one printed at `done` may miss the rest of
    its last message)."""
    deadline = time.monotonic() + 10
    if done:
        readers["consumer"].expect(r"result (\{.*\})", deadline, "the consumer's result at done")
    procs["consumer"].popen.send_signal(signal.SIGUSR1)
    return json.loads(readers["consumer"].expect(r"result (\{.*\})", deadline, "the consumer's result").group(1))


# ---------------------------------------------------------------------------------------------
# One run


def cpu_delta(s0, s1, name, per):
    """CPU of one process between two snapshots, in us per `per` updates: the total from schedstat
    (ns resolution: a burst is only 0.1-5 s, /proc/<pid>/stat counts 10 ms ticks), user and sys
    from stat (tick-rounded); the stat total too, as a cross-check."""
    a, b = s0[name], s1[name]
    d = dict(cpu_s=b["cpu"] - a["cpu"], user_s=b["user"] - a["user"], sys_s=b["sys"] - a["sys"])
    d.update(stat_us_per_update=1e6 * d["cpu_s"] / per, user_us_per_update=1e6 * d["user_s"] / per,
             sys_us_per_update=1e6 * d["sys_s"] / per)
    sched = None if None in (a["sched_ns"], b["sched_ns"]) else (b["sched_ns"] - a["sched_ns"]) / 1e3 / per
    d["us_per_update"] = d["stat_us_per_update"] if sched is None else sched
    return d


def measure(res, s0, s1, rss_before, hwm, times, cons, a):
    """Fills res with the run's figures (the README's "Buffered mode" section says what each means)."""
    t0, t_sent, sent, done = times
    res.update(sent=sent, done=done, delivered=cons["updates"], removed=sent - cons["updates"],
               messages=cons["update_messages"], batches=cons["batch_messages"],
               updates_in_batches=cons["updates_in_batches"], wire_messages=cons["messages"],
               wire_bytes=cons["bytes"], max_message=cons["max_message"], reordered=cons["reordered"],
               finals=cons["finals"], expected_finals=cons["expected_finals"],
               send_ms=(t_sent - t0) / 1e6,
               last_ms=(cons["done_ns"] - t0) / 1e6 if cons["done_ns"] else None,
               consumer_busy_s=cons["busy_s"], consumer_own_cpu_s=cons["own_cpu_s"])
    cpu = res["cpu"] = {k: cpu_delta(s0, s1, k, sent) for k in ("router", "load", "consumer")}
    res.update(router_us_per_update=cpu["router"]["us_per_update"],
               router_user_us_per_update=cpu["router"]["user_us_per_update"],
               router_sys_us_per_update=cpu["router"]["sys_us_per_update"],
               load_us_per_update=cpu["load"]["us_per_update"])
    res.update(rss_kib_before=rss_before, rss_kib_sessions=s0["router"]["rss_kib"],
               rss_kib_end=s1["router"]["rss_kib"], rss_kib_peak=hwm, rss_mib_peak=hwm / 1024.0,
               rss_peak_kb_per_session=1.024 * (hwm - rss_before) / a.sessions,
               rss_end_kb_per_session=1.024 * (s1["router"]["rss_kib"] - rss_before) / a.sessions)
    wall = s1["t"] - s0["t"]
    busy = (s1["machine"][0] - s0["machine"][0]) / cc.CLK_TCK
    res["other_busy_cores"] = max(0.0, busy - sum(c["cpu_s"] for c in cpu.values())) / wall


def one_run(direction, mode, kind, rep, a, bins, outdir):
    logdir = os.path.join(outdir, "%s-%s-%s-%d" % (direction, mode.replace("+", "-"), kind, rep))
    os.makedirs(logdir, exist_ok=True)
    res = dict(direction=direction, mode=mode, router=kind, repeat=rep, sessions=a.sessions, logs=logdir, ok=False)
    procs, readers = {}, {}
    t_run = time.monotonic()
    try:
        cc.wait_ports_free([a.client_port, a.server_port], 30)
        if a.wait_quiet > 0:
            res["load_before_cores"] = cc.wait_quiet(a.wait_quiet)
        rss_before = set_up(direction, kind, mode, a, bins, logdir, procs, readers)
        s0 = cc.snapshot(procs)
        times = burst(procs, readers, a)
        time.sleep(0.3)  # what the router still does after the last update (SleepTime timers, ...)
        s1 = cc.snapshot(procs)
        hwm = status_kib(procs["router"].pid, "VmHWM")
        measure(res, s0, s1, rss_before, hwm, times, consumer_result(procs, readers, times[3]), a)
        res["ok"] = times[3] and res["reordered"] == 0
        if not res["ok"]:
            res["error"] = ("the consumer did not get every key's last update within %.0f s (%d of %d)"
                            % (a.drain_timeout, res["finals"], res["expected_finals"])) if not times[3] \
                else "%d updates arrived out of order" % res["reordered"]
    except RunError as e:
        res["error"] = str(e)
        log("run failed: %s" % e)
    finally:
        for k in ("load", "consumer", "router"):
            if k in procs:
                procs[k].stop()
        res["run_s"] = time.monotonic() - t_run
    return res


# ---------------------------------------------------------------------------------------------
# Reporting

# The summary's rows: (label, key in a run, format); a run's figures are flat keys (see measure()).
ROWS = [("router CPU us/update", "router_us_per_update", "%.2f"),
        ("  user (stat)", "router_user_us_per_update", "%.2f"),
        ("  sys (stat)", "router_sys_us_per_update", "%.2f"),
        ("load CPU us/update", "load_us_per_update", "%.2f"),
        ("messages to consumer", "messages", "%.0f"),
        ("  of which batches", "batches", "%.0f"),
        ("updates delivered", "delivered", "%.0f"),
        ("last update at (ms)", "last_ms", "%.0f"),
        ("all sent at (ms)", "send_ms", "%.0f"),
        ("router peak RSS (MiB)", "rss_mib_peak", "%.1f"),
        ("peak RSS/session (KB)", "rss_peak_kb_per_session", "%.1f"),
        ("end RSS/session (KB)", "rss_end_kb_per_session", "%.1f"),
        ("consumer CPU (s)", "consumer_own_cpu_s", "%.2f"),
        ("other load (cores)", "other_busy_cores", "%.2f")]


def summarise(runs):
    groups = {}
    for r in runs:
        if r.get("ok"):
            groups.setdefault((r["direction"], r["mode"], r["router"]), []).append(r)
    out = []
    for (d, m, k), rs in groups.items():
        s = dict(direction=d, mode=m, router=k, repeats=len(rs), sent=rs[0]["sent"])
        s.update({key: [r.get(key) for r in rs] for _, key, _ in ROWS})
        out.append(s)
    order = {v: i for i, v in enumerate(list(DIRECTIONS) + list(MODES) + ["moraine", "glacier2"])}
    out.sort(key=lambda s: (order[s["direction"]], order[s["mode"]], order[s["router"]]))
    return out


def compact(vals, spec):
    """median [min-max], or the value alone when every repeat gave the same."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    lo, mid, hi = spec % min(vals), spec % statistics.median(vals), spec % max(vals)
    return mid if lo == hi else "%s [%s-%s]" % (mid, lo, hi)


def print_runs(runs):
    hdr = ("%-10s %-14s %-8s %2s | %7s %6s %6s | %7s %6s %7s | %7s %7s | %7s %7s | %5s"
           % ("direction", "mode", "router", "#", "rtr us", "user", "sys", "msgs", "batch", "dlvrd", "last ms",
              "sent ms", "peak MB", "KB/sess", "other"))
    print(hdr)
    print("-" * len(hdr))
    for r in runs:
        head = "%-10s %-14s %-8s %2d" % (r["direction"], r["mode"], r["router"], r["repeat"])
        if "cpu" not in r:
            print("%s | FAILED: %s" % (head, r.get("error")))
            continue
        print("%s | %7.2f %6.2f %6.2f | %7d %6d %7d | %7s %7.0f | %7.1f %7.1f | %5.2f%s" % (
            head, r["router_us_per_update"], r["router_user_us_per_update"], r["router_sys_us_per_update"],
            r["messages"], r["batches"], r["delivered"], cc.fmt(r["last_ms"]), r["send_ms"], r["rss_mib_peak"],
            r["rss_peak_kb_per_session"], r["other_busy_cores"], "" if r["ok"] else "  NOT OK: " + r["error"]))


def print_summary(summary, a):
    """One table per direction: a column per mode and router, a row per figure."""
    for d in a.direction_list:
        cols = [s for s in summary if s["direction"] == d]
        if not cols:
            continue
        print("\n%s: %d sessions x %d updates = %d sent per run, %d keys per session; median [min-max] of %s"
              % (d, a.sessions, a.updates, a.sessions * a.updates, a.keys,
                 "/".join(sorted({str(s["repeats"]) for s in cols}))))
        table = [["", *["%s %s" % (s["router"], s["mode"]) for s in cols]]]
        table += [[label, *[compact(s[key], spec) for s in cols]] for label, key, spec in ROWS]
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        for i, row in enumerate(table):
            print(" | ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
            if i == 0:
                print("-+-".join("-" * w for w in widths))


# ---------------------------------------------------------------------------------------------


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="50 sessions x 400 updates, 1 repeat (< 90 s); explicit options still win")
    ap.add_argument("--sessions", type=int, help="K: sessions (senders or slow clients), default 100")
    ap.add_argument("--updates", type=int, help="B: updates per session in the burst, default 1000")
    ap.add_argument("--keys", type=int, default=4, help="distinct keys per session (default 4)")
    ap.add_argument("--payload", type=int, default=128, help="bytes of each update's payload (default 128)")
    ap.add_argument("--sleep-time", type=int, default=20, help="Glacier2.*.SleepTime of the buffered modes, ms")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--modes", default="unbuffered,batch,override", help="of: " + ",".join(MODES))
    ap.add_argument("--directions", default=",".join(DIRECTIONS))
    ap.add_argument("--routers", default="moraine,glacier2")
    ap.add_argument("--backend-cost", default="40,10",
                    help="the slow back end's service time: us per message,us per update (default 40,10)")
    ap.add_argument("--client-cost", default="2000,1000",
                    help="each slow client's service time: us per message,us per update (default 2000,1000)")
    ap.add_argument("--rcvbuf", type=int, default=65536,
                    help="SO_RCVBUF of the consumer's sockets (0: the kernel's, autotuned); keep it >= 64 KiB: "
                         "below loopback's 64 KiB MSS, TCP sends a slowly read connection only on its persist timer")
    ap.add_argument("--drain-timeout", type=float, default=30, help="s from the burst to the consumer's last update")
    ap.add_argument("--setup-timeout", type=float, default=60)
    ap.add_argument("--wait-quiet", type=float, default=2,
                    help="before each run, wait up to this many s for other un-niced load under 0.5 cores (0: don't)")
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"), help="where moraine-router is")
    ap.add_argument("--peer-build", default=os.path.join(REPO, "build-perf-rpc"),
                    help="build directory of perf/rpc, the Ice peers (configured and built by this script)")
    ap.add_argument("--out", default=None, help="JSON result file (default perf/out/buffered_compare-<time>.json)")
    a = ap.parse_args()
    quick = dict(sessions=50, updates=400, repeats=1) if a.quick else dict(sessions=100, updates=1000, repeats=3)
    for k, v in quick.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    a.mode_list = [m for m in a.modes.split(",") if m]
    a.direction_list = [d for d in a.directions.split(",") if d]
    a.kinds = [k for k in a.routers.split(",") if k]
    a.backend_cost = [float(x) for x in a.backend_cost.split(",")]
    a.client_cost = [float(x) for x in a.client_cost.split(",")]
    if (any(m not in MODES for m in a.mode_list) or any(d not in DIRECTIONS for d in a.direction_list)
            or any(k not in ("moraine", "glacier2") for k in a.kinds)
            or len(a.backend_cost) != 2 or len(a.client_cost) != 2):
        ap.error("--modes: %s; --directions: %s; --routers: moraine,glacier2; costs: two numbers"
                 % (",".join(MODES), ",".join(DIRECTIONS)))
    return a


def copy_binaries(a, tmp):
    """Copies of the programs (a rebuild during the comparison changes nothing) and their hashes."""
    srcs = {"update-burst": build_peers(a.peer_build)["update-burst"],
            "slow_consumer.py": os.path.join(PERF, "buffered", "slow_consumer.py")}
    if "moraine" in a.kinds:
        srcs["moraine-router"] = os.path.join(a.bin_dir, "moraine-router")
    bins, info = {}, {}
    for b, src in srcs.items():
        if not os.path.exists(src):
            sys.exit("missing %s" % src)
        bins[b] = os.path.join(tmp, b)
        shutil.copy2(src, bins[b])
        info[b] = dict(path=src, sha256=cc.sha256(bins[b]),
                       mtime=datetime.datetime.fromtimestamp(os.path.getmtime(src)).isoformat())
    info["glacier2router"] = dict(path="/usr/bin/glacier2router", sha256=cc.sha256("/usr/bin/glacier2router"))
    return bins, info


def run_all(a, bins, logdir, result, out_json):
    for rep in range(1, a.repeats + 1):
        for d in a.direction_list:
            for mode in a.mode_list:
                for kind in a.kinds:
                    log("%s %s %s, repeat %d" % (d, mode, kind, rep))
                    r = one_run(d, mode, kind, rep, a, bins, logdir)
                    result["runs"].append(r)
                    if "cpu" in r:
                        log("  router %.2f us/update, load %.2f us/update; %d messages (%d batches), %d of %d "
                            "delivered, last after %s ms; peak RSS %.1f MiB" % (
                                r["router_us_per_update"], r["load_us_per_update"], r["messages"], r["batches"],
                                r["delivered"], r["sent"], cc.fmt(r["last_ms"]), r["rss_mib_peak"]))
                    cc.save_json(result, out_json)


def main():
    a = parse_args()
    os.chdir(REPO)
    out_json, logdir, stamp = cc.output_paths("buffered_compare", a.out)
    cc.stop_on_sigterm()

    t0 = time.monotonic()
    log("building perf/rpc (the Ice peers) into %s" % a.peer_build)
    tmp = tempfile.mkdtemp(prefix="moraine-buffered-compare-")
    bins, bin_info = copy_binaries(a, tmp)
    a.client_port, a.server_port = free_port(), free_port()
    a.cfgs = write_configs(a, tmp)
    for path in a.cfgs.values():
        shutil.copy2(path, logdir)
    git = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    config = {k: getattr(a, k) for k in ("sessions", "updates", "keys", "payload", "sleep_time", "repeats",
                                         "mode_list", "direction_list", "kinds", "backend_cost", "client_cost",
                                         "rcvbuf", "drain_timeout")}
    config["router_cfg"] = {m: open(p).read() for m, p in a.cfgs.items()}
    result = dict(started=stamp, argv=sys.argv, git_head=git, binaries=bin_info, logs=logdir, config=config,
                  machine=dict(cpus=cc.NCPU, kernel=os.uname().release), runs=[])

    def add_summary(res):
        res["summary"] = summarise(res["runs"])

    def report(res):
        print_runs(res["runs"])
        print_summary(res["summary"], a)

    return cc.run_and_report(result, t0, out_json, logdir, tmp, lambda: run_all(a, bins, logdir, result, out_json),
                             add_summary, report)


if __name__ == "__main__":
    sys.exit(main())
