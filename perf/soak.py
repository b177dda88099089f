#!/usr/bin/python3
"""soak.py: moraine-router under a steady mixed load for a long time; watches its memory, file
descriptors and CPU for drift and checks that nothing is lost. Not part of CI.

  /usr/bin/python3 perf/soak.py [--duration 1800] [--sample 60] [--bin-dir build/bin]
        [--clock-sessions 1000] [--tick-rate 1] [--churn-rate 20] [--rpc-rate 50] [--callback-rate 10]
        [--ports auto|CLIENT,SERVER,TOPICMANAGER,PUBLISH] [--rpc-build build-perf-rpc] [--out FILE]

What runs, all on loopback (every process a child of this script, stopped by PID at the end, on
Ctrl-C and on SIGTERM; children also get SIGTERM if this script dies):
  router     <bin-dir>/moraine-router --ice-config router.cfg: a Glacier2 property file
             written for the run on free ports (or --ports), Glacier2/NullPermissionsVerifier
             (any user: no crypt cost per session), SessionTimeout 30, client and server
             endpoints, and the embedded topic service (IceStorm.TopicManager/Publish.Endpoints).
             The demo's ports (4063, 4064, 10000, 10001) are never assumed free.
  clock      clock-subscriber --sessions N (one oneway Clock subscriber per session, through the
             router) and clock-publisher --rate R on topic `time`: N x R events/s delivered.
  rpc        rpc-load (perf/rpc, from --rpc-build, default build-perf-rpc) with 10 sessions paced
             at --rpc-rate twoway echo calls/s to rpc-backend, through the router. Without those
             binaries, the Python load process below makes the calls (sayHello) instead.
  churn      a Python Ice 3.7 load process (this script with --role load): --churn-rate sessions
             per second, each on its own connection: createSession, one routed sayHello (so the
             router's routing table gets an entry), then every other one destroySession + a
             graceful close, the others a forceful close without destroySession (the router must
             free the session on connection loss). Its communicator is renewed every 500 sessions.
  callbacks  the same process keeps 4 long-lived sessions with a callback adapter
             (createObjectAdapterWithRouter); they call callMeBack at --callback-rate in all, and the
             back end calls each client back (twoway) through the router's server endpoint.
  back end   tests/interop/peers/backend.py (Python Ice: hello, callMeBack) for churn and callbacks.

Every --sample seconds (default 60; once at t=0 when all is up, with the counts since the load
started 2 s earlier) it prints one line: the router's VmRSS, open file descriptors
(/proc/PID/fd), CPU share over the interval, and the load's counts for the interval (sessions
created / destroyed / dropped / failed, calls ok / failed, callbacks ok / received / failed,
ticks delivered and lost, subscriber sessions up / dropped) and the CPU of the load processes.
At the end: a summary with the RSS and fd trend (average of the first quarter of the samples vs
the last quarter, and the maximum), the totals, the checks (nothing lost or failed, the router
alive and exiting 0 on SIGTERM), and a JSON file perf/out/soak-<time>.json with every sample
(logs and router.cfg in perf/out/soak-<time>/). Exit code 0 when every check holds; the trend
is reported, not judged.

Default load, sized for 2 shared cores: 1,000 events/s fan-out, 20 sessions/s churn, 50 RPC/s,
10 callbacks/s. Measured (2 vCPU, 2026-11-23, --duration 120): router 2.8% of a core, all the load
processes together 7%; set-up of the 1,000 subscriber sessions about 1 s.
"""
import argparse
import collections
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time

PERF = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(PERF)
INTEROP = os.path.join(REPO, "tests", "interop")
PYTHON = "/usr/bin/python3"
HOST = "127.0.0.1"
CALLBACK_SESSIONS = 4
RPC_SESSIONS = 10
CHURN_WORKERS = 2
RENEW_EVERY = 500  # churned sessions per communicator of a churn worker

