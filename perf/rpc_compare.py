#!/usr/bin/python3
"""rpc_compare.py: router CPU per forwarded twoway request, tcp vs tls, moraine-router vs glacier2router.

  /usr/bin/python3 perf/rpc_compare.py [--sessions 100] [--outstanding 4] [--rate 0] [--pacing ms|even]
        [--window 20] [--warmup 3] [--repeats 2] [--transports tcp,tls] [--routers moraine,glacier2]
        [--bin-dir build-perf/bin] [--rpc-build build-perf-rpc] [--kernel-bench BIN_DIR/bench_kernel_relay]
        [--setup-bench BIN_DIR/bench_kernel_setup]
        [--moraine-threads N]

The load peers are real Ice 3.7 C++ programs (perf/rpc, built here with cmake into --rpc-build):
  rpc-backend  serves Bench::Target `echo` (string echo(string), void ping()) on tcp and ssl;
  rpc-load     opens --sessions Glacier2 sessions through the router (NullPermissionsVerifier, one
               connection each), keeps --outstanding twoway calls in flight per session (AMI) and
               reports requests/s and p50/p99 latency over a --window after --warmup seconds.
For transport tcp, the router's client endpoint and the back-end proxy are tcp; for tls both are
ssl (the router is a TLS server for the clients and a TLS client of the back end).

Each router reads the SAME property file per transport (written once, in a temporary directory):
moraine-router --ice-config FILE, glacier2router --Ice.Config=FILE. Glacier2.Client/Server.Buffered=0
(as perf/clock_compare.py), Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier, and for
tls the IceSSL keys: Ice.Plugin.IceSSL, IceSSL.DefaultDir/CAs/CertFile/KeyFile, IceSSL.VerifyPeer=1.
The certificates are made fresh with the `openssl` command (perf/tls_certs.py: CA, router
certificate with subjectAltName IP:127.0.0.1, back-end and client certificates). Ports: free ones
below the ephemeral range (tests/interop/ports.py), chosen once.

Runs are interleaved: for each repeat, for each transport, for each router. Per run:
  back end and router up (the router's port answers with an Ice validate-connection message, after
  a TLS handshake for ssl); router VmRSS; rpc-load started. Set-up: router CPU from start of rpc-load
  until its `sessions K up` line, per session (TLS handshakes, createSession, the first routed call).
  Window: router (and back end, client) utime+stime from /proc/<pid>/stat sampled when rpc-load
  prints `window-start N` and `window-end N`; CPU per request = delta CPU / requests completed between
  the two lines (also from the sum of /proc/<pid>/task/*/schedstat as a cross-check). RSS per
  session = (VmRSS at the window's end - VmRSS before the first session) / K.
With --rate and tcp, each repeat also runs bench_kernel_relay (perf/bench_kernel_relay.cpp) with
--clients SESSIONS --rate RATE for the same warm-up and window: the kernel's own cost of a relay
that does the least a router must per request (one read and one write each way, level-triggered
epoll, no parsing), the floor under "router CPU per request" at this pace; the summary gives each
router's distance to it ('' to skip). Each tcp repeat also runs bench_kernel_setup (perf/
bench_kernel_setup.cpp; --setup-bench, '' to skip) for SESSIONS sessions, 3 rounds: the kernel's own
cost of rpc-load's set-up (accept and validate connection, createSession on all sessions at once,
then getClientProxy, addProxies and one forwarded ice_ping session by session), the floor under
"set-up CPU per session".
Every process is stopped by PID (SIGTERM, SIGKILL after 5 s); every wait is bounded.
Writes perf/out/rpc_compare-<time>.json (and logs in perf/out/rpc_compare-<time>/) and prints a table.
"""
import argparse
import datetime
import json
import os
import queue
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clock_compare as cc  # noqa: E402  (processes, /proc readers, readiness probe)
import tls_certs  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "interop"))
import ports  # noqa: E402  (tests/interop/ports.py: listening ports outside the ephemeral range)

