#!/usr/bin/python3
"""takeover.py: a live upgrade (`moraine-router --takeover`, docs/takeover.md) under load.

  /usr/bin/python3 perf/takeover.py [--load clock|idle] [--topics embedded|icestorm] [--sessions 8000] [--rpc-sessions 1000]
        [--rpc-rate 10] [--drain-ms 15000] [--settle 5] [--after 5] [--runs 1]
        [--bin-dir build/bin] [--router BIN] [--rpc-build build/perf-rpc] [--json FILE]

Per run, all on loopback, with one property file for both routers (perf_common.write_router_config:
client and server endpoints, NullPermissionsVerifier, SessionTimeout 600, unbuffered, the
embedded topic service in memory; plus Moraine.Takeover.Socket and Moraine.Takeover.DrainTimeout
= --drain-ms):

  1. router A (`moraine-router --ice-config FILE`, one shard per core) starts;
  2. the load:
     clock  `clock-subscriber --sessions N` (each session subscribes a servant to topic `time`
            through the router) and `clock-publisher --rate 1`;
     idle   N sessions opened by this script over raw sockets (perf/idle_rss.py's RawSessions:
            validate connection, createSession, then silent), with no subscription; the
            publisher still ticks (nobody receives it);
     and, in both, `rpc-load --sessions M --rate M*R --pacing ms` (perf/rpc, real Ice 3.7 C++:
     M Glacier2 sessions, R twoway `echo` calls/s each, through the router to `rpc-backend`);
  3. steady state: --settle s once everything is up (the clock's ticks/s and p99 of those seconds
     are the baseline);
  4. router B starts with `--takeover SOCKET`; A hands its listening sockets over, moves every
     session that can move, and drains the rest until --drain-ms; meanwhile a prober opens a new
     connection every 20 ms and counts those refused or not validated;
  5. the load runs --after s more once A has exited; then, in idle mode, every raw session sends
     getCategoryForClient and must get its answer (through B): those closed or unanswered are lost.

--topics icestorm: the topics are served by the real IceStorm (icebox, transient, on the same
TopicManager and Publish ports) behind the router instead of the embedded topic service, as in
a classic Glacier2 deployment: clock-subscriber's sessions subscribe to it through the router,
clock-publisher publishes to it directly, and IceStorm delivers through the router's server
endpoint. Those sessions move like any other, and A relays the ticks IceStorm still sends it.

With the embedded topic service (the default), its subscribed sessions move too, and then the
topic service itself with the publisher's connection (docs/takeover.md "The topic service
moves"): A relays the ticks of sessions that already moved, then holds the publisher only while
its catalog and connections go; late ticks show in the p99 during the takeover, lost ones in
"ticks lost".
The idle mode measures the time to move N sessions that hold no subscription.

Reported per run: sessions moved / stayed (A's log) / adopted (B's log) / lost, the time A took to
move them (from its handover to the last session taken) and B to adopt them, A's exit after B
started, connections refused, clock ticks lost (clock-subscriber's count: gaps in a session's
sequence), the clock's ticks/s in steady state (the lowest second) and after A exited (the
lowest second: sessions closed at A's deadline, if any, get none), dropped sessions, the ticks' p99 in
steady state and during the takeover window (B's start to A's exit), RPC calls made and failed,
the routers' CPU (ms): A from B's start to its exit, B from its start to A's exit. --runs R > 1 prints min/median/max.
Every process is stopped by PID (SIGTERM, then SIGKILL after 5 s); every wait is bounded.
The descriptor limit (ulimit -n) must allow N + M sockets here and in each router.
"""
import argparse
import json
import os
import re
import resource
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.append(os.path.join(REPO, "tests", "interop"))
import ice_wire  # noqa: E402
from idle_rss import RawSessions  # noqa: E402
from perf_common import portable, stop, wait_listening, write_router_config  # noqa: E402

