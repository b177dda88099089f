#!/usr/bin/python3
"""clock_compare.py: the clock demo against moraine-router and against glacier2router + IceStorm.

  /usr/bin/python3 perf/clock_compare.py [--sessions 2000[,8000]] [--repeats 3]
        [--window 30] [--routers moraine,moraine-icestorm,glacier2] [--transport tcp[,tls][,ws]] [--bin-dir build-lead/bin]
        [--kernel-bench build-perf/bin/bench_kernel_write]

For each run (routers interleaved: moraine, glacier2, moraine, ...):
  (a) moraine:  moraine-router --config conf/moraine.yaml            (embedded topic service)
  (b) glacier2: glacier2router --Ice.Config=conf/glacier2.cfg
                + icebox with IceStorm (--Ice.Config=conf/glacier2.cfg --IceStorm.Transient=1)
  (c) moraine-icestorm: moraine-router --Ice.Config=<conf/glacier2.cfg without the IceStorm
                endpoints> + the same icebox: Moraine in glacier2router's place, IceStorm behind it
                delivering to its server endpoint (the issue's second topology)
all on the demo's endpoints (client 4063, server 4064, TopicManager 10000, Publish 10001), then
the SAME clock-subscriber --sessions N and clock-publisher --rate 1 (copied once to a temp dir,
so a rebuild of --bin-dir during the comparison does not change them).

Measured per run:
  set-up:   "N sessions up in X s" as clock-subscriber prints it (1 s resolution), the same
            interpolated from its per-second `sessions up` counts, and router CPU per session;
  steady state (--window status seconds, after all sessions are up and --settle seconds more):
            events/s delivered, per-second p50/p99 latency (median of the seconds; p99 also max),
            lost; CPU per delivered event of the router, icebox and the subscriber (utime+stime
            from /proc/<pid>/stat over the window / events delivered in the window);
  memory:   (VmRSS at the end of the window - VmRSS before the first session) / N, per process;
  load:     how busy the machine was with other processes' work during the window.
With --kernel-bench, bench_kernel_write runs for each N first (the kernel's own cost of writing one
tick to each of N loopback sockets), and router CPU per event minus that is reported. It runs back
to back (warm sockets) unless --kernel-gap-us 1000000 paces it as the clock ticks (cold sockets).

Order inside a run: router(s) up, RSS baseline, clock-subscriber started, and only after its first
status line (so it has found the topic) clock-publisher. That order matters for (b): clock-
subscriber calls TopicManager::retrieve with mode Normal, which the real IceStorm rejects
(retrieve is idempotent), so it only gets the topic by creating it itself.

--transport tls or ws (or a list such as tcp,ws or tcp,tls,ws: each repeat runs them all,
interleaved) puts the routers' CLIENT endpoint (4063) on ssl or ws, and clock-subscriber connects
with --router "ssl -h 127.0.0.1 -p 4063" or "ws -h 127.0.0.1 -p 4063". moraine-router then reads a
copy of conf/moraine.yaml with that endpoint and the absolute crypt_passwords path, glacier2router a
copy of the --glacier2-cfg file with that Glacier2.Client.Endpoints (both copies are written by one
function and kept in the log directory). Everything else stays tcp: the server endpoint (4064,
where IceStorm delivers to glacier2router), the TopicManager and Publish endpoints (icebox reads
--glacier2-cfg unchanged), clock-publisher.
  tls: certificates are made fresh with `openssl` (perf/tls_certs.py) in a temporary directory; the
    moraine copy gets a `tls:` section (default_dir, cas, cert_file, key_file, verify_peer: 1), the
    glacier2 copy the same settings as IceSSL keys (Ice.Plugin.IceSSL, IceSSL.DefaultDir/CAs/
    CertFile/KeyFile, VerifyPeer=1); clock-subscriber also gets --tls-ca/--tls-cert/--tls-key.
  ws: nothing more (glacier2router 3.7 serves ws without a plugin; one Ice message per binary
    frame, subprotocol ice.zeroc.com). The readiness check sends the WebSocket upgrade request and
    expects `101` and then the validate connection message as one binary frame.

Every process is stopped by PID (SIGTERM, SIGKILL after 5 s); every wait is bounded.
Writes perf/out/clock_compare-<time>.json and prints a table of the runs, a summary per router and
transport (median [min-max] over the repeats) and, for each other transport measured with tcp, its
difference to tcp (medians: CPU per event, latency, RSS per session; `transport_diff` in the JSON).
"""
import argparse
import base64
import ctypes
import datetime
import json
import os
import queue
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import tls_certs  # perf/tls_certs.py (this directory is on sys.path when run as a script)
from perf_common import portable, sched_ns, sha256  # perf/perf_common.py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "demo", "clock"))
from run_demo import rss_kib  # noqa: E402  (one /proc reader for the demo and the comparison)

PERF = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(PERF)
CLK_TCK = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1
HOST = "127.0.0.1"
VALIDATE = b"IceP\x01\x00\x01\x00\x03\x00\x0e\x00\x00\x00"
WS_VALIDATE = b"\x82\x0e" + VALIDATE  # the same as one unmasked binary WebSocket frame (FIN, opcode 2, 14 bytes)
TRANSPORTS = {"tcp": "tcp", "tls": "ssl", "ws": "ws"}  # --transport value: protocol of the client endpoint

_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent():
    _prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG: a child gets SIGTERM if we die