PERF = cc.PERF
REPO = cc.REPO
HOST = cc.HOST
log = cc.log
RunError = cc.RunError


def free_port():
    return ports.free_port(HOST)


class LineReader(threading.Thread):
    """Queues ("line", t, text) for each line of a process's stdout, then ("eof", t, None); keeps a copy."""

    def __init__(self, proc, raw_path):
        super().__init__(daemon=True)
        self.proc, self.q, self.raw = proc, queue.Queue(), open(raw_path, "w")

    def run(self):
        for line in iter(self.proc.popen.stdout.readline, b""):
            text = line.decode(errors="replace").rstrip("\n")
            self.raw.write(text + "\n")
            self.raw.flush()
            self.q.put(("line", time.monotonic(), text))
        self.raw.close()
        self.q.put(("eof", time.monotonic(), None))

    def expect(self, pattern, deadline, what):
        """The match of the next line matching pattern (other lines are skipped)."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RunError("timed out waiting for %s" % what)
            try:
                ev, t, text = self.q.get(timeout=left)
            except queue.Empty:
                raise RunError("timed out waiting for %s" % what)
            if ev == "eof":
                raise RunError("%s exited (%s) while waiting for %s: %s"
                               % (self.proc.name, self.proc.popen.poll(), what, self.proc.tail()))
            m = re.match(pattern, text)
            if m:
                return m


# ---------------------------------------------------------------------------------------------
# Configuration files


def router_props(transport, port, certs):
    props = {"Glacier2.InstanceName": "Glacier2",
             "Glacier2.Client.Endpoints": "%s -h %s -p %d" % ("ssl" if transport == "tls" else "tcp", HOST, port),
             "Glacier2.SessionTimeout": "30",
             "Glacier2.PermissionsVerifier": "Glacier2/NullPermissionsVerifier",
             "Glacier2.Client.Buffered": "0",
             "Glacier2.Server.Buffered": "0",
             "Glacier2.RoutingTable.MaxSize": "1000"}
    if transport == "tls":
        props.update(tls_certs.iceSSL_props(certs, "server", verify_peer=1))
    return props


def write_configs(a, tmp):
    """{transport: {router_cfg, client_cfg, port}} and the back end's file."""
    certs = tls_certs.make(os.path.join(tmp, "tls")) if "tls" in a.transport_list else None
    cfgs = {}
    for t in a.transport_list:
        port = free_port()
        cfgs[t] = dict(port=port, router_cfg=tls_certs.write_properties(
            os.path.join(tmp, "router-%s.cfg" % t), router_props(t, port, certs),
            "perf/rpc_compare.py: read by moraine-router --ice-config and glacier2router --Ice.Config alike"))
        client = {"Ice.Warn.Connections": "0"}
        if t == "tls":
            client.update(tls_certs.iceSSL_props(certs, "client"))
        cfgs[t]["client_cfg"] = tls_certs.write_properties(os.path.join(tmp, "client-%s.cfg" % t), client)
    backend = {"Ice.Warn.Connections": "0"}
    if certs:
        backend.update(tls_certs.iceSSL_props(certs, "backend", verify_peer=1))
    backend_cfg = tls_certs.write_properties(os.path.join(tmp, "backend.cfg"), backend)
    return cfgs, backend_cfg, certs


# ---------------------------------------------------------------------------------------------
# One run


def start_backend(a, bins, logdir):
    eps = "tcp -h %s -p 0" % HOST + (":ssl -h %s -p 0" % HOST if "tls" in a.transport_list else "")
    p = cc.Proc("rpc-backend", [bins["rpc-backend"], "--Ice.Config=" + a.backend_cfg, "--Bench.Endpoints=" + eps],
                logdir, pipe_stdout=True)
    reader = LineReader(p, os.path.join(logdir, "rpc-backend.out"))
    reader.start()
    endpoints = {}
    deadline = time.monotonic() + 15
    try:
        while True:
            m = reader.expect(r"(endpoint (\w+) .*)|(ready)", deadline, "rpc-backend's endpoints")
            if m.group(3):
                break
            endpoints[m.group(2)] = m.group(1)[len("endpoint "):]
    except BaseException:
        p.stop()
        raise
    return p, endpoints