# perf/clock_compare.py: children by PID (SIGTERM, SIGKILL after 5 s, PR_SET_PDEATHSIG), /proc
# readers, readiness probes, clock-subscriber's status line, output paths; demo/clock/run_demo.py.
from clock_compare import (ALL_UP, STATUS, Proc, RunError, cpu_times, log, output_paths,  # noqa: E402
                           save_json, stop_on_sigterm, wait_ready)
sys.path.insert(0, os.path.join(REPO, "demo", "clock"))
from run_demo import free_port, rss_kib  # noqa: E402


# ---------------------------------------------------------------------------------------------
# The load process (--role load): churn, callbacks and, without rpc-load, RPC calls.
# It prints `load {json}` once a second (cumulative counters) and `final {json}` when stopped.

class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = collections.Counter()
        self.errors = {}  # counter name -> first error text

    def add(self, name, n=1):
        with self.lock:
            self.c[name] += n

    def fail(self, name, e):
        with self.lock:
            self.c[name] += 1
            self.errors.setdefault(name, "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:300]))

    def json(self):
        with self.lock:
            d = dict(self.c)
            d["first_errors"] = dict(self.errors)
        return json.dumps(d, sort_keys=True)


def paced(rate, stop, body):
    """Calls body(i) at `rate` per second until stop is set; a body slower than the pace delays
    the next calls (counted by the caller through its own counters), never bunches them up."""
    period = 1.0 / rate
    next_t = time.monotonic()
    i = 0
    while not stop.is_set():
        i += 1
        body(i)
        next_t += period
        delay = next_t - time.monotonic()
        if delay < -1.0:  # more than a second behind: start the pace again from now
            next_t = time.monotonic()
        elif delay > 0:
            stop.wait(delay)


def role_load(a):
    sys.path.insert(0, INTEROP)
    import Ice
    import harness  # loads tests/interop/Demo.ice and imports Glacier2 safely (harness._import_glacier2)
    import Glacier2
    Demo = harness.Demo

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    counters = Counters()
    router_str = "Glacier2/router:tcp -h %s -p %d" % (HOST, a.client_port)
    hello_str = "hello:tcp -h %s -p %d" % (HOST, a.backend_port)

    def communicator(with_router):
        init = Ice.InitializationData()
        init.properties = Ice.createProperties()
        props = {"Ice.Warn.Connections": "0", "Ice.Default.InvocationTimeout": "5000",
                 "Ice.Override.ConnectTimeout": "3000", "Ice.Override.CloseTimeout": "3000",
                 "Ice.RetryIntervals": "-1"}
        if with_router:
            props["Ice.Default.Router"] = router_str
        for k, v in props.items():
            init.properties.setProperty(k, v)
        return Ice.initialize(init)

    def churn_worker(w, rate):
        state = {"ic": None, "made": 0}

        def one(i):
            if state["ic"] is None or state["made"] >= RENEW_EVERY:
                if state["ic"] is not None:
                    state["ic"].destroy()
                state["ic"], state["made"] = communicator(False), 0
                state["base"] = Glacier2.RouterPrx.uncheckedCast(state["ic"].stringToProxy(router_str))
                state["hello"] = state["ic"].stringToProxy(hello_str)
            state["made"] += 1
            cid = "churn-%d-%d" % (w, i)
            router = state["base"].ice_connectionId(cid)
            destroy = i % 2 == 0
            try:
                router.createSession(cid, "x")
                counters.add("sessions_created")
                hello = Demo.HelloPrx.uncheckedCast(state["hello"].ice_router(router).ice_connectionId(cid))
                if hello.sayHello(cid) != "hello " + cid:
                    raise RuntimeError("wrong answer")
                counters.add("churn_calls_ok")
                if destroy:
                    router.destroySession()
                    counters.add("sessions_destroyed")
                else:
                    counters.add("sessions_dropped")
            except (Ice.Exception, RuntimeError) as e:
                counters.fail("sessions_failed", e)
            finally:
                conn = router.ice_getCachedConnection()
                if conn is not None:
                    try:
                        conn.close(Ice.ConnectionClose.Gracefully if destroy else Ice.ConnectionClose.Forcefully)
                    except Ice.Exception as e:
                        counters.fail("close_failed", e)
        try:
            paced(rate, stop, one)
        finally:
            if state["ic"] is not None:
                state["ic"].destroy()

    class CallbackI(Demo.Callback):
        def ping(self, msg, current):
            counters.add("callbacks_received")

    sessions = []
    try:
        for k in range(CALLBACK_SESSIONS):
            ic = communicator(True)
            sessions.append(ic)
            router = Glacier2.RouterPrx.uncheckedCast(ic.getDefaultRouter())
            router.createSession("callback-%d" % k, "x")
            adapter = ic.createObjectAdapterWithRouter("Callbacks", router)
            cb = Demo.CallbackPrx.uncheckedCast(adapter.add(CallbackI(),
                                                            Ice.Identity("cb", router.getCategoryForClient())))
            adapter.activate()
            hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy(hello_str))
            hello.sayHello("warm-up")
            sessions[-1] = (ic, hello, cb)
    except Ice.Exception as e:
        print("load: callback session set-up failed: %s: %s" % (type(e).__name__, e), flush=True)
        for s in sessions:
            (s[0] if isinstance(s, tuple) else s).destroy()
        return 1

    def callback_worker(k, rate):
        _, hello, cb = sessions[k]

        def one(i):
            counters.add("callbacks_sent")
            try:
                hello.callMeBack(cb, "cb-%d-%d" % (k, i))
                counters.add("callbacks_ok")
            except Ice.Exception as e:
                counters.fail("callbacks_failed", e)
        paced(rate, stop, one)

    def rpc_worker(rate):
        def one(i):
            _, hello, _ = sessions[i % len(sessions)]
            try:
                hello.sayHello("rpc-%d" % i)
                counters.add("rpc_ok")
            except Ice.Exception as e:
                counters.fail("rpc_failed", e)
        paced(rate, stop, one)

    threads = [threading.Thread(target=churn_worker, args=(w, a.churn_rate / CHURN_WORKERS))
               for w in range(CHURN_WORKERS) if a.churn_rate > 0]
    threads += [threading.Thread(target=callback_worker, args=(k, a.callback_rate / CALLBACK_SESSIONS))
                for k in range(CALLBACK_SESSIONS) if a.callback_rate > 0]
    if a.python_rpc_rate > 0:
        threads.append(threading.Thread(target=rpc_worker, args=(a.python_rpc_rate,)))
    for t in threads:
        t.daemon = True
        t.start()
    print("ready", flush=True)
    while not stop.wait(1.0):
        print("load " + counters.json(), flush=True)
    for t in threads:
        t.join(10)
    print("final " + counters.json(), flush=True)
    for ic, _, _ in sessions:
        ic.destroy()
    return 0