class RunError(Exception):
    pass


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def output_paths(script, out=None):
    """(JSON result path, log directory, time stamp) for one run of perf/<script>.py:
    perf/out/<script>-<stamp> (the JSON path `out` when given); makes the directories."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = os.path.join(PERF, "out")
    logdir = os.path.join(outdir, "%s-%s" % (script, stamp))
    os.makedirs(logdir, exist_ok=True)
    return out or os.path.join(outdir, "%s-%s.json" % (script, stamp)), logdir, stamp


def stop_on_sigterm():
    """SIGTERM ends a run as Ctrl-C does, so the finally blocks stop every child by PID."""
    def on_term(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)


def save_json(result, path):
    """Writes the results so far (after each run too, so an interrupted run keeps them)."""
    with open(path, "w") as f:
        json.dump(portable(result), f, indent=1)


def run_and_report(result, t0, out_json, logdir, tmp, measure, summarise, report):
    """The end the comparison scripts share: runs measure() (Ctrl-C marks the result
    interrupted), removes tmp, lets summarise(result) add the summaries, saves the JSON, prints
    report(result), the total time and where the JSON and logs are. Returns the exit code: 0 if
    there were runs and every one was ok."""
    try:
        measure()
    except KeyboardInterrupt:
        log("interrupted")
        result["interrupted"] = True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summarise(result)
    result["total_s"] = time.monotonic() - t0
    save_json(result, out_json)
    print()
    report(result)
    print("\ntotal %.0f s\nJSON: %s\nlogs: %s" % (result["total_s"], out_json, logdir))
    return 0 if result["runs"] and all(r.get("ok") for r in result["runs"]) else 1


# ---------------------------------------------------------------------------------------------
# Processes and /proc


class Proc:
    def __init__(self, name, cmd, logdir, pipe_stdout=False):
        self.name, self.cmd = name, cmd
        self.log_path = os.path.join(logdir, name + ".log")
        self.log = open(self.log_path, "wb")
        self.popen = subprocess.Popen(cmd, cwd=REPO, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE if pipe_stdout else self.log,
                                      stderr=self.log, preexec_fn=_die_with_parent)
        self.pid = self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def stop(self):
        """SIGTERM by PID, SIGKILL after 5 s."""
        if self.alive():
            self.popen.terminate()
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self.log.close()

    def tail(self, n=8):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:]).rstrip()
        except OSError:
            return ""


def cpu_times(pid):
    """(utime, stime) of a process (all its threads, live and exited), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK  # fields 14 and 15 of stat(5)


def machine_jiffies():
    """(busy, total, nice) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle + iowait
    total = sum(v[:8])  # without guest (already counted in user)
    return total - idle, total, v[1]


def snapshot(procs):
    snap = {"t": time.monotonic(), "machine": machine_jiffies()}
    for name, p in procs.items():
        ut, st = cpu_times(p.pid)
        snap[name] = {"cpu": ut + st, "user": ut, "sys": st, "sched_ns": sched_ns(p.pid), "rss_kib": rss_kib(p.pid)}
    return snap


def wait_quiet(max_wait, threshold=0.5):
    """Waits (at most max_wait s) until the machine's other un-niced work uses under `threshold`
    cores, measured over 1 s (niced work yields to us). Returns the last measured load in cores."""
    end = time.monotonic() + max_wait
    while True:
        b0, t0, n0 = machine_jiffies()
        time.sleep(1.0)
        b1, t1, n1 = machine_jiffies()
        cores = NCPU * ((b1 - b0) - (n1 - n0)) / max(1, t1 - t0)
        if cores < threshold or time.monotonic() >= end:
            return cores
        time.sleep(1.0)


def port_listening(port):
    try:
        socket.create_connection((HOST, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def wait_ports_free(ports, timeout):
    end = time.monotonic() + timeout
    while True:
        busy = [p for p in ports if port_listening(p)]
        if not busy:
            return
        if time.monotonic() >= end:
            raise RunError("ports %s are in use by another process (see ss -ltnp)" % busy)
        time.sleep(0.5)


def ws_upgrade(s, port):
    """Sends a WebSocket upgrade request for Ice (subprotocol ice.zeroc.com) on the connected socket s.
    Returns the bytes received after the answer's header if it is `101 Switching Protocols`, else None."""
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Protocol: ice.zeroc.com\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n\r\n"
               % (HOST, port, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk or len(head) > 16384:
            return None
        head += chunk
    head, _, rest = head.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].split()
    return rest if len(status) >= 2 and status[1] == b"101" else None


def wait_ready(proc, port, timeout=15.0, tls=None, ws=False):
    """Until port answers with an Ice validate connection message: after a TLS handshake with the
    ssl.SSLContext tls, if given (an ssl endpoint); with ws, after a WebSocket upgrade (answer 101),
    as one unmasked binary frame (82 0e + the 14 bytes: a ws endpoint)."""
    expect = WS_VALIDATE if ws else VALIDATE
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not proc.alive():
            raise RunError("%s exited (%s) before listening on %d: %s" % (proc.name, proc.popen.returncode, port,
                                                                         proc.tail()))
        try:
            raw = socket.create_connection((HOST, port), timeout=2.0)
            s = raw
            try:
                if tls:
                    s = tls.wrap_socket(raw, server_hostname=HOST)  # takes raw's descriptor
                s.settimeout(1.0)
                data = ws_upgrade(s, port) if ws else b""
                while data is not None and len(data) < len(expect):
                    chunk = s.recv(len(expect) - len(data))
                    if not chunk:
                        break
                    data += chunk
            finally:
                s.close()
                raw.close()
            if data == expect:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RunError("%s not ready on port %d after %.0f s: %s" % (proc.name, port, timeout, proc.tail()))


# ---------------------------------------------------------------------------------------------
# clock-subscriber's output

STATUS = re.compile(r"([\d.]+)s\s+sessions up (\d+) \(failed (\d+), dropped (\d+)\)\s+ticks/s (\d+)\s+lost (\d+)"
                    r"\s+p50 ([\d.]+) ms\s+p99 ([\d.]+) ms")
ALL_UP = re.compile(r"(\d+) sessions up in ([\d.]+) s")
SUMMARY = re.compile(r"summary: .*")


class SubscriberReader(threading.Thread):
    """Reads clock-subscriber's stdout (status lines end in \\r, others in \\n) and queues
    ("status", t, dict) / ("all_up", t, (n, secs)) / ("summary", t, text) / ("eof", t, None)."""

    def __init__(self, proc, raw_path):
        super().__init__(daemon=True)
        self.proc, self.q, self.raw = proc, queue.Queue(), open(raw_path, "wb")

    def run(self):
        buf = b""
        out = self.proc.popen.stdout
        while True:
            chunk = os.read(out.fileno(), 65536)
            if not chunk:
                break
            self.raw.write(chunk)
            buf += chunk
            parts = re.split(rb"[\r\n]", buf)
            buf = parts.pop()
            for part in parts:
                self.parse(part.decode(errors="replace"))
        if buf:
            self.parse(buf.decode(errors="replace"))
        self.raw.close()
        self.q.put(("eof", time.monotonic(), None))

    def parse(self, line):
        t = time.monotonic()
        for m in STATUS.finditer(line):
            self.q.put(("status", t, dict(elapsed=float(m.group(1)), up=int(m.group(2)), failed=int(m.group(3)),
                                          dropped=int(m.group(4)), ticks=int(m.group(5)), lost=int(m.group(6)),
                                          p50=float(m.group(7)), p99=float(m.group(8)))))
        m = ALL_UP.search(line)
        if m:
            self.q.put(("all_up", t, (int(m.group(1)), float(m.group(2)))))
        m = SUMMARY.search(line)
        if m:
            self.q.put(("summary", t, m.group(0)))

    def next(self, deadline, what):
        left = deadline - time.monotonic()
        if left <= 0:
            raise RunError("timed out waiting for %s" % what)
        try:
            ev = self.q.get(timeout=left)
        except queue.Empty:
            raise RunError("timed out waiting for %s" % what)
        if ev[0] == "eof":
            raise RunError("clock-subscriber exited (%s) while waiting for %s: %s"
                           % (self.proc.popen.poll(), what, self.proc.tail()))
        return ev