def start_router(kind, cfg, tls_ctx, bins, logdir, threads=None):
    if kind == "moraine":
        extra = [] if threads is None else ["--threads", str(threads)]
        p = cc.Proc("moraine-router", [bins["moraine-router"], "--ice-config", cfg["router_cfg"]] + extra, logdir)
    else:
        p = cc.Proc("glacier2router", ["/usr/bin/glacier2router", "--Ice.Config=" + cfg["router_cfg"]], logdir)
    try:
        cc.wait_ready(p, cfg["port"], tls=tls_ctx)
    except BaseException:
        p.stop()
        raise
    return p


def one_run(kind, transport, rep, a, bins, outdir):
    logdir = os.path.join(outdir, "%s-%s-%d" % (kind, transport, rep))
    os.makedirs(logdir, exist_ok=True)
    cfg = a.cfgs[transport]
    res = dict(router=kind, transport=transport, repeat=rep, sessions=a.sessions, logs=logdir, ok=False)
    procs, load = {}, None
    t_run = time.monotonic()
    try:
        cc.wait_ports_free([cfg["port"]], 30)
        if a.wait_quiet > 0:
            res["load_before_cores"] = cc.wait_quiet(a.wait_quiet)
        procs["backend"], endpoints = start_backend(a, bins, logdir)
        proto = "ssl" if transport == "tls" else "tcp"
        if proto not in endpoints:
            raise RunError("rpc-backend has no %s endpoint: %s" % (proto, endpoints))
        procs["router"] = start_router(kind, cfg, a.tls_ctx if transport == "tls" else None, bins, logdir,
                                       a.moraine_threads)
        time.sleep(0.5)
        base = cc.snapshot(procs)

        cmd = [bins["rpc-load"], "--Ice.Config=" + cfg["client_cfg"],
               "--router", "%s -h %s -p %d" % (proto, HOST, cfg["port"]), "--target", "echo:" + endpoints[proto],
               "--sessions", str(a.sessions), "--outstanding", str(a.outstanding), "--rate", str(a.rate),
               "--pacing", a.pacing, "--op", a.op, "--payload", str(a.payload), "--warmup", str(a.warmup), "--window", str(a.window)]
        res["client_cmd"] = cmd
        load = cc.Proc("rpc-load", cmd, logdir, pipe_stdout=True)
        reader = LineReader(load, os.path.join(logdir, "rpc-load.out"))
        reader.start()
        allp = dict(procs, client=load)
        m = reader.expect(r"sessions (\d+) up in ([\d.]+) s", time.monotonic() + a.setup_timeout, "sessions up")
        up = cc.snapshot(procs)
        res["setup_s"] = float(m.group(2))
        res["setup_cpu_us_per_session"] = {k: 1e6 * (up[k]["cpu"] - base[k]["cpu"]) / a.sessions for k in procs}
        # The same from schedstat (ns resolution; /proc/<pid>/stat counts 10 ms ticks).
        res["setup_sched_us_per_session"] = {k: (up[k]["sched_ns"] - base[k]["sched_ns"]) / 1e3 / a.sessions
                                             for k in procs if None not in (up[k]["sched_ns"], base[k]["sched_ns"])}
        deadline = time.monotonic() + a.warmup + a.window + 30
        m = reader.expect(r"window-start (\d+)", deadline, "window-start")
        s0, c0 = cc.snapshot(allp), int(m.group(1))
        m = reader.expect(r"window-end (\d+)", deadline, "window-end")
        s1, c1 = cc.snapshot(allp), int(m.group(1))
        m = reader.expect(r"result (\{.*\})", deadline, "result")
        client = json.loads(m.group(1))
        res["client"] = client
        requests = c1 - c0
        if requests <= 0:
            raise RunError("no request completed in the window")
        wall = s1["t"] - s0["t"]
        res["requests"] = requests
        res["requests_per_s"] = client["requests_per_s"]
        res["p50_us"], res["p99_us"], res["p999_us"] = client["p50_us"], client["p99_us"], client["p999_us"]
        res["errors"] = client["errors"]
        res["unsent"] = client.get("unsent", 0)
        cpu = {}
        for k in allp:
            d = s1[k]["cpu"] - s0[k]["cpu"]
            du, dsys = s1[k]["user"] - s0[k]["user"], s1[k]["sys"] - s0[k]["sys"]
            ds = (s1[k]["sched_ns"] - s0[k]["sched_ns"]) if None not in (s0[k]["sched_ns"], s1[k]["sched_ns"]) else None
            cpu[k] = dict(cpu_s=d, user_s=du, sys_s=dsys, util=d / wall, ns_per_request=1e9 * d / requests,
                          user_ns_per_request=1e9 * du / requests, sys_ns_per_request=1e9 * dsys / requests,
                          sched_ns_per_request=ds / requests if ds is not None else None)
        res["cpu"] = cpu
        res["rss_kib_before"] = {k: base[k]["rss_kib"] for k in procs}
        res["rss_kib_window_end"] = {k: s1[k]["rss_kib"] for k in procs}
        res["rss_bytes_per_session"] = 1024.0 * (s1["router"]["rss_kib"] - base["router"]["rss_kib"]) / a.sessions
        busy = (s1["machine"][0] - s0["machine"][0]) / cc.CLK_TCK
        ours = sum(c["cpu_s"] for c in cpu.values())
        res["machine_busy_cores"] = busy / wall
        res["other_busy_cores"] = max(0.0, busy - ours) / wall
        res["other_niced_cores"] = (s1["machine"][2] - s0["machine"][2]) / cc.CLK_TCK / wall
        try:  # rpc-load drains its calls in flight and exits by itself
            load.popen.wait(10)
        except subprocess.TimeoutExpired:
            pass
        res["ok"] = client["errors"] == 0
        if not res["ok"]:
            res["error"] = "%d calls failed in the window: %s" % (client["errors"], load.tail(3))
    except RunError as e:
        res["error"] = str(e)
        log("run failed: %s" % e)
    finally:
        if load:
            load.stop()
        for k in ("router", "backend"):
            if k in procs:
                procs[k].stop()
        res["run_s"] = time.monotonic() - t_run
    return res