# ---------------------------------------------------------------------------------------------
# The driver

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=1800, help="seconds of steady load (default 30 min)")
    ap.add_argument("--sample", type=float, default=60, help="seconds between samples")
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"),
                    help="moraine-router, clock-subscriber, clock-publisher")
    ap.add_argument("--rpc-build", default=os.path.join(REPO, "build-perf-rpc"), help="rpc-load and rpc-backend")
    ap.add_argument("--clock-sessions", type=int, default=1000)
    ap.add_argument("--tick-rate", type=float, default=1, help="clock-publisher ticks/s")
    ap.add_argument("--churn-rate", type=float, default=20, help="sessions set up and ended per second")
    ap.add_argument("--rpc-rate", type=float, default=50, help="twoway calls/s")
    ap.add_argument("--callback-rate", type=float, default=10, help="callMeBack calls (so callbacks)/s")
    ap.add_argument("--threads", type=int, default=0, help="moraine-router --threads (0: one per core)")
    ap.add_argument("--ports", default="auto", help="auto, or CLIENT,SERVER,TOPICMANAGER,PUBLISH")
    ap.add_argument("--setup-timeout", type=float, default=120)
    ap.add_argument("--out", help="JSON result path (default perf/out/soak-<time>.json)")
    # --role load: the Python load process (internal)
    ap.add_argument("--role", default="driver", choices=["driver", "load"], help=argparse.SUPPRESS)
    ap.add_argument("--client-port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--backend-port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--python-rpc-rate", type=float, default=0, help=argparse.SUPPRESS)
    return ap.parse_args()