def interpolated_setup(statuses, n):
    """Set-up time from the per-second `sessions up` counts (clock-subscriber only notices "all
    up" on its 1 s status tick): the last second before the count reached n, plus the time the
    remaining sessions took at the rate of the second before (at most the 1 s to the next line)."""
    for i, s in enumerate(statuses):
        if s["up"] >= n:
            if i < 2:  # all up within the first two seconds: no clean rate to extrapolate with
                return s["elapsed"]
            prev, prev2 = statuses[i - 1], statuses[i - 2]
            rate = (prev["up"] - prev2["up"]) / max(1e-3, prev["elapsed"] - prev2["elapsed"])
            if rate <= 0:
                return s["elapsed"]
            return min(s["elapsed"], prev["elapsed"] + (n - prev["up"]) / rate)
    return None


# ---------------------------------------------------------------------------------------------
# One run


def without_topic_service(cfg, tmp):
    """A copy of the Glacier2 property file cfg without IceStorm.TopicManager/Publish.Endpoints:
    moraine-router would serve the topics itself on them, where icebox must (moraine-icestorm)."""
    path = os.path.join(tmp, "router-" + os.path.basename(cfg))
    with open(cfg) as src, open(path, "w") as dst:
        for line in src:
            key = line.split("=", 1)[0].strip()
            dst.write("# (icebox serves it) " + line if key in ("IceStorm.TopicManager.Endpoints",
                                                                "IceStorm.Publish.Endpoints") else line)
    return path


def start_routers(kind, a, bins, tmp, transport="tcp"):
    """Starts the router under test; returns {name: Proc}. transport tls / ws: the client endpoint is
    ssl / ws (the configuration copies of a.variants[transport], from client_endpoint_configs)."""
    procs = {}
    v = a.variants.get(transport)  # None for tcp: the configuration files as they are

    def ready(proc, port):
        client = v is not None and port == a.ports[0]
        wait_ready(proc, port, tls=v["ctx"] if client else None, ws=client and v["ws"])

    try:
        if kind == "moraine":
            cfg = v["moraine_yaml"] if v else a.moraine_yaml
            p = Proc("moraine-router", [bins["moraine-router"], "--config", cfg], tmp)
            procs["router"] = p
            for port in a.ports:
                ready(p, port)
        else:
            box_cfg = os.path.join(tmp, "icebox.cfg")
            with open(box_cfg, "w") as f:
                f.write("IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config=%s "
                        "--IceStorm.Transient=1\nIce.Warn.Connections=0\n" % a.glacier2_cfg)
            procs["icebox"] = Proc("icebox", ["/usr/bin/icebox", "--Ice.Config=" + box_cfg], tmp)
            router_cfg = v["glacier2_cfg"] if v else a.glacier2_cfg
            if kind == "glacier2":
                procs["router"] = Proc("glacier2router", ["/usr/bin/glacier2router", "--Ice.Config=" + router_cfg], tmp)
            else:  # moraine-icestorm: the same property file, but icebox serves the topics
                procs["router"] = Proc("moraine-router", [bins["moraine-router"], "--Ice.Config=" +
                                                          without_topic_service(router_cfg, tmp)], tmp)
            for port in a.ports[2:]:
                ready(procs["icebox"], port)
            for port in a.ports[:2]:
                ready(procs["router"], port)
    except BaseException:
        for p in procs.values():
            p.stop()
        raise
    return procs