# ---------------------------------------------------------------------------------------------
# Reporting

spread = cc.spread


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def print_runs(runs):
    hdr = ("%-8s %-4s %2s | %7s %7s %7s %7s | %7s %7s %7s | %7s %7s | %7s %7s | %5s"
           % ("router", "tr", "#", "req/s", "p50us", "p99us", "p999us", "rtr ns", "user", "sys", "bknd ns",
              "clnt ns", "setupus", "RSS B/s", "other"))
    print(hdr)
    print("-" * len(hdr))
    for r in runs:
        if not r.get("ok"):
            print("%-8s %-4s %2d | FAILED: %s" % (r["router"], r["transport"], r["repeat"], r.get("error")))
            continue
        c = r["cpu"]
        print("%-8s %-4s %2d | %7.0f %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f | %7.0f %7.0f | %7.0f %7.0f | %5.2f" % (
            r["router"], r["transport"], r["repeat"], r["requests_per_s"], r["p50_us"], r["p99_us"], r["p999_us"],
            c["router"]["ns_per_request"], c["router"]["user_ns_per_request"], c["router"]["sys_ns_per_request"],
            c["backend"]["ns_per_request"], c["client"]["ns_per_request"],
            r["setup_sched_us_per_session"]["router"], r["rss_bytes_per_session"], r["other_busy_cores"]))
    print("rtr/bknd/clnt ns: CPU ns per request of the router, rpc-backend, rpc-load (user/sys: the router's split);\n"
          "setupus: router CPU us per session set up (schedstat); RSS B/s: router RSS bytes per session; other: cores busy\n"
          "with other processes during the window.")