class LineReader(threading.Thread):
    """Reads a child's stdout (lines ending in \\r or \\n), copies it to a file and hands each
    line to on_line(line)."""

    def __init__(self, proc, raw_path, on_line):
        super().__init__(daemon=True)
        self.proc, self.raw, self.on_line = proc, open(raw_path, "wb"), on_line

    def run(self):
        buf = b""
        fd = self.proc.popen.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self.raw.write(chunk)
            self.raw.flush()
            buf += chunk
            parts = re.split(rb"[\r\n]", buf)
            buf = parts.pop()
            for part in parts:
                if part.strip():
                    self.on_line(part.decode(errors="replace"))
        if buf.strip():
            self.on_line(buf.decode(errors="replace"))
        self.raw.close()


class Latest:
    """The latest parsed state of each load source, updated by the LineReaders."""

    def __init__(self):
        self.lock = threading.Lock()
        self.clock = None         # clock-subscriber status: up, failed, dropped, lost; plus ticks (sum)
        self.clock_ticks = 0
        self.clock_all_up = None
        self.rpc = None           # rpc-load: completed, errors
        self.rpc_up = False
        self.rpc_result = None
        self.load = None          # the load process's counters
        self.load_ready = False
        self.load_final = None

    def on_clock(self, line):
        m = STATUS.search(line)
        if m:
            with self.lock:
                self.clock = dict(elapsed=float(m.group(1)), up=int(m.group(2)), failed=int(m.group(3)),
                                  dropped=int(m.group(4)), ticks=int(m.group(5)), lost=int(m.group(6)),
                                  p50=float(m.group(7)), p99=float(m.group(8)))
                self.clock_ticks += int(m.group(5))
        m = ALL_UP.search(line)
        if m:
            with self.lock:
                self.clock_all_up = (int(m.group(1)), float(m.group(2)))

    def on_rpc(self, line):
        with self.lock:
            m = re.match(r"status [\d.]+ completed (\d+) errors (\d+)", line)
            if m:
                self.rpc = dict(ok=int(m.group(1)), failed=int(m.group(2)))
            elif line.startswith("sessions ") and " up in " in line:
                self.rpc_up = True
            elif line.startswith("result "):
                self.rpc_result = json.loads(line[len("result "):])

    def on_load(self, line):
        with self.lock:
            if line == "ready":
                self.load_ready = True
            elif line.startswith("load "):
                self.load = json.loads(line[len("load "):])
            elif line.startswith("final "):
                self.load_final = self.load = json.loads(line[len("final "):])

    def counts(self):
        """Cumulative counts, one flat dict."""
        with self.lock:
            ld = dict(self.load or {})
            c = {k: ld.get(k, 0) for k in ("sessions_created", "sessions_destroyed", "sessions_dropped",
                                           "sessions_failed", "churn_calls_ok", "close_failed", "callbacks_sent",
                                           "callbacks_ok", "callbacks_received", "callbacks_failed")}
            if self.rpc is not None:
                c["calls_ok"], c["calls_failed"] = self.rpc["ok"], self.rpc["failed"]
            else:
                c["calls_ok"], c["calls_failed"] = ld.get("rpc_ok", 0), ld.get("rpc_failed", 0)
            ck = self.clock or {}
            c["ticks"] = self.clock_ticks
            c["ticks_lost"] = ck.get("lost", 0)
            c["subscribers_up"] = ck.get("up", 0)
            c["subscribers_failed"] = ck.get("failed", 0)
            c["subscribers_dropped"] = ck.get("dropped", 0)
            c["tick_p99_ms"] = ck.get("p99")
            c["first_errors"] = ld.get("first_errors", {})
            return c