def one_run(kind, n, rep, a, bins, outdir, transport="tcp"):
    tmp = os.path.join(outdir, "%s%s-%d-%d" % (kind, "" if transport == "tcp" else "-" + transport, n, rep))
    os.makedirs(tmp, exist_ok=True)
    res = dict(router=kind, transport=transport, sessions=n, repeat=rep, logs=tmp, ok=False)
    procs, others = {}, []
    t_run = time.monotonic()
    try:
        wait_ports_free(a.ports, 30)
        if a.wait_quiet > 0:
            res["load_before_cores"] = wait_quiet(a.wait_quiet)
        procs = start_routers(kind, a, bins, tmp, transport)
        time.sleep(0.5)
        base = snapshot(procs)
        res["loadavg_start"] = open("/proc/loadavg").read().split()[:3]

        duration = a.settle + a.settle_max + a.window + 10  # outlives the window: stopped by us
        sub_cmd = [bins["clock-subscriber"], "--sessions", str(n), "--duration", str(duration)]
        if transport != "tcp":
            sub_cmd += ["--router", client_endpoint(a, transport)] + a.variants[transport]["sub_args"]
        res["subscriber_cmd"] = sub_cmd
        sub = Proc("clock-subscriber", sub_cmd, tmp, pipe_stdout=True)
        others.append(sub)
        reader = SubscriberReader(sub, os.path.join(tmp, "clock-subscriber.out"))
        reader.start()
        t_sub = time.monotonic()

        # First status line: the subscriber has its topic (it creates it: see the docstring).
        statuses = []
        _, t, st = reader.next(t_sub + 30, "clock-subscriber's first status line")
        statuses.append(st)
        time.sleep(0.5)  # ticks land mid-second, away from the subscriber's status boundaries
        pub = Proc("clock-publisher", [bins["clock-publisher"], "--rate", "1"], tmp)
        others.append(pub)

        deadline = t_sub + a.setup_timeout
        all_up = None
        while all_up is None:
            ev, t, v = reader.next(deadline, "all %d sessions up" % n)
            if ev == "status":
                statuses.append(v)
            elif ev == "all_up":
                all_up = v
        up_snap = snapshot(procs)
        res["setup_s"] = all_up[1]
        res["sessions_up"] = all_up[0]
        res["setup_interp_s"] = interpolated_setup(statuses, n)
        res["setup_rate"] = n / res["setup_interp_s"] if res["setup_interp_s"] else None
        res["setup_cpu_us_per_session"] = {k: 1e6 * (up_snap[k]["cpu"] - base[k]["cpu"]) / n for k in procs}
        if all_up[0] != n:
            raise RunError("only %d of %d sessions up: %s" % (all_up[0], n, statuses[-1]))

        # Settle: at least --settle status lines, and until --settle lines in a row each report
        # N ticks (+-2%): a router that queued ticks while sessions were being set up delivers
        # that backlog first, which is not the steady state. At most --settle-max seconds more.
        deadline = time.monotonic() + a.settle + a.settle_max + a.window + 30
        settle_deadline = time.monotonic() + a.settle + a.settle_max
        settled, in_row, steady = 0, 0, []
        while in_row < a.settle or settled < a.settle:
            ev, t, v = reader.next(deadline, "settling status lines")
            if ev != "status":
                continue
            settled += 1
            in_row = in_row + 1 if abs(v["ticks"] - n) <= 0.02 * n else 0
            if time.monotonic() > settle_deadline:
                res["steady_not_reached"] = True
                log("  no steady state after %d s (last second: %d ticks); measuring anyway" % (settled, v["ticks"]))
                break
        res["settle_s"] = settled
        allp = dict(procs, subscriber=sub, publisher=pub)
        while True:  # the status line that opens the window carries the cumulative `lost`
            ev, t, v = reader.next(deadline, "window start")
            if ev == "status":
                lost0 = v["lost"]
                s0 = snapshot(allp)
                break
        while len(steady) < a.window:
            ev, t, v = reader.next(deadline, "steady-state status lines")
            if ev == "status":
                steady.append(v)
        s1 = snapshot(allp)
        res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]

        events = sum(s["ticks"] for s in steady)
        secs = steady[-1]["elapsed"] - (steady[0]["elapsed"] - 1.0)
        wall = s1["t"] - s0["t"]
        res["window_s"] = secs
        res["events"] = events
        res["events_per_s"] = events / secs
        res["expected_events_per_s"] = n * 1.0
        res["lost"] = steady[-1]["lost"] - lost0
        res["dropped"] = steady[-1]["dropped"]
        res["failed"] = steady[-1]["failed"]
        p50s = [s["p50"] for s in steady if s["ticks"]]
        p99s = [s["p99"] for s in steady if s["ticks"]]
        res["p50_ms"] = statistics.median(p50s) if p50s else None
        res["p99_ms"] = statistics.median(p99s) if p99s else None
        res["p99_ms_max"] = max(p99s) if p99s else None
        res["p50_ms_seconds"] = p50s
        res["p99_ms_seconds"] = p99s
        cpu = {}
        for k in allp:
            d = s1[k]["cpu"] - s0[k]["cpu"]
            ds = (s1[k]["sched_ns"] - s0[k]["sched_ns"]) if s1[k]["sched_ns"] is not None and s0[k]["sched_ns"] is not None else None
            du, dsys = s1[k]["user"] - s0[k]["user"], s1[k]["sys"] - s0[k]["sys"]
            cpu[k] = dict(cpu_s=d, user_s=du, sys_s=dsys, util=d / wall,
                          ns_per_event=1e9 * d / events if events else None,
                          user_ns_per_event=1e9 * du / events if events else None,
                          sys_ns_per_event=1e9 * dsys / events if events else None,
                          sched_ns_per_event=ds / events if events and ds is not None else None)
        res["cpu"] = cpu
        res["rss_kib_before"] = {k: base[k]["rss_kib"] for k in procs}
        res["rss_kib_up"] = {k: s1[k]["rss_kib"] for k in procs}
        res["rss_bytes_per_session"] = {k: 1024.0 * (s1[k]["rss_kib"] - base[k]["rss_kib"]) / n for k in procs}
        busy = (s1["machine"][0] - s0["machine"][0]) / CLK_TCK
        ours = sum(c["cpu_s"] for c in cpu.values())
        res["machine_busy_cores"] = busy / wall
        res["other_busy_cores"] = max(0.0, busy - ours) / wall
        # Niced work (others' builds run at nice 10) only gets what we leave idle.
        res["other_niced_cores"] = (s1["machine"][2] - s0["machine"][2]) / CLK_TCK / wall

        # clock-subscriber is stopped below (SIGTERM: it prints no summary; the status lines
        # above carry everything measured).
        res["ok"] = True
    except RunError as e:
        res["error"] = str(e)
        log("run failed: %s" % e)
    finally:
        for p in reversed(others):
            p.stop()
        for p in procs.values():
            p.stop()
        res["run_s"] = time.monotonic() - t_run
    return res


# ---------------------------------------------------------------------------------------------
# Kernel baseline