def summarise(runs):
    groups = {}
    for r in runs:
        if r.get("ok"):
            groups.setdefault((r["router"], r["transport"]), []).append(r)
    out = []
    for (kind, tr), rs in sorted(groups.items()):
        def col(f):
            return [f(r) for r in rs]
        out.append(dict(
            router=kind, transport=tr, repeats=len(rs), sessions=rs[0]["sessions"],
            requests_per_s=col(lambda r: r["requests_per_s"]),
            p50_us=col(lambda r: r["p50_us"]), p99_us=col(lambda r: r["p99_us"]), p999_us=col(lambda r: r["p999_us"]),
            router_ns_per_request=col(lambda r: r["cpu"]["router"]["ns_per_request"]),
            router_user_ns_per_request=col(lambda r: r["cpu"]["router"]["user_ns_per_request"]),
            router_sys_ns_per_request=col(lambda r: r["cpu"]["router"]["sys_ns_per_request"]),
            router_sched_ns_per_request=col(lambda r: r["cpu"]["router"]["sched_ns_per_request"]),
            router_util=col(lambda r: r["cpu"]["router"]["util"]),
            backend_ns_per_request=col(lambda r: r["cpu"]["backend"]["ns_per_request"]),
            client_ns_per_request=col(lambda r: r["cpu"]["client"]["ns_per_request"]),
            setup_s=col(lambda r: r["setup_s"]),
            setup_router_us_per_session=col(lambda r: r["setup_sched_us_per_session"]["router"]),
            setup_router_stat_us_per_session=col(lambda r: r["setup_cpu_us_per_session"]["router"]),
            rss_bytes_per_session=col(lambda r: r["rss_bytes_per_session"]),
            rss_kib_before=col(lambda r: r["rss_kib_before"]["router"]),
            other_busy_cores=col(lambda r: r["other_busy_cores"]),
            other_niced_cores=col(lambda r: r["other_niced_cores"])))
    return out


def print_summary(summary):
    print("\nmedian [min-max] over repeats")
    by = {(s["router"], s["transport"]): s for s in summary}
    for s in summary:
        print("\n%s over %s, %d sessions, %d repeat(s):" % (s["router"], s["transport"], s["sessions"], s["repeats"]))
        print("  requests/s             %s" % spread(s["requests_per_s"]))
        print("  latency                p50 %s us, p99 %s us, p99.9 %s us" % (
            spread(s["p50_us"]), spread(s["p99_us"]), spread(s["p999_us"])))
        print("  CPU/request router     %s ns (user %s + sys %s; schedstat %s; %s of a core)" % (
            spread(s["router_ns_per_request"]), spread(s["router_user_ns_per_request"]),
            spread(s["router_sys_ns_per_request"]), spread(s["router_sched_ns_per_request"]),
            spread(s["router_util"], "%.2f")))
        print("  CPU/request back end   %s ns, client %s ns" % (spread(s["backend_ns_per_request"]),
                                                               spread(s["client_ns_per_request"])))
        print("  set-up                 %s s for all sessions; router %s us CPU/session (schedstat; /proc stat %s)" % (
            spread(s["setup_s"], "%.3f"), spread(s["setup_router_us_per_session"]),
            spread(s["setup_router_stat_us_per_session"])))
        print("  RSS/session router     %s bytes (before the first session: %s KiB)" % (
            spread(s["rss_bytes_per_session"]), spread(s["rss_kib_before"])))
        print("  other load             %s cores (niced: %s)" % (spread(s["other_busy_cores"], "%.2f"),
                                                               spread(s["other_niced_cores"], "%.2f")))
    for kind in ("moraine", "glacier2"):
        tcp, tls = by.get((kind, "tcp")), by.get((kind, "tls"))
        if tcp and tls:
            a, b = med(tcp["router_ns_per_request"]), med(tls["router_ns_per_request"])
            sa, sb = med(tcp["setup_router_us_per_session"]), med(tls["setup_router_us_per_session"])
            ra, rb = med(tcp["rss_bytes_per_session"]), med(tls["rss_bytes_per_session"])
            print("\nTLS cost, %s: router CPU/request %+.0f ns (x%.2f), set-up %+.0f us/session, RSS %+.0f B/session"
                  % (kind, b - a, b / a, sb - sa, rb - ra))