def fd_count(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def wait_for(pred, timeout, what, procs):
    end = time.monotonic() + timeout
    while not pred():
        for p in procs:
            if not p.alive():
                raise RunError("%s exited (%s) while waiting for %s: %s" % (p.name, p.popen.returncode, what, p.tail()))
        if time.monotonic() >= end:
            raise RunError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(0.1)


def fmt_sample(s, prev):
    d = {k: s["counts"][k] - (prev["counts"][k] if prev else 0)
         for k in ("sessions_created", "sessions_destroyed", "sessions_dropped", "sessions_failed", "calls_ok",
                   "calls_failed", "callbacks_ok", "callbacks_received", "callbacks_failed", "ticks")}
    c = s["counts"]
    return ("%6.0fs  rss %6.1f MiB  fds %5d  cpu %5.1f%%  | sessions +%d/-%d destroyed/-%d dropped, %d failed"
            "  | calls +%d, %d failed  | callbacks +%d ok, +%d received, %d failed  | ticks +%d, lost %d, subscribers"
            " %d up %d dropped  | load cpu %.0f%%"
            % (s["t"], s["rss_kib"] / 1024.0, s["fds"], s["cpu_pct"] if s["cpu_pct"] is not None else 0.0,
               d["sessions_created"], d["sessions_destroyed"], d["sessions_dropped"], d["sessions_failed"],
               d["calls_ok"], d["calls_failed"], d["callbacks_ok"], d["callbacks_received"], d["callbacks_failed"],
               d["ticks"], c["ticks_lost"], c["subscribers_up"], c["subscribers_dropped"],
               s["load_cpu_pct"] if s["load_cpu_pct"] is not None else 0.0))


def trend(values):
    """First-quarter average, last-quarter average, growth, max over a series of samples."""
    if not values:
        return None
    q = max(1, len(values) // 4)
    first, last = statistics.mean(values[:q]), statistics.mean(values[-q:])
    return dict(first_quarter_avg=first, last_quarter_avg=last, growth=last - first,
                growth_pct=100.0 * (last - first) / first if first else None, max=max(values), samples=len(values))


def driver(a):
    stop_on_sigterm()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by the router and the load

    bins = {n: os.path.join(a.bin_dir, n) for n in ("moraine-router", "clock-subscriber", "clock-publisher")}
    for n, p in bins.items():
        if not os.access(p, os.X_OK):
            print("missing %s (--bin-dir)" % p, file=sys.stderr)
            return 2
    rpc_bins = {n: os.path.join(a.rpc_build, n) for n in ("rpc-load", "rpc-backend")}
    use_rpc_load = a.rpc_rate > 0 and all(os.access(p, os.X_OK) for p in rpc_bins.values())

    if a.ports == "auto":
        client, server, tm, pub = (free_port() for _ in range(4))
    else:
        client, server, tm, pub = (int(x) for x in a.ports.split(","))
    backend_port, rpc_port = free_port(), free_port()
    out_json, logdir, stamp = output_paths("soak", a.out)
    cfg = os.path.join(logdir, "router.cfg")
    with open(cfg, "w") as f:
        f.write("# written by perf/soak.py\n")
        for k, v in [("Glacier2.InstanceName", "Glacier2"),
                     ("Glacier2.Client.Endpoints", "tcp -h %s -p %d" % (HOST, client)),
                     ("Glacier2.Server.Endpoints", "tcp -h %s -p %d" % (HOST, server)),
                     ("Glacier2.PermissionsVerifier", "Glacier2/NullPermissionsVerifier"),
                     ("Glacier2.SessionTimeout", "30"),
                     ("IceStorm.InstanceName", "IceStorm"),
                     ("IceStorm.TopicManager.Endpoints", "tcp -h %s -p %d" % (HOST, tm)),
                     ("IceStorm.Publish.Endpoints", "tcp -h %s -p %d" % (HOST, pub)),
                     ("IceStorm.Transient", "1"),  # topics in memory: a soak measures the router, not the disk
                     ("Ice.Warn.Connections", "0")]:
            f.write("%s=%s\n" % (k, v))

    result = dict(script="soak", started=stamp, args=vars(a), ports=dict(client=client, server=server,
                  topic_manager=tm, publish=pub, backend=backend_port, rpc_backend=rpc_port if use_rpc_load else None),
                  rpc_source="rpc-load" if use_rpc_load else "python", logs=logdir, samples=[], ok=False)
    latest = Latest()
    procs = []  # in start order; stopped in reverse
    router = None
    t_begin = time.monotonic()

    def start(name, cmd, pipe=False):
        p = Proc(name, cmd, logdir, pipe_stdout=pipe)
        procs.append(p)
        return p

    def load_cpu():
        total = 0.0
        for p in procs:
            if p is not router and p.alive():
                try:
                    ut, st = cpu_times(p.pid)
                    total += ut + st
                except OSError:
                    pass
        return total

    def sample(t0, prev):
        now = time.monotonic()
        ut, st = cpu_times(router.pid)
        lc = load_cpu()
        s = dict(t=now - t0, wall=time.time(), rss_kib=rss_kib(router.pid), fds=fd_count(router.pid),
                 cpu_s=ut + st, load_cpu_s=lc, counts=latest.counts(), mono=now)
        s["cpu_pct"] = 100.0 * (s["cpu_s"] - prev["cpu_s"]) / (now - prev["mono"]) if prev else None
        s["load_cpu_pct"] = 100.0 * (lc - prev["load_cpu_s"]) / (now - prev["mono"]) if prev else None
        return s

    failures = []
    try:
        cmd = [bins["moraine-router"], "--ice-config", cfg]
        if a.threads:
            cmd += ["--threads", str(a.threads)]
        router = start("moraine-router", cmd)
        for port in (client, server, tm, pub):
            wait_ready(router, port)
        result["rss_kib_start"] = rss_kib(router.pid)
        result["fds_start"] = fd_count(router.pid)
        backend = start("backend", [PYTHON, os.path.join(INTEROP, "peers", "backend.py"), str(backend_port)])
        wait_ready(backend, backend_port)
        if use_rpc_load:
            rpcb = start("rpc-backend", [rpc_bins["rpc-backend"],
                                         "--Bench.Endpoints=tcp -h %s -p %d" % (HOST, rpc_port)])
            wait_ready(rpcb, rpc_port)

        log("router up (pid %d, ports client %d server %d topics %d/%d); clock-subscriber: %d sessions"
            % (router.pid, client, server, tm, pub, a.clock_sessions))
        sub = start("clock-subscriber", [bins["clock-subscriber"], "--router", "tcp -h %s -p %d" % (HOST, client),
                                         "--topic-manager", "tcp -h %s -p %d" % (HOST, tm), "--user", "soak",
                                         "--password", "soak", "--sessions", str(a.clock_sessions),
                                         "--duration", str(int(a.duration + a.setup_timeout + 120))], pipe=True)
        LineReader(sub, os.path.join(logdir, "clock-subscriber.out"), latest.on_clock).start()
        wait_for(lambda: latest.clock is not None, 30, "clock-subscriber's first status line", [router, sub])
        time.sleep(0.5)
        start("clock-publisher", [bins["clock-publisher"], "--topic-manager", "tcp -h %s -p %d" % (HOST, tm),
                                  "--rate", str(a.tick_rate)])
        wait_for(lambda: latest.clock_all_up is not None, a.setup_timeout, "all clock-subscriber sessions up",
                 [router, sub])
        result["clock_setup"] = dict(sessions=latest.clock_all_up[0], seconds=latest.clock_all_up[1])
        log("%d subscriber sessions up in %.1f s; starting rpc (%s), churn and callbacks"
            % (latest.clock_all_up[0], latest.clock_all_up[1], result["rpc_source"]))

        if use_rpc_load:
            rl = start("rpc-load", [rpc_bins["rpc-load"], "--router", "tcp -h %s -p %d" % (HOST, client),
                                    "--target", "echo:tcp -h %s -p %d" % (HOST, rpc_port),
                                    "--sessions", str(RPC_SESSIONS), "--outstanding", "2", "--rate", str(a.rpc_rate),
                                    "--warmup", "0", "--window", str(a.duration + 5)], pipe=True)
            LineReader(rl, os.path.join(logdir, "rpc-load.out"), latest.on_rpc).start()
        ld = start("load", [PYTHON, os.path.abspath(__file__), "--role", "load", "--client-port", str(client),
                            "--backend-port", str(backend_port), "--churn-rate", str(a.churn_rate),
                            "--callback-rate", str(a.callback_rate),
                            "--python-rpc-rate", "0" if use_rpc_load else str(a.rpc_rate)], pipe=True)
        LineReader(ld, os.path.join(logdir, "load.out"), latest.on_load).start()
        wait_for(lambda: latest.load_ready and (latest.rpc_up or not use_rpc_load), 60, "the load to start", procs)
        time.sleep(2.0)  # let every source print a status line

        t0 = time.monotonic()
        s = sample(t0, None)
        result["samples"].append(s)
        log(fmt_sample(s, None))
        end = t0 + a.duration
        next_sample = t0 + a.sample
        while True:
            now = time.monotonic()
            if now >= end - 0.05:
                break
            dead = [p for p in procs if not p.alive() and not (p.name == "rpc-load" and latest.rpc_result)]
            if dead:
                raise RunError("%s exited (%s) during the soak: %s" % (dead[0].name, dead[0].popen.returncode,
                                                                       dead[0].tail()))
            if now >= next_sample - 0.05:
                s = sample(t0, result["samples"][-1])
                result["samples"].append(s)
                log(fmt_sample(s, result["samples"][-2]))
                next_sample += a.sample
            time.sleep(max(0.05, min(1.0, min(next_sample, end) - time.monotonic())))
        if result["samples"][-1]["t"] < a.duration - 1:
            s = sample(t0, result["samples"][-1])
            result["samples"].append(s)
            log(fmt_sample(s, result["samples"][-2]))
    except RunError as e:
        failures.append(str(e))
        log("FAILED: %s" % e)
    except KeyboardInterrupt:
        result["interrupted"] = True
        failures.append("interrupted")
        log("interrupted")
    finally:
        # The load first (it prints its final counts on SIGTERM), then the rest, the router last.
        try:
            for p in reversed(procs):
                if p.name == "load" and p.alive():
                    p.popen.terminate()
                    try:
                        p.popen.wait(15)
                    except subprocess.TimeoutExpired:
                        pass
            deadline = time.monotonic() + 10
            while use_rpc_load and not failures and latest.rpc_result is None and time.monotonic() < deadline \
                    and any(p.name == "rpc-load" and p.alive() for p in procs):
                time.sleep(0.1)
            time.sleep(0.3)  # the readers take the last lines
            final_counts = latest.counts()
            router_rc = None
            for p in reversed(procs):
                was_alive = p.alive()
                p.stop()
                if p is router:
                    router_rc = p.popen.returncode if was_alive else ("exited early: %s" % p.popen.returncode)
        except KeyboardInterrupt:
            for p in reversed(procs):
                p.stop()
            raise

    # ----- summary
    samples = result["samples"]
    for s in samples:
        s.pop("mono", None)
    result["router_exit_status"] = router_rc
    result["final_counts"] = final_counts
    result["rpc_load_result"] = latest.rpc_result
    result["rss_kib_trend"] = trend([s["rss_kib"] for s in samples])
    result["fds_trend"] = trend([s["fds"] for s in samples if s["fds"] is not None])
    cpus = [s["cpu_pct"] for s in samples if s["cpu_pct"] is not None]
    loads = [s["load_cpu_pct"] for s in samples if s["load_cpu_pct"] is not None]
    result["router_cpu_pct_avg"] = statistics.mean(cpus) if cpus else None
    result["load_cpu_pct_avg"] = statistics.mean(loads) if loads else None
    c = final_counts
    secs = samples[-1]["t"] if samples else 0.0
    expected_ticks = a.clock_sessions * a.tick_rate * secs
    # Between the first and the last sample (the final counts also hold the seconds after the end).
    ticks_in_run = samples[-1]["counts"]["ticks"] - samples[0]["counts"]["ticks"] if samples else 0
    checks = [
        ("the soak ran its full duration", not failures and bool(samples) and secs >= a.duration - 2,
         "; ".join(failures) or "%.0f s" % secs),
        ("router exited 0 on SIGTERM", router_rc == 0, "status %s" % router_rc),
        ("no tick lost", c["ticks_lost"] == 0, "%d lost" % c["ticks_lost"]),
        ("every subscriber session up for the whole run",
         c["subscribers_up"] == a.clock_sessions and c["subscribers_failed"] == 0 and c["subscribers_dropped"] == 0,
         "%d up, %d failed, %d dropped by the router" % (c["subscribers_up"], c["subscribers_failed"],
                                                         c["subscribers_dropped"])),
        ("ticks delivered ~ sessions x rate x time (>= 98%)", secs > 0 and ticks_in_run >= 0.98 * expected_ticks,
         "%d of %.0f expected in %.0f s" % (ticks_in_run, expected_ticks, secs)),
        ("no RPC failed", c["calls_failed"] == 0 and c["calls_ok"] > 0, "%d ok, %d failed" % (c["calls_ok"],
                                                                                          c["calls_failed"])),
        ("no churned session failed, every one ended",
         c["sessions_failed"] == 0 and c["sessions_created"] > 0
         and c["sessions_created"] == c["sessions_destroyed"] + c["sessions_dropped"] and c["close_failed"] == 0,
         "%d created, %d destroyed, %d dropped (closed without destroySession), %d failed"
         % (c["sessions_created"], c["sessions_destroyed"], c["sessions_dropped"], c["sessions_failed"])),
        ("every callback arrived",
         c["callbacks_failed"] == 0 and c["callbacks_sent"] > 0 and c["callbacks_ok"] == c["callbacks_sent"]
         and c["callbacks_received"] == c["callbacks_ok"],
         "%d sent, %d ok, %d received, %d failed" % (c["callbacks_sent"], c["callbacks_ok"], c["callbacks_received"],
                                                     c["callbacks_failed"])),
    ]
    result["checks"] = [dict(what=w, ok=bool(ok), detail=d) for w, ok, d in checks]
    result["ok"] = all(ok for _, ok, _ in checks)
    result["total_s"] = time.monotonic() - t_begin
    save_json(result, out_json)

    print()
    print("summary (%.0f s of load, %d samples every %.0f s)" % (secs, len(samples), a.sample))
    for name, tr, unit, scale in (("router RSS", result["rss_kib_trend"], "MiB", 1 / 1024.0),
                                  ("router fds", result["fds_trend"], "", 1.0)):
        if tr:
            print("  %-11s first quarter avg %.1f%s, last quarter avg %.1f%s (%+.1f%s, %+.1f%%), max %.1f%s"
                  % (name, tr["first_quarter_avg"] * scale, unit and " " + unit, tr["last_quarter_avg"] * scale,
                     unit and " " + unit, tr["growth"] * scale, unit and " " + unit, tr["growth_pct"] or 0.0,
                     tr["max"] * scale, unit and " " + unit))
    if result["router_cpu_pct_avg"] is not None:
        print("  router CPU  %.1f%% of a core on average; load processes %.1f%%"
              % (result["router_cpu_pct_avg"], result["load_cpu_pct_avg"] or 0.0))
    if latest.rpc_result:
        r = latest.rpc_result
        print("  rpc-load    %d requests, %.1f/s, p50 %.0f us, p99 %.0f us, max %.0f us, errors %d"
              % (r["requests"], r["requests_per_s"], r["p50_us"], r["p99_us"], r["max_us"], r["errors_total"]))
    for w, ok, d in checks:
        print("  %s %s: %s" % ("ok  " if ok else "FAIL", w, d))
    if c["first_errors"]:
        print("  first errors: %s" % c["first_errors"])
    print("\ntotal %.0f s\nJSON: %s\nlogs: %s" % (result["total_s"], out_json, logdir))
    return 0 if result["ok"] else 1


def main():
    a = parse_args()
    if a.role == "load":
        return role_load(a)
    return driver(a)


if __name__ == "__main__":
    sys.exit(main())