def kernel_bench(path, n, gap_us=0, times=3):
    """bench_kernel_write for N sockets, `times` times. gap_us > 0 paces the rounds as the clock
    ticks (one round per gap, cold sockets: 10 rounds after 2 warm-up rounds), else back to back."""
    rounds = 10 if gap_us else max(30, min(200, 400000 // n))
    cmd = [path, "--sockets", str(n), "--rounds", str(rounds), "--json"]
    if gap_us:
        cmd += ["--warmup", "2", "--gap-us", str(gap_us)]
    runs = []
    for _ in range(times):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + rounds * gap_us / 1e6 * 2,
                                 preexec_fn=_die_with_parent)
        except subprocess.TimeoutExpired:
            log("bench_kernel_write timed out")
            return None
        if out.returncode != 0:
            log("bench_kernel_write failed: %s" % out.stderr.strip())
            return None
        runs.append([json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")])
    result = {}
    for mode in ("write", "writev2"):
        vals = [r["cpu_ns_per_write"] for rs in runs for r in rs if r["mode"] == mode]
        reader = [r["reader_cpu_ns_per_msg"] for rs in runs for r in rs if r["mode"] == mode]
        if vals:
            result[mode] = dict(cpu_ns_per_write=statistics.median(vals), min=min(vals), max=max(vals),
                                reader_cpu_ns_per_msg=statistics.median(reader), runs=vals)
    result["rounds"] = rounds
    result["gap_us"] = gap_us
    return result


# ---------------------------------------------------------------------------------------------
# Reporting


def fmt(v, spec="%.0f"):
    return "-" if v is None else spec % v


def spread(vals, spec="%.0f"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    if len(vals) == 1:
        return spec % vals[0]
    return (spec + " [" + spec + "-" + spec + "]") % (statistics.median(vals), min(vals), max(vals))


def label(r):
    """moraine / glacier2, with /tls or /ws for a run over TLS or WebSocket (runs from before
    --transport have no transport: tcp)."""
    t = r.get("transport", "tcp")
    return r["router"] + ("" if t == "tcp" else "/" + t)


def print_runs(runs):
    hdr = ("%-12s %5s %2s | %6s %6s | %7s %7s %7s %5s | %8s %8s %8s %8s | %7s %7s | %5s"
           % ("router", "N", "#", "setup", "sess/s", "ev/s", "p50ms", "p99ms", "lost",
              "rtr ns", "icebox", "sum ns", "sub ns", "rtr B", "icebx B", "other"))
    print(hdr)
    print("-" * len(hdr))
    for r in runs:
        name = label(r)
        if not r.get("ok"):
            print("%-12s %5d %2d | FAILED: %s" % (name, r["sessions"], r["repeat"], r.get("error")))
            continue
        if r.get("steady_not_reached"):
            print("%-12s %5d %2d | (no steady state reached: N ticks/s for %d s in a row)" % (
                name, r["sessions"], r["repeat"], r["settle_s"]))
        c = r["cpu"]
        ib = c.get("icebox", {}).get("ns_per_event")
        rb = r["rss_bytes_per_session"]
        print("%-12s %5d %2d | %6.2f %6.0f | %7.0f %7.2f %7.2f %5d | %8.0f %8s %8.0f %8.0f | %7.0f %7s | %5.2f"
              % (name, r["sessions"], r["repeat"], r["setup_interp_s"], r["setup_rate"], r["events_per_s"],
                 r["p50_ms"], r["p99_ms"], r["lost"], c["router"]["ns_per_event"], fmt(ib),
                 c["router"]["ns_per_event"] + (ib or 0), c["subscriber"]["ns_per_event"],
                 rb["router"], fmt(rb.get("icebox")), r["other_busy_cores"]))
    print("setup: s until all sessions up (interpolated); rtr/icebox/sum/sub ns: CPU ns per delivered event of\n"
          "the router, icebox, both, clock-subscriber; rtr B/icebx B: RSS bytes per session; other: cores busy\n"
          "with other processes during the window.")


def summarise(runs, kernel):
    groups = {}
    for r in runs:
        if r.get("ok"):
            groups.setdefault((r["router"], r["sessions"], r.get("transport", "tcp")), []).append(r)
    out = []
    for (kind, n, transport), rs in sorted(groups.items()):
        k = (kernel or {}).get(n) or {}
        kw = (k.get("write") or {}).get("cpu_ns_per_write")
        rtr = [r["cpu"]["router"]["ns_per_event"] for r in rs]
        paired = all(r.get("kernel_write_ns") is not None for r in rs)  # --kernel-gap-us: a floor per repeat
        if paired:
            kw = statistics.median(r["kernel_write_ns"] for r in rs)
        ibx = [r["cpu"]["icebox"]["ns_per_event"] for r in rs if "icebox" in r["cpu"]]
        tot = [r["cpu"]["router"]["ns_per_event"] + r["cpu"].get("icebox", {}).get("ns_per_event", 0) for r in rs]
        s = dict(router=kind, transport=transport, sessions=n, repeats=len(rs),
                 setup_s=[r["setup_interp_s"] for r in rs], setup_printed_s=[r["setup_s"] for r in rs],
                 setup_rate=[r["setup_rate"] for r in rs],
                 setup_cpu_us_per_session={p: [r["setup_cpu_us_per_session"][p] for r in rs]
                                           for p in rs[0]["setup_cpu_us_per_session"]},
                 events_per_s=[r["events_per_s"] for r in rs], lost=[r["lost"] for r in rs],
                 p50_ms=[r["p50_ms"] for r in rs], p99_ms=[r["p99_ms"] for r in rs],
                 p99_ms_max=[r["p99_ms_max"] for r in rs],
                 router_ns_per_event=rtr, icebox_ns_per_event=ibx, total_ns_per_event=tot,
                 subscriber_ns_per_event=[r["cpu"]["subscriber"]["ns_per_event"] for r in rs],
                 router_user_ns_per_event=[r["cpu"]["router"]["user_ns_per_event"] for r in rs],
                 router_sys_ns_per_event=[r["cpu"]["router"]["sys_ns_per_event"] for r in rs],
                 icebox_user_ns_per_event=[r["cpu"]["icebox"]["user_ns_per_event"] for r in rs if "icebox" in r["cpu"]],
                 icebox_sys_ns_per_event=[r["cpu"]["icebox"]["sys_ns_per_event"] for r in rs if "icebox" in r["cpu"]],
                 subscriber_user_ns_per_event=[r["cpu"]["subscriber"]["user_ns_per_event"] for r in rs],
                 subscriber_sys_ns_per_event=[r["cpu"]["subscriber"]["sys_ns_per_event"] for r in rs],
                 router_sched_ns_per_event=[r["cpu"]["router"]["sched_ns_per_event"] for r in rs],
                 icebox_sched_ns_per_event=[r["cpu"]["icebox"]["sched_ns_per_event"] for r in rs
                                            if "icebox" in r["cpu"]],
                 subscriber_sched_ns_per_event=[r["cpu"]["subscriber"]["sched_ns_per_event"] for r in rs],
                 subscriber_util=[r["cpu"]["subscriber"]["util"] for r in rs],
                 rss_bytes_per_session={p: [r["rss_bytes_per_session"][p] for r in rs]
                                        for p in rs[0]["rss_bytes_per_session"]},
                 other_busy_cores=[r["other_busy_cores"] for r in rs],
                 other_niced_cores=[r.get("other_niced_cores") for r in rs],
                 settle_s=[r["settle_s"] for r in rs],
                 kernel_write_ns=kw)
        if paired:
            floors = [r["kernel_write_ns"] for r in rs]
            s["kernel_paired"] = True
            s["kernel_write_ns_runs"] = floors
            s["router_minus_kernel_ns"] = [v - f for v, f in zip(rtr, floors)]
            s["total_minus_kernel_ns"] = [v - f for v, f in zip(tot, floors)]
        elif kw is not None:
            s["router_minus_kernel_ns"] = [v - kw for v in rtr]
            s["total_minus_kernel_ns"] = [v - kw for v in tot]
        out.append(s)
    return out


def transport_diffs(summary):
    """For each router and session count measured over tcp and another transport: that transport's
    median minus tcp's median, per delivered event (router, router+icebox, subscriber CPU) and per
    session (RSS), with the ratio of the router medians."""
    med = lambda vals: statistics.median([v for v in vals if v is not None]) if any(
        v is not None for v in vals) else None
    tcp = {(s["router"], s["sessions"]): s for s in summary if s["transport"] == "tcp"}
    out = []
    for s in summary:
        base = tcp.get((s["router"], s["sessions"]))
        if s["transport"] == "tcp" or base is None:
            continue
        d = dict(router=s["router"], sessions=s["sessions"], transport=s["transport"],
                 repeats=[base["repeats"], s["repeats"]])
        for k in ("router_ns_per_event", "total_ns_per_event", "subscriber_ns_per_event", "router_user_ns_per_event",
                  "router_sys_ns_per_event", "router_sched_ns_per_event", "p50_ms", "p99_ms"):
            b, v = med(base[k]), med(s[k])
            d[k] = None if b is None or v is None else v - b
        b, v = med(base["router_ns_per_event"]), med(s["router_ns_per_event"])
        d["router_ratio"] = v / b if b else None
        d["rss_bytes_per_session"] = {p: med(s["rss_bytes_per_session"][p]) - med(base["rss_bytes_per_session"][p])
                                      for p in s["rss_bytes_per_session"] if p in base["rss_bytes_per_session"]}
        out.append(d)
    return out


def print_transport_diffs(diffs):
    if not diffs:
        return
    print("\n<transport> - tcp, difference of the medians:")
    for d in diffs:
        print("  %-13s %5d sessions: router %s ns/event (x%s; user %s, sys %s; schedstat %s)%s, subscriber %s ns/event;"
              " p50 %s ms, p99 %s ms; RSS/session router %s B" % (
                  "%s %s" % (d["router"], d["transport"]), d["sessions"], fmt(d["router_ns_per_event"], "%+.0f"),
                  fmt(d["router_ratio"], "%.2f"), fmt(d["router_user_ns_per_event"], "%+.0f"),
                  fmt(d["router_sys_ns_per_event"], "%+.0f"), fmt(d["router_sched_ns_per_event"], "%+.0f"),
                  "" if d["router"] == "moraine" else ", router+icebox %s ns/event" % fmt(d["total_ns_per_event"], "%+.0f"),
                  fmt(d["subscriber_ns_per_event"], "%+.0f"), fmt(d["p50_ms"], "%+.2f"), fmt(d["p99_ms"], "%+.2f"),
                  fmt(d["rss_bytes_per_session"].get("router"), "%+.0f")))


def print_summary(summary):
    print("\nmedian [min-max] over repeats")
    for s in summary:
        print("\n%s, %d sessions, %d repeat(s):" % (label(s), s["sessions"], s["repeats"]))
        print("  set-up                 %s s (printed: %s s), %s sessions/s" % (
            spread(s["setup_s"], "%.2f"), spread(s["setup_printed_s"], "%.2f"), spread(s["setup_rate"])))
        for p, v in s["setup_cpu_us_per_session"].items():
            print("  set-up CPU %-11s %s us/session" % (p, spread(v)))
        print("  delivered              %s events/s, lost %s" % (spread(s["events_per_s"]), spread(s["lost"])))
        print("  latency                p50 %s ms, p99 %s ms (worst second's p99 %s ms)" % (
            spread(s["p50_ms"], "%.2f"), spread(s["p99_ms"], "%.2f"), spread(s["p99_ms_max"], "%.1f")))
        print("  CPU/event router       %s ns (user %s + sys %s)" % (spread(s["router_ns_per_event"]),
              spread(s["router_user_ns_per_event"]), spread(s["router_sys_ns_per_event"])))
        if s["icebox_ns_per_event"]:
            print("  CPU/event icebox       %s ns (user %s + sys %s)" % (spread(s["icebox_ns_per_event"]),
                  spread(s["icebox_user_ns_per_event"]), spread(s["icebox_sys_ns_per_event"])))
            print("  CPU/event sum          %s ns" % spread(s["total_ns_per_event"]))
        print("  CPU/event subscriber   %s ns (user %s + sys %s; %s of a core)" % (
            spread(s["subscriber_ns_per_event"]), spread(s["subscriber_user_ns_per_event"]),
            spread(s["subscriber_sys_ns_per_event"]), spread(s["subscriber_util"], "%.2f")))
        print("  same from schedstat    router %s ns%s, subscriber %s ns" % (
            spread(s["router_sched_ns_per_event"]),
            ", icebox %s ns" % spread(s["icebox_sched_ns_per_event"]) if s["icebox_sched_ns_per_event"] else "",
            spread(s["subscriber_sched_ns_per_event"])))
        n = s["sessions"]
        print("  CPU per tick fan-out   router%s %s ms, subscriber %s ms (vs p50 latency above)" % (
            "+icebox" if s["icebox_ns_per_event"] else "", spread([v * n / 1e6 for v in s["total_ns_per_event"]], "%.1f"),
            spread([v * n / 1e6 for v in s["subscriber_ns_per_event"]], "%.1f")))
        if s.get("kernel_write_ns") is not None:
            print("  kernel write (K=%d)  %s ns%s; router - kernel: %s ns%s" % (
                s["sessions"], spread(s["kernel_write_ns_runs"]) if s.get("kernel_paired") else "%.0f" % s["kernel_write_ns"],
                " (paced, one per repeat)" if s.get("kernel_paired") else "", spread(s["router_minus_kernel_ns"]),
                "; router+icebox - kernel: %s ns" % spread(s["total_minus_kernel_ns"])
                if s["icebox_ns_per_event"] else ""))
        for p, v in s["rss_bytes_per_session"].items():
            print("  RSS/session %-10s %s bytes" % (p, spread(v)))
        print("  other load             %s cores (niced: %s)" % (spread(s["other_busy_cores"], "%.2f"),
                                                               spread(s["other_niced_cores"], "%.2f")))
        print("  settled after          %s s (all up -> window start)" % spread(s["settle_s"]))


# ---------------------------------------------------------------------------------------------


def glacier2_ports(cfg):
    """Client, server, TopicManager, Publish ports from the property file."""
    props = {}
    with open(cfg) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                props[k.strip()] = v.strip()
    ports = []
    for k in ("Glacier2.Client.Endpoints", "Glacier2.Server.Endpoints", "IceStorm.TopicManager.Endpoints",
              "IceStorm.Publish.Endpoints"):
        m = re.search(r"-p\s+(\d+)", props.get(k, ""))
        if not m:
            sys.exit("%s: no port in %s" % (cfg, k))
        ports.append(int(m.group(1)))
    return ports


def client_endpoint(a, transport):
    """The routers' client endpoint (a.ports[0]) for a --transport value: "ssl -h 127.0.0.1 -p 4063"..."""
    return "%s -h %s -p %d" % (TRANSPORTS[transport], HOST, a.ports[0])


def client_endpoint_configs(a, tmp, transport, yaml_extra="", cfg_extra=""):
    """Copies of conf/moraine.yaml and of the --glacier2-cfg file, in tmp, with the client endpoint
    (a.ports[0]) on TRANSPORTS[transport] instead of tcp and yaml_extra / cfg_extra appended (both
    routers' other endpoints stay tcp); the moraine copy with the absolute crypt_passwords path.
    Returns (moraine_yaml, glacier2_cfg), named moraine-<transport>.yaml, glacier2-<transport>.cfg."""
    proto = TRANSPORTS[transport]
    added = "\n# Added by perf/clock_compare.py --transport %s.\n" % transport

    src = a.moraine_yaml
    text = open(src).read()
    pat = r'(\n  endpoints: )"tcp (-h %s -p %d)"' % (re.escape(HOST), a.ports[0])
    text, k = re.subn(pat, lambda m: '%s"%s %s"' % (m.group(1), proto, m.group(2)), text)
    if k != 1:
        raise RunError("%s: expected one client endpoint \"tcp -h %s -p %d\"" % (src, HOST, a.ports[0]))
    text, k = re.subn(r"(\n  crypt_passwords: )(\S+)", lambda m: m.group(1) + os.path.join(os.path.dirname(src), m.group(2)), text)
    if k != 1:
        raise RunError("%s: expected one crypt_passwords key" % src)
    if yaml_extra:
        text += added + yaml_extra
    moraine_yaml = os.path.join(tmp, "moraine-%s.yaml" % transport)
    with open(moraine_yaml, "w") as f:
        f.write(text)

    text = open(a.glacier2_cfg).read()
    text, k = re.subn(r"^(Glacier2\.Client\.Endpoints\s*=\s*)tcp(\s)", lambda m: m.group(1) + proto + m.group(2),
                      text, flags=re.M)
    if k != 1:
        raise RunError("%s: expected one tcp Glacier2.Client.Endpoints" % a.glacier2_cfg)
    if cfg_extra:
        text += added + cfg_extra
    glacier2_cfg = os.path.join(tmp, "glacier2-%s.cfg" % transport)
    with open(glacier2_cfg, "w") as f:
        f.write(text)
    return moraine_yaml, glacier2_cfg


def tls_setup(a, tmp, subscriber):
    """Certificates and the routers' TLS configuration files, in tmp. Checks that clock-subscriber
    has the TLS options. Returns {moraine_yaml, glacier2_cfg, ctx, ws, sub_args, dir}."""
    helptext = subprocess.run([subscriber, "--help"], capture_output=True, text=True, timeout=10).stdout
    missing = [o for o in ("--tls-ca", "--tls-cert", "--tls-key") if o not in helptext]
    if missing:
        raise RunError("%s has no %s option (clock-subscriber --help)" % (subscriber, ", ".join(missing)))
    src = a.moraine_yaml
    if re.search(r"^tls:", open(src).read(), re.M):
        raise RunError("%s already has a tls: section; this script adds its own" % src)
    d = os.path.join(tmp, "tls")
    try:
        tls_certs.make(d)
    except (RuntimeError, OSError) as e:
        raise RunError("certificates: %s" % e)
    # moraine: a tls: section; glacier2router: the same settings as IceSSL keys.
    moraine_yaml, glacier2_cfg = client_endpoint_configs(
        a, tmp, "tls",
        yaml_extra="tls:\n  default_dir: %s\n  cas: ca.pem\n  cert_file: server.pem\n  key_file: server_key.pem\n"
                   "  verify_peer: 1\n" % d,
        cfg_extra="".join("%s=%s\n" % kv for kv in tls_certs.iceSSL_props(d, "server", verify_peer=1).items()))
    return dict(moraine_yaml=moraine_yaml, glacier2_cfg=glacier2_cfg, ctx=tls_certs.probe_context(d), ws=False,
                sub_args=["--tls-ca", os.path.join(d, "ca.pem"), "--tls-cert", os.path.join(d, "client.pem"),
                          "--tls-key", os.path.join(d, "client_key.pem")], dir=d)


def ws_setup(a, tmp):
    """The routers' configuration files with the client endpoint on ws, in tmp (glacier2router 3.7
    serves ws without a plugin; clock-subscriber needs only --router). Same keys as tls_setup."""
    moraine_yaml, glacier2_cfg = client_endpoint_configs(a, tmp, "ws")
    return dict(moraine_yaml=moraine_yaml, glacier2_cfg=glacier2_cfg, ctx=None, ws=True, sub_args=[])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", default="2000", help="comma-separated session counts (default 2000)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--window", type=int, default=30, help="steady-state seconds measured (default 30)")
    ap.add_argument("--settle", type=int, default=3,
                    help="status seconds skipped after all sessions are up; also how many seconds in a row must "
                         "deliver N ticks before the window starts")
    ap.add_argument("--settle-max", type=int, default=60,
                    help="at most this many more seconds waiting for N ticks/s in a row")
    ap.add_argument("--setup-timeout", type=float, default=180, help="seconds allowed for all sessions to come up")
    ap.add_argument("--wait-quiet", type=float, default=20,
                    help="before each run, wait up to this many s for other un-niced load under 0.5 cores (0: don't)")
    ap.add_argument("--routers", default="moraine,glacier2")
    ap.add_argument("--transport", default="tcp",
                    help="tcp, tls, ws or a comma-separated list (tcp,ws): the routers' client endpoint and "
                         "clock-subscriber's connection; each repeat runs all, interleaved (default tcp)")
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build-lead", "bin"))
    ap.add_argument("--glacier2-cfg", default=os.path.join(REPO, "conf", "glacier2.cfg"))
    ap.add_argument("--moraine-yaml", default=os.path.join(REPO, "conf", "moraine.yaml"),
                    help="moraine-router's configuration (default conf/moraine.yaml); an older build may need "
                         "the conf/moraine.yaml of its own commit, which today's router reads too")
    ap.add_argument("--kernel-bench", default=os.path.join(REPO, "build-perf", "bin", "bench_kernel_write"),
                    help="bench_kernel_write binary; '' to skip")
    ap.add_argument("--kernel-gap-us", type=int, default=0,
                    help="pace the kernel floor's rounds this far apart (1000000: one round per second, as the "
                         "clock ticks; cold sockets); 0 (default): back to back")
    ap.add_argument("--out", "--json", dest="out", default=None,
                    help="JSON result file (default perf/out/clock_compare-<time>.json; perf/plot_results.py reads it)")
    a = ap.parse_args()
    a.moraine_yaml = os.path.abspath(a.moraine_yaml)
    a.sessions_list = [int(x) for x in a.sessions.split(",") if x]
    kinds = [k for k in a.routers.split(",") if k]
    for k in kinds:
        if k not in ("moraine", "moraine-icestorm", "glacier2"):
            sys.exit("unknown router %s" % k)
    a.ports = glacier2_ports(a.glacier2_cfg)
    transports = [t for t in a.transport.split(",") if t]
    if not transports or any(t not in TRANSPORTS for t in transports) or len(set(transports)) != len(transports):
        sys.exit("--transport: any of tcp, tls, ws, comma-separated, each once")
    os.chdir(REPO)  # glacier2router reads Glacier2.CryptPasswords relative to the working directory

    out_json, logdir, stamp = output_paths("clock_compare", a.out)
    stop_on_sigterm()

    bins_tmp = tempfile.mkdtemp(prefix="moraine-clock-compare-")
    bins, bin_info = {}, {}
    for b in ("moraine-router", "clock-publisher", "clock-subscriber"):
        src = os.path.join(a.bin_dir, b)
        if not os.access(src, os.X_OK):
            sys.exit("missing %s" % src)
        bins[b] = os.path.join(bins_tmp, b)
        shutil.copy2(src, bins[b])
        bin_info[b] = dict(path=src, sha256=sha256(bins[b]),
                           mtime=datetime.datetime.fromtimestamp(os.path.getmtime(src)).isoformat())
    git = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    a.variants = {}  # transport -> the routers' configuration copies etc., for each transport but tcp
    for t in transports:
        if t == "tcp":
            continue
        try:
            a.variants[t] = tls_setup(a, bins_tmp, bins["clock-subscriber"]) if t == "tls" else ws_setup(a, bins_tmp)
        except RunError as e:
            shutil.rmtree(bins_tmp, ignore_errors=True)
            sys.exit("--transport %s: %s" % (t, e))
        for k in ("moraine_yaml", "glacier2_cfg"):  # what the routers read (cert paths point to a temp dir)
            shutil.copy2(a.variants[t][k], os.path.join(logdir, os.path.basename(a.variants[t][k])))

    result = dict(started=stamp, argv=sys.argv, git_head=git, binaries=bin_info, logs=logdir,
                  machine=dict(cpus=NCPU, kernel=os.uname().release,
                               cpu_model=next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                                               if l.startswith("model name")), "?"),
                               nofile_limit=subprocess.run(["sh", "-c", "ulimit -n"], capture_output=True,
                                                           text=True).stdout.strip()),
                  config=dict(sessions=a.sessions_list, repeats=a.repeats, window_s=a.window, settle_s=a.settle,
                              routers=kinds, transports=transports, glacier2_cfg=a.glacier2_cfg, ports=a.ports,
                              moraine_cfg=os.path.relpath(a.moraine_yaml, REPO)),
                  kernel={}, kernel_paired=[], runs=[])
    t0 = time.monotonic()

    def log_kernel(k):
        log("  write %.0f ns [%.0f-%.0f], writev2 %.0f ns, reader %.0f ns/message" % (
            k["write"]["cpu_ns_per_write"], k["write"]["min"], k["write"]["max"],
            k["writev2"]["cpu_ns_per_write"], k["write"]["reader_cpu_ns_per_msg"]))

    kernel_ok = bool(a.kernel_bench) and os.access(a.kernel_bench, os.X_OK)
    paired = kernel_ok and a.kernel_gap_us > 0

    def paired_floor(n, rep):
        """Paced: the floor is measured again just before each repeat's runs, and each run is
        compared with its own repeat's floor, so a drift of the machine during the sweep (seen on
        this VM: ±1 µs per event over minutes) moves both sides alike."""
        log("bench_kernel_write --sockets %d --gap-us %d (repeat %d)" % (n, a.kernel_gap_us, rep))
        k = kernel_bench(a.kernel_bench, n, a.kernel_gap_us, times=1)
        if k:
            log_kernel(k)
            result["kernel_paired"].append(dict(sessions=n, repeat=rep, **k))
        return k

    def measure():
        if kernel_ok and not paired:
            for n in a.sessions_list:
                log("bench_kernel_write --sockets %d%s" % (n, " --gap-us %d" % a.kernel_gap_us if a.kernel_gap_us else ""))
                result["kernel"][n] = kernel_bench(a.kernel_bench, n, a.kernel_gap_us)
                if result["kernel"][n]:
                    log_kernel(result["kernel"][n])
        elif a.kernel_bench and not kernel_ok:
            log("no %s: build it (see perf/README.md); skipping the kernel baseline" % a.kernel_bench)
        for n in a.sessions_list:
            for rep in range(1, a.repeats + 1):
                floor = paired_floor(n, rep) if paired else None
                for kind, transport in [(k, t) for t in transports for k in kinds]:
                    log("%s%s, %d sessions, repeat %d" % (kind, "" if transport == "tcp" else " over " + transport, n, rep))
                    r = one_run(kind, n, rep, a, bins, logdir, transport)
                    if floor:
                        r["kernel_write_ns"] = floor["write"]["cpu_ns_per_write"]
                    result["runs"].append(r)
                    if r.get("ok"):
                        c = r["cpu"]
                        log("  up in %.2f s; %.0f events/s, p50 %.2f ms p99 %.2f ms, lost %d; router %.0f ns/event%s; "
                            "RSS %.0f B/session; other load %.2f cores" % (
                                r["setup_interp_s"], r["events_per_s"], r["p50_ms"], r["p99_ms"], r["lost"],
                                c["router"]["ns_per_event"],
                                ", icebox %.0f ns/event" % c["icebox"]["ns_per_event"] if "icebox" in c else "",
                                r["rss_bytes_per_session"]["router"], r["other_busy_cores"]))
                    save_json(result, out_json)

    def add_summaries(res):
        res["summary"] = summarise(res["runs"], res["kernel"])
        res["transport_diff"] = transport_diffs(res["summary"])

    def report(res):
        print_runs(res["runs"])
        print_summary(res["summary"])
        print_transport_diffs(res["transport_diff"])

    return run_and_report(result, t0, out_json, logdir, bins_tmp, measure, add_summaries, report)


if __name__ == "__main__":
    sys.exit(main())