def kernel_floor(a):
    """One bench_kernel_relay run at this load (tcp, --rate only), as its JSON; None if skipped."""
    if not a.kernel_bench or "tcp" not in a.transport_list or a.rate <= 0:
        return None
    if not os.access(a.kernel_bench, os.X_OK):
        log("no %s: build it (perf/README.md); skipping the kernel floor" % a.kernel_bench)
        return None
    if a.wait_quiet > 0:
        cc.wait_quiet(a.wait_quiet)
    cmd = [a.kernel_bench, "--clients", str(a.sessions), "--rate", str(a.rate), "--pacing", a.pacing,
           "--warmup", str(a.warmup),
           "--seconds", str(a.window), "--json"]
    log("bench_kernel_relay --clients %d --rate %g --pacing %s" % (a.sessions, a.rate, a.pacing))
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=a.warmup + a.window + 120)
    except subprocess.TimeoutExpired:
        log("  bench_kernel_relay timed out")
        return None
    if out.returncode != 0:
        log("  bench_kernel_relay failed: %s" % out.stderr.strip())
        return None
    k = json.loads(out.stdout)
    log("  relay %.0f ns/request (user %.0f + sys %.0f), %.2f syscalls/request, p50 %.0f us p99 %.0f us" % (
        k["cpu_ns_per_request"], k["user_ns_per_request"], k["sys_ns_per_request"], k["syscalls_per_request"],
        k["p50_us"], k["p99_us"]))
    return k


def setup_floor(a):
    """One bench_kernel_setup run for SESSIONS sessions (tcp only), the floor under set-up CPU per
    session: its rounds' JSON lines; [] if skipped."""
    if not a.setup_bench or "tcp" not in a.transport_list:
        return []
    if not os.access(a.setup_bench, os.X_OK):
        log("no %s: build it (perf/README.md); skipping the set-up floor" % a.setup_bench)
        return []
    cmd = [a.setup_bench, "--sessions", str(a.sessions), "--rounds", "3", "--json"]
    log("bench_kernel_setup --sessions %d --rounds 3" % a.sessions)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        log("  bench_kernel_setup timed out")
        return []
    if out.returncode != 0:
        log("  bench_kernel_setup failed: %s" % out.stderr.strip())
        return []
    rounds = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    log("  set-up floor %s us/session, %s syscalls/session" % (
        spread([r["cpu_us_per_session"] for r in rounds], "%.1f"), spread([r["syscalls_per_session"] for r in rounds], "%.1f")))
    return rounds


def print_setup_floor(rounds, summary):
    """The set-up floor's spread and each router's set-up CPU against it (medians; tcp)."""
    if not rounds:
        return
    floor = [r["cpu_us_per_session"] for r in rounds]
    print("\nset-up floor (bench_kernel_setup, %d round(s)): %s us/session (user %s + sys %s), %s syscalls/session" % (
        len(rounds), spread(floor, "%.1f"), spread([r["user_us_per_session"] for r in rounds], "%.1f"),
        spread([r["sys_us_per_session"] for r in rounds], "%.1f"), spread([r["syscalls_per_session"] for r in rounds], "%.1f")))
    for s in summary:
        if s["transport"] == "tcp" and s["setup_router_us_per_session"]:
            v = med(s["setup_router_us_per_session"])
            print("  %-10s %.0f us/session = floor %+.0f us (x%.2f of the floor)" % (s["router"], v, v - med(floor),
                                                                                  v / med(floor)))