HOST = "127.0.0.1"
STATUS = re.compile(r"([\d.]+)s\s+sessions up (\d+) \(failed (\d+), dropped (\d+)\)\s+ticks/s (\d+)\s+lost (\d+)"
                    r"\s+p50 ([\d.]+) ms\s+p99 ([\d.]+) ms")
MOVED = re.compile(r"takeover: moved (\d+) session\(s\) \((\d+) bytes of session state\) to pid \d+ in (\d+) ms; "
                   r"(\d+) session\(s\) stay here")
ADOPTED = re.compile(r"takeover: adopted (\d+) session\(s\) \((\d+) bytes of session state\) from the old router in "
                     r"(\d+) ms; (\d+) refused")
HANDED_OVER = re.compile(r"takeover: handed \d+ listening socket\(s\) over .* drains its (\d+) session\(s\)")
CLOSED_AT_DEADLINE = re.compile(r"takeover: drained: .*closing the other (\d+) gracefully")


class Proc:
    """A child process, its output in a log file; `lines` collects what `pattern`-matching
    readers want (stdout split on \\r and \\n, each with its arrival time)."""

    def __init__(self, name, cmd, logdir, read_stdout=False):
        self.name = name
        self.log = os.path.join(logdir, name + ".log")
        self.lines = []
        out = open(self.log, "wb")
        self.popen = subprocess.Popen(cmd, stdout=subprocess.PIPE if read_stdout else out, stderr=out,
                                      preexec_fn=raise_fd_limit)
        self.thread = None
        if read_stdout:
            self.thread = threading.Thread(target=self._read, args=(out,), daemon=True)
            self.thread.start()

    def _read(self, out):
        buf = b""
        while True:
            chunk = self.popen.stdout.read1(65536)
            if not chunk:
                break
            out.write(chunk)
            out.flush()
            buf += chunk
            parts = re.split(rb"[\r\n]", buf)
            buf = parts.pop()
            if buf.endswith(b"   "):  # clock-subscriber's status line: \r first, spaces last, no newline
                parts.append(buf)
                buf = b""
            now = time.monotonic()
            for p in parts:
                if p.strip():
                    self.lines.append((now, p.decode(errors="replace")))

    def text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def stop(self):
        stop(self.popen)


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def wait_for(what, predicate, timeout, procs=()):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = predicate()
        if v:
            return v
        for p in procs:
            if p.popen.poll() is not None:
                raise RuntimeError("%s exited (%s) while waiting for %s" % (p.name, p.popen.returncode, what))
        time.sleep(0.05)
    raise RuntimeError("timed out after %.0f s waiting for %s" % (timeout, what))


class Prober(threading.Thread):
    """Opens a new connection to the client endpoint every `period` s and reads the validate
    connection message: counts ok, refused (or reset), and not validated within 2 s."""

    def __init__(self, port, period=0.02):
        super().__init__(daemon=True)
        self.port, self.period = port, period
        self.ok = self.refused = self.silent = 0
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(self.period):
            s = socket.socket()
            s.settimeout(2)
            try:
                s.connect((HOST, self.port))
                got = b""
                while len(got) < 14:
                    chunk = s.recv(14 - len(got))
                    if not chunk:
                        break
                    got += chunk
                if got == ice_wire.VALIDATE:
                    self.ok += 1
                else:
                    self.silent += 1
            except socket.timeout:
                self.silent += 1
            except OSError:
                self.refused += 1
            finally:
                s.close()