def print_floor(kernel, summary):
    """The floor's spread and each router's distance to it (medians; tcp)."""
    if not kernel:
        return
    floor = [k["cpu_ns_per_request"] for k in kernel]
    print("\nkernel floor (bench_kernel_relay, %d run(s)): %s ns/request (user %s + sys %s), %s syscalls/request, "
          "p50 %s us, p99 %s us" % (len(kernel), spread(floor), spread([k["user_ns_per_request"] for k in kernel]),
                                   spread([k["sys_ns_per_request"] for k in kernel]),
                                   spread([k["syscalls_per_request"] for k in kernel], "%.2f"),
                                   spread([k["p50_us"] for k in kernel]), spread([k["p99_us"] for k in kernel])))
    for s in summary:
        if s["transport"] == "tcp" and s["router_ns_per_request"]:
            r = med(s["router_ns_per_request"])
            print("  %-10s %.0f ns/request = floor %+.0f ns (x%.2f of the floor)" % (s["router"], r, r - med(floor),
                                                                                    r / med(floor)))


# ---------------------------------------------------------------------------------------------


def build_peers(build_dir):
    """cmake configure (once) and build of perf/rpc (the Ice peers) into build_dir; returns {name: path}."""
    src = os.path.join(PERF, "rpc")
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", src, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], check=True,
                       timeout=300, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build_dir, "-j2"], check=True, timeout=900, stdout=subprocess.DEVNULL)
    return {b: os.path.join(build_dir, b) for b in ("rpc-backend", "rpc-load", "update-burst")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--outstanding", type=int, default=4, help="twoway calls in flight per session (default 4)")
    ap.add_argument("--rate", type=float, default=0,
                    help="requests/s in all, paced by rpc-load (default 0: closed loop, as fast as it goes)")
    ap.add_argument("--pacing", default="ms", choices=("ms", "even"),
                    help="with --rate: 'ms' sends the calls due each millisecond together (default), 'even' one "
                         "call every 1/RATE s, as independent clients; the kernel floor is paced the same way")
    ap.add_argument("--op", default="echo", choices=("echo", "ping"))
    ap.add_argument("--payload", type=int, default=16, help="bytes of the echo string (default 16)")
    ap.add_argument("--window", type=float, default=20, help="seconds measured (default 20)")
    ap.add_argument("--warmup", type=float, default=3, help="seconds of load before the window (default 3)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--transports", default="tcp,tls")
    ap.add_argument("--routers", default="moraine,glacier2")
    ap.add_argument("--setup-timeout", type=float, default=60)
    ap.add_argument("--wait-quiet", type=float, default=10,
                    help="before each run, wait up to this many s for other un-niced load under 0.5 cores (0: don't)")
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build-perf", "bin"), help="where moraine-router is")
    ap.add_argument("--rpc-build", default=os.path.join(REPO, "build-perf-rpc"),
                    help="build directory of perf/rpc (configured and built by this script)")
    ap.add_argument("--out", default=None, help="JSON result file (default perf/out/rpc_compare-<time>.json)")
    ap.add_argument("--moraine-threads", type=int, default=None,
                    help="moraine-router --threads N (default: none given, i.e. one shard per usable CPU)")
    ap.add_argument("--kernel-bench", default=None,
                    help="bench_kernel_relay binary (default BIN_DIR/bench_kernel_relay; '' to skip)")
    ap.add_argument("--setup-bench", default=None,
                    help="bench_kernel_setup binary (default BIN_DIR/bench_kernel_setup; '' to skip)")
    a = ap.parse_args()
    if a.kernel_bench is None:
        a.kernel_bench = os.path.join(a.bin_dir, "bench_kernel_relay")
    if a.setup_bench is None:
        a.setup_bench = os.path.join(a.bin_dir, "bench_kernel_setup")
    a.transport_list = [t for t in a.transports.split(",") if t]
    kinds = [k for k in a.routers.split(",") if k]
    if any(t not in ("tcp", "tls") for t in a.transport_list) or any(k not in ("moraine", "glacier2") for k in kinds):
        sys.exit("--transports: tcp,tls; --routers: moraine,glacier2")
    os.chdir(REPO)

    out_json, logdir, stamp = cc.output_paths("rpc_compare", a.out)
    cc.stop_on_sigterm()

    log("building perf/rpc into %s" % a.rpc_build)
    peers = build_peers(a.rpc_build)
    tmp = tempfile.mkdtemp(prefix="moraine-rpc-compare-")
    bins, bin_info = {}, {}
    srcs = dict(peers, **{"moraine-router": os.path.join(a.bin_dir, "moraine-router")})
    for b, src in srcs.items():
        if not os.access(src, os.X_OK):
            sys.exit("missing %s" % src)
        bins[b] = os.path.join(tmp, b)
        shutil.copy2(src, bins[b])  # a rebuild during the comparison changes nothing
        bin_info[b] = dict(path=src, sha256=cc.sha256(bins[b]),
                           mtime=datetime.datetime.fromtimestamp(os.path.getmtime(src)).isoformat())
    bin_info["glacier2router"] = dict(path="/usr/bin/glacier2router", sha256=cc.sha256("/usr/bin/glacier2router"))
    a.cfgs, a.backend_cfg, certs = write_configs(a, tmp)
    a.tls_ctx = tls_certs.probe_context(certs) if certs else None
    for t, c in a.cfgs.items():  # keep a copy of what the routers read (the cert paths point to tmp)
        shutil.copy2(c["router_cfg"], os.path.join(logdir, os.path.basename(c["router_cfg"])))
    git = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    result = dict(started=stamp, argv=sys.argv, git_head=git, binaries=bin_info, logs=logdir,
                  machine=dict(cpus=cc.NCPU, kernel=os.uname().release,
                               cpu_model=next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                                               if l.startswith("model name")), "?")),
                  config=dict(sessions=a.sessions, outstanding=a.outstanding, rate=a.rate, pacing=a.pacing, op=a.op,
                              moraine_threads=a.moraine_threads,
                              payload=a.payload, window_s=a.window, warmup_s=a.warmup, repeats=a.repeats,
                              transports=a.transport_list, routers=kinds,
                              router_cfg={t: open(c["router_cfg"]).read() for t, c in a.cfgs.items()}),
                  runs=[], kernel=[], setup_floor=[])
    t0 = time.monotonic()

    def measure():
        for rep in range(1, a.repeats + 1):
            k = kernel_floor(a)
            if k:
                result["kernel"].append(k)
            result["setup_floor"].extend(dict(repeat=rep, **r) for r in setup_floor(a))
            for tr in a.transport_list:
                for kind in kinds:
                    log("%s over %s, %d sessions, repeat %d" % (kind, tr, a.sessions, rep))
                    r = one_run(kind, tr, rep, a, bins, logdir)
                    result["runs"].append(r)
                    if r.get("ok"):
                        c = r["cpu"]
                        log("  %.0f req/s, p50 %.0f us p99 %.0f us; router %.0f ns/request (user %.0f + sys %.0f); "
                            "set-up %.0f us/session; RSS %.0f B/session; other load %.2f cores" % (
                                r["requests_per_s"], r["p50_us"], r["p99_us"], c["router"]["ns_per_request"],
                                c["router"]["user_ns_per_request"], c["router"]["sys_ns_per_request"],
                                r["setup_sched_us_per_session"]["router"], r["rss_bytes_per_session"],
                                r["other_busy_cores"]))
                    cc.save_json(result, out_json)

    def add_summary(res):
        res["summary"] = summarise(res["runs"])

    def report(res):
        print_runs(res["runs"])
        print_summary(res["summary"])
        print_floor(res["kernel"], res["summary"])
        print_setup_floor(res["setup_floor"], res["summary"])

    return cc.run_and_report(result, t0, out_json, logdir, tmp, measure, add_summary, report)


if __name__ == "__main__":
    sys.exit(main())