def probe_sessions(raw, timeout):
    """Each raw session asks getCategoryForClient (request id 2): (answered, closed, silent)."""
    request = ice_wire.request(2, "router", "Glacier2", "getCategoryForClient", b"")
    sel = selectors.DefaultSelector()
    buf, answered, closed = {}, 0, 0
    for s in raw.socks:
        try:
            s.sendall(request)
            buf[s] = b""
            sel.register(s, selectors.EVENT_READ)
        except OSError:
            closed += 1
    end = time.monotonic() + timeout
    while buf and time.monotonic() < end:
        for key, _ in sel.select(0.5):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            done = None
            if not data:
                done = "closed"
            else:
                buf[s] += data
                b = buf[s]
                while len(b) >= 14:  # heartbeats (validate), then the reply or a close-connection
                    size = struct.unpack("<i", b[10:14])[0]
                    if len(b) < size:
                        break
                    kind = b[8]
                    if kind == 4:
                        done = "closed"
                        break
                    if kind == 2 and struct.unpack("<i", b[14:18])[0] == 2:
                        done = "answered" if b[18] == 0 else "closed"
                        break
                    b = b[size:]
                buf[s] = b
            if done:
                sel.unregister(s)
                del buf[s]
                if done == "answered":
                    answered += 1
                else:
                    closed += 1
    sel.close()
    return answered, closed, len(buf)


def cpu_ms(pid):
    """utime + stime of the process so far (exited threads included), ms; None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def status_rows(proc, t0=None, t1=None):
    """clock-subscriber's per-second status lines between t0 and t1 (time.monotonic()). Each
    line's time is its own elapsed seconds plus the smallest (arrival - elapsed) seen: a line
    read late keeps the second it describes."""
    found = []
    for t, line in list(proc.lines):
        m = STATUS.search(line)
        if m:
            found.append((t - float(m.group(1)), m))
    offset = min((o for o, _ in found), default=0)
    rows = []
    for _, m in found:
        t = offset + float(m.group(1))
        if (t0 is None or t >= t0) and (t1 is None or t <= t1):
            rows.append(dict(t=t, up=int(m.group(2)), failed=int(m.group(3)), dropped=int(m.group(4)),
                             ticks=int(m.group(5)), lost=int(m.group(6)), p99=float(m.group(8))))
    return rows


def move_topics_to_icebox(cfg, logdir):
    """--topics icestorm: the IceStorm.* lines of the router's property file go to a file of their own
    for the real IceStorm (icebox), so the router has no embedded topic service. @return that file."""
    with open(cfg) as f:
        lines = f.readlines()
    path = os.path.join(logdir, "icestorm.cfg")
    with open(path, "w") as f:
        f.write("IceStorm.InstanceName=IceStorm\n")
        f.writelines(line for line in lines if line.startswith("IceStorm."))
    with open(cfg, "w") as f:
        f.writelines(line for line in lines if not line.startswith("IceStorm."))
    return path


def one_run(a, bins, rpc_bins, outdir, run):
    logdir = os.path.join(outdir, "run%d" % run)
    os.makedirs(logdir)
    cfg, client, tm = write_router_config(logdir, 600)
    if a.topics == "icestorm":
        icestorm_cfg = move_topics_to_icebox(cfg, logdir)
    sock = os.path.join(logdir, "takeover.sock")
    with open(cfg, "a") as f:
        f.write("Moraine.Takeover.Socket=%s\nMoraine.Takeover.DrainTimeout=%d\n" % (sock, a.drain_ms))
    res = dict(run=run, load=a.load, topics=a.topics, sessions=a.sessions, rpc_sessions=a.rpc_sessions, rpc_rate=a.rpc_rate,
               drain_ms=a.drain_ms, logs=logdir)
    procs, raw, prober = {}, None, None
    try:
        if a.topics == "icestorm":
            box_cfg = os.path.join(logdir, "icebox.cfg")
            with open(box_cfg, "w") as f:
                f.write("IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config=%s\n" % icestorm_cfg)
                f.write("Ice.Warn.Connections=0\n")
            procs["icebox"] = Proc("icebox", ["/usr/bin/icebox", "--Ice.Config=" + box_cfg], logdir)
            wait_listening(tm, procs["icebox"].popen)
        procs["A"] = Proc("router-A", [bins["moraine-router"], "--ice-config", cfg], logdir)
        wait_listening(client, procs["A"].popen)
        if a.topics == "embedded":
            wait_listening(tm, procs["A"].popen)
        procs["backend"] = Proc("rpc-backend", [rpc_bins["rpc-backend"], "--Ice.Warn.Connections=0",
                                                "--Bench.Endpoints=tcp -h %s -p 0" % HOST], logdir, read_stdout=True)
        target = wait_for("rpc-backend's endpoint", lambda: next(
            (line[len("endpoint "):] for _, line in procs["backend"].lines if line.startswith("endpoint tcp ")),
            None), 15, [procs["backend"]])
        router_ep = "tcp -h %s -p %d" % (HOST, client)
        t_load = time.monotonic()
        if a.load == "clock":
            procs["subscriber"] = Proc("clock-subscriber", [
                bins["clock-subscriber"], "--router", router_ep, "--topic-manager", "tcp -h %s -p %d" % (HOST, tm),
                "--sessions", str(a.sessions), "--duration", "100000"], logdir, read_stdout=True)
            wait_for("clock-subscriber's first status line", lambda: status_rows(procs["subscriber"]), 60,
                     [procs["subscriber"]])
        else:
            raw = RawSessions(client, a.sessions)
            raw.open(a.setup_timeout, procs["A"].popen)
        procs["publisher"] = Proc("clock-publisher", [
            bins["clock-publisher"], "--topic-manager", "tcp -h %s -p %d" % (HOST, tm), "--rate", "1"], logdir)
        if a.load == "clock":
            wait_for("%d subscriber sessions up" % a.sessions,
                     lambda: any(r["up"] + r["failed"] >= a.sessions for r in status_rows(procs["subscriber"])),
                     a.setup_timeout, [procs["subscriber"], procs["A"]])
        res["setup_s"] = round(time.monotonic() - t_load, 1)
        rpc_total_s = a.settle + a.drain_ms / 1000 + a.after + 30
        if a.rpc_sessions > 0:
            procs["rpc"] = Proc("rpc-load", [
                rpc_bins["rpc-load"], "--Ice.Warn.Connections=0", "--router", router_ep, "--target", "echo:" + target,
                "--sessions", str(a.rpc_sessions), "--outstanding", "1", "--rate", str(a.rpc_sessions * a.rpc_rate),
                "--pacing", "ms", "--warmup", "0", "--window", str(int(rpc_total_s))], logdir, read_stdout=True)
            up_line = "sessions %d up" % a.rpc_sessions
            wait_for("rpc-load's sessions", lambda: any(up_line in line for _, line in procs["rpc"].lines),
                     a.setup_timeout, [procs["rpc"], procs["A"]])

        def rpc_counts():
            last = None
            for _, line in list(procs["rpc"].lines) if "rpc" in procs else []:
                m = re.match(r"status \S+ completed (\d+) errors (\d+)", line)
                if m:
                    last = (int(m.group(1)), int(m.group(2)))
            return last or (0, 0)

        if a.load == "clock":  # the steady state starts with the first second of ticks
            wait_for("the first ticks", lambda: any(r["ticks"] > 0 for r in status_rows(procs["subscriber"])), 30,
                     [procs["subscriber"]])
        t_steady = time.monotonic()
        time.sleep(a.settle)
        rpc_before = rpc_counts()
        prober = Prober(client)
        prober.start()
        a_pid = procs["A"].popen.pid
        cpu_a0 = cpu_ms(a_pid)
        t_b = time.monotonic()
        procs["B"] = Proc("router-B", [bins["moraine-router"], "--ice-config", cfg, "--takeover", sock], logdir)
        cpu_a = None
        end = t_b + a.drain_ms / 1000 + 30
        while procs["A"].popen.poll() is None and time.monotonic() < end:
            c = cpu_ms(a_pid)
            if c is not None:
                cpu_a = c - cpu_a0
            time.sleep(0.01)
        t_a_exit = time.monotonic()
        res["a_exit_code"] = procs["A"].popen.poll()
        res["a_exit_s"] = round(t_a_exit - t_b, 2)
        res["cpu_ms_A"] = None if cpu_a is None else round(cpu_a)
        cpu_b = cpu_ms(procs["B"].popen.pid)  # B's whole life so far: its start-up included
        res["cpu_ms_B"] = None if cpu_b is None else round(cpu_b)
        time.sleep(a.after)
        prober.halt.set()
        prober.join()
        res.update(probes_ok=prober.ok, connections_refused=prober.refused, probes_not_validated=prober.silent)

        a_log, b_log = procs["A"].text(), procs["B"].text()
        m = MOVED.search(a_log)
        res.update(moved=int(m.group(1)), move_bytes=int(m.group(2)), move_ms=int(m.group(3)),
                   stayed=int(m.group(4))) if m else res.update(moved=None, move_ms=None, stayed=None)
        m = ADOPTED.search(b_log)
        res.update(adopted=int(m.group(1)), adopt_ms=int(m.group(3)), refused=int(m.group(4))) if m else \
            res.update(adopted=None, adopt_ms=None, refused=None)
        m = CLOSED_AT_DEADLINE.search(a_log)
        res["closed_at_deadline"] = int(m.group(1)) if m else 0
        m = HANDED_OVER.search(a_log)
        if m and res["moved"] is not None:  # A's own "stay here" is read after its deadline closed some
            res["stayed"] = int(m.group(1)) - res["moved"]

        rpc_after = rpc_counts()
        res["rpc_calls"] = rpc_after[0] - rpc_before[0]
        res["rpc_failed"] = rpc_after[1]
        if a.load == "clock":
            sub = procs["subscriber"]
            steady = status_rows(sub, t_steady, t_b)
            window = status_rows(sub, t_b, t_a_exit + 1)
            after = status_rows(sub, t_b)
            last = after[-1] if after else (steady[-1] if steady else None)
            first = steady[0] if steady else None
            res["ticks_lost"] = (last["lost"] - first["lost"]) if first and last else None
            res["dropped"] = last["dropped"] if last else None
            res["ticks_per_s_steady"] = min((r["ticks"] for r in steady), default=None)
            res["ticks_per_s_after"] = min((r["ticks"] for r in status_rows(sub, t_a_exit + 1.5)), default=None)
            res["p99_steady_ms"] = max((r["p99"] for r in steady), default=None)
            res["p99_takeover_ms"] = max((r["p99"] for r in window), default=None)
            res["lost"] = res["dropped"]
        else:
            answered, closed, silent = probe_sessions(raw, 10)
            res.update(raw_answered=answered, raw_closed=closed, raw_silent=silent, lost=closed + silent)
        res["ok"] = True
    except Exception as e:  # noqa: BLE001  (reported, logs kept)
        res["ok"] = False
        res["error"] = str(e)
    finally:
        if prober:
            prober.halt.set()
        for name in ("rpc", "publisher", "subscriber", "A", "B", "backend", "icebox"):
            if name in procs:
                procs[name].stop()
        if raw:
            raw.close()
    return res


COLUMNS = [("moved", "moved"), ("stayed", "stayed"), ("adopted", "adopted"), ("lost", "lost"),
           ("move_ms", "move ms"), ("adopt_ms", "adopt ms"), ("a_exit_s", "A exit s"),
           ("probes_ok", "probes ok"), ("connections_refused", "refused"), ("ticks_lost", "ticks lost"),
           ("ticks_per_s_steady", "ticks/s"),
           ("ticks_per_s_after", "ticks/s after"), ("dropped", "dropped"),
           ("p99_steady_ms", "p99 steady"), ("p99_takeover_ms", "p99 takeover"), ("rpc_calls", "calls"),
           ("rpc_failed", "failed"), ("cpu_ms_A", "A cpu ms"), ("cpu_ms_B", "B cpu ms")]


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.2f" % v
    return str(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--load", choices=["clock", "idle"], default="clock",
                    help="clock: clock-subscriber sessions (subscribed to topic `time`); "
                         "idle: raw sessions, no subscription")
    ap.add_argument("--topics", choices=["embedded", "icestorm"], default="embedded",
                    help="embedded: the router's own topic service; icestorm: the real IceStorm (icebox, "
                         "transient) behind the router, as in a classic Glacier2 deployment")
    ap.add_argument("--sessions", type=int, default=8000, help="clock or idle sessions")
    ap.add_argument("--rpc-sessions", type=int, default=1000)
    ap.add_argument("--rpc-rate", type=int, default=10, help="calls/s per RPC session")
    ap.add_argument("--drain-ms", type=int, default=15000,
                    help="A's takeover drain deadline (Moraine.Takeover.DrainTimeout)")
    ap.add_argument("--settle", type=float, default=5, help="steady-state seconds before B starts")
    ap.add_argument("--after", type=float, default=5, help="seconds of load after A exited")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--setup-timeout", type=float, default=300)
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"), help="moraine-router and the clock demo")
    ap.add_argument("--router", help="another moraine-router binary for both A and B (default: BIN_DIR's)")
    ap.add_argument("--rpc-build", default=os.path.join(REPO, "build", "perf-rpc"),
                    help="perf/rpc built there (cmake -S perf/rpc -B DIR); built if missing")
    ap.add_argument("--json", help="write the results there (default perf/out/takeover-<time>.json)")
    a = ap.parse_args()
    raise_fd_limit()
    bins = {b: os.path.join(a.bin_dir, b) for b in ("moraine-router", "clock-subscriber", "clock-publisher")}
    if a.router:
        bins["moraine-router"] = a.router
    rpc_bins = {b: os.path.join(a.rpc_build, b) for b in ("rpc-load", "rpc-backend")}
    if not all(os.path.exists(p) for p in rpc_bins.values()):
        subprocess.run(["cmake", "-S", os.path.join(HERE, "rpc"), "-B", a.rpc_build,
                        "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", a.rpc_build, "-j2", "--target", "rpc-load", "rpc-backend"], check=True,
                       stdout=subprocess.DEVNULL)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    outdir = tempfile.mkdtemp(prefix="takeover-%s-" % stamp)
    print("perf/takeover.py: --load %s --topics %s, %d sessions, %d RPC sessions x %d calls/s, A's drain deadline %d ms;"
          " logs in %s" % (a.load, a.topics, a.sessions, a.rpc_sessions, a.rpc_rate, a.drain_ms, outdir), flush=True)
    results = []
    for run in range(1, a.runs + 1):
        r = one_run(a, bins, rpc_bins, outdir, run)
        results.append(r)
        if not r["ok"]:
            print("run %d FAILED: %s" % (run, r.get("error")), flush=True)
            continue
        print("run %d: " % run + "  ".join("%s %s" % (label, fmt(r.get(k))) for k, label in COLUMNS), flush=True)
    ok = [r for r in results if r["ok"]]
    if ok:
        print("\n%-12s %10s %10s %10s" % ("", "min", "median", "max"))
        for k, label in COLUMNS:
            vals = [r[k] for r in ok if r.get(k) is not None]
            if vals:
                print("%-12s %10s %10s %10s" % (label, fmt(min(vals)), fmt(statistics.median(vals)), fmt(max(vals))))
    path = a.json or os.path.join(HERE, "out", "takeover-%s.json" % stamp)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(portable(dict(args=vars(a), results=results)), f, indent=1)
    print("results: %s" % os.path.relpath(path, REPO) if path.startswith(REPO) else path)
    sys.exit(0 if len(ok) == len(results) else 1)


if __name__ == "__main__":
    main()
