#!/usr/bin/python3
"""cluster.py: the clock demo across N moraine-routers, reached through HAProxy or directly with a
multi-endpoint router proxy, with a real IceStorm (icebox) as the event backbone, on a small
"several hosts" topology of network namespaces. Measures set-up, steady-state delivery and CPU,
and optionally the failover of one router. Run as root.

  /usr/bin/python3 perf/cluster.py [--routers 2] [--sessions 2000] [--duration 30] [--threads 1]
        [--front haproxy|none|reuseport] [--auth crypt|allow_all] [--failover] [--check] [--bin build/bin] [--json FILE] [--keep-logs DIR]
        [--settle-min 3] [--settle-max 30] [--setup-timeout S] [--failover-timeout 60] [--tail 5]
        [--time-bound S] [--cleanup-stale] [--rate 1] [--sessions-per-subscriber 17000]
        [--backbone icebox|replicated|federated] [--kill-backbone] [--kill-replica publisher|master|slave|1|2|3]
        [--kill-what replica|node|registry] [--backbone-tail 30] [--hold-down 0] [--election-timeout 1] [--upstream-manager PROXY]

  e.g. the replicated backbone, one replica killed (perf/RESULTS-cluster.md, "A replicated backbone"):
  /usr/bin/python3 perf/cluster.py --routers 2 --sessions 4000 --front none --auth allow_all --duration 10 \
        --rate 10 --backbone replicated --kill-backbone --check --json kill.json
  /usr/bin/python3 perf/plot_backbone.py kill.png kill.json

Topology (addresses from 198.18.0.0/15, RFC 2544's benchmarking range; nothing is created in
the root namespace and no traffic leaves the namespaces made here). Every namespace is named
mrn<pid>-<role>, so concurrent runs never collide:

  mrn<pid>-sw    the "switch": a Linux bridge br0 and, for each node, the switch end of its
                 veth pair (the node end is eth0 in the node, 198.18.x.y/15)
  mrn<pid>-bb    198.18.0.2   icebox with IceStorm 3.7.8 (instance IceStorm, transient,
                              TopicManager :10000, Publish :10001) and clock-publisher --rate 1
  mrn<pid>-lb    198.18.0.3   HAProxy (tcp mode, :4063, leastconn, health checks on each
                              router's client port): ceil(sessions / 9000) + 1 processes with
                              the same configuration (maxconn 9500 each, SO_REUSEPORT)
  mrn<pid>-r<i>  198.18.1.<i> moraine-router, its embedded topic service kept linked from the
                              backbone by its own topics.upstream section (topic `time`)
  mrn<pid>-c<j>  198.18.2.<j> clock-subscriber --reconnect through HAProxy, at most 17,000
                              sessions per process (the 20,000 descriptors limit), or
                              --sessions-per-subscriber: each process has one thread, and its
                              CPU bounds how fast its sessions come back after a failover

--backbone replicated: instead of the icebox, IceStorm replicated 3 times under IceGrid 3.7:

  mrn<pid>-bb    198.18.0.2   icegridregistry (IceGrid/Locator :4061) and clock-publisher --locator
                              --twoway: it finds IceStorm/TopicManager and the topic's publisher
                              through the registry, waits for each tick's reply and sends a tick
                              again to another replica when its replica dies
  mrn<pid>-bb<k> 198.18.0.1<k> icegridnode node<k> (k = 1..3) running replica k: an icebox with
                              IceStorm in its replicated mode (NodeId k, LMDB in the node's data,
                              TopicManager :10000, Publish :10001, election :10002), activation
                              "always", so its node starts it again when it dies

The application (written to backbone.xml) puts the TopicManager and Publish adapters in replica
groups IceStorm.TopicManagerReplicaGroup (well-known object IceStorm/TopicManager) and
IceStorm.PublishReplicaGroup, and sets IceStorm.Election.{Master,Election,Response}Timeout to
--election-timeout seconds (IceStorm's default 10). Each router gets the registry as its locator
and topics.upstream.topic_manager IceStorm/TopicManager (--upstream-manager: another proxy): the
link is replicated state, so each replica forwards the events published to it to every router.
The run starts once every replica has reported for duty in one group (IceStorm.Trace.Election=1,
read from the nodes' server output files: node<k>-servers/ in the log directory).

--kill-backbone: after the steady window, 2 s of timeline and a random 0-1 s more (the kill falls at
a random phase of the replicas' 1 s election timers), then `kill -9` of one replica's icebox
(--kill-replica: the one the publisher is connected to (default), the master, a slave, or k); the
routers' moraine_events_delivered_total and moraine_sessions are read every 0.1 s until the
replica's node has started it again and the replicas replicate 3/3 again (the coordinator's
`replication commencing with 3/3 nodes`; at most --backbone-tail s), then --tail s more. Reported:
when it was started again, listening, in a group and 3/3; the clock's longest stop as the
subscribers saw it (their `max gap`, the longest wait of a session for its next tick, less the
publisher's period); the routers' longest stretch without a delivery; the ticks lost and received
twice since the kill; the publisher's failover lines and the replicas' election trace (JSON).
--check adds: lost 0, a clock stop of at most 1 s, the replica back. perf/plot_backbone.py
plots the timeline (events/s and sessions up against time, the kill marked).
--kill-what node: the same, but what dies is replica k's IceGrid node together with its icebox (as
when a host, or a supervisor's whole unit, goes down), and this script starts the node again after
--hold-down s (default 0: at once, as a supervisor with Restart=always would); the node then starts
its replica (activation "always"). --kill-what registry: `kill -9` of the icegridregistry, started
again by this script after --hold-down s with the same configuration and database; it is back once
every node has registered with it again (its trace: node `nodeK' up). Events do not pass through the
registry: the routers and the publisher keep their resolved endpoints meanwhile.

--backbone federated: instead of IceStorm, 3 moraine-topics (in memory) in mrn<pid>-bb1..3
(198.18.0.1<k>), separate topic services that know nothing of each other. Each publishes its own
TopicManager endpoint (the topic proxies it hands out, where a router's link is made, name that
member) and every member's Publish endpoint (the publisher proxy names all three). Each router's topics.upstream names all three with `federated: true`, so the topic is
linked from every member, and whichever member receives a tick forwards it to every router.
clock-publisher --topic-manager <all three> --twoway publishes to one member and, when its
connection fails, sends the tick again to another. With --kill-backbone the member the publisher
talks to (or --kill-replica k) is killed and started again after --hold-down s; it is back once
every router has linked its topic from the new process (the member's `link to` traces). No
election: nothing but the publisher's switch stands between a kill and the next tick.

--front none: no HAProxy and no mrn<pid>-lb; each clock-subscriber gets a router proxy with one
endpoint per router (`tcp -h 198.18.1.1 -p 4063:tcp -h 198.18.1.2 -p 4063:...`), picks one at
random per session as Ice does (Ice.Default.EndpointSelection=Random), and on a failed connect or
a reconnect tries the others: nothing but the routers between the clients and the backbone.

--front reuseport: no HAProxy either, and the routers share one "host": every router runs in one
namespace mrn<pid>-r (198.18.1.1) and binds the same client port 4063 with client.reuse_port, so
the kernel spreads the connections (SO_REUSEPORT) and the subscribers' router proxy has that one
endpoint. Router i's other ports are its own (base + 100 i: server 4064, TopicManager 10000,
Publish 10001, metrics 9464); each topic service publishes 127.0.0.1:10000, which none binds,
and each router reaches its own there (docs/deployment.md, "several routers on one host").

Each client's TopicManager (IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000), routed through
whichever router HAProxy gave it, is that router's own topic service: the backbone forwards
each event once per router, and each router fans it out to its sessions.

Phases: start the backbone, the routers (each must report its upstream link), the publisher
and HAProxy; start the subscribers and time until every session is up; read the sessions each
router holds (moraine_sessions on its /metrics); settle until every subscriber gets one tick
per session per second; a steady window of --duration seconds in which every process's CPU
(utime + stime from /proc/PID/stat) and the routers' RSS and counters are read at both ends;
with --failover, `kill -9` router 1 and time how long until the subscribers report every
session restored (reconnecting 0, restored = the sessions router 1 held), then --tail more
seconds of ticks. The subscribers are then stopped with SIGINT and their `result {json}` line
is collected (older binaries without it: they run for exactly the time needed and their
`summary:` line is read instead). Everything is stopped by PID and the namespaces are
deleted at the end, on Ctrl-C, on SIGTERM, on errors, and when the run passes its time bound.

CPU per delivered event is given for the routers alone, for the infrastructure (routers +
HAProxy + icebox) and for the load generators (subscribers + publisher). Its denominator is the
routers' moraine_events_delivered_total over the window (read right after the CPU at both ends);
the events the subscribers received (the sum of their per-second tick counts) are reported
beside it: with lost 0 they agree up to the tick bursts their status lines cut at either end.
Times read from the subscribers' status lines have a 1 s grain; the routers' gauges
(moraine_sessions, moraine_subscribers), polled every 0.2-0.5 s, give the finer ones.

--check: exit 1 unless every session came up, the undisturbed sessions lost no tick, the
routers delivered at least 95% of one tick per session per second in the steady window (and the
subscribers received that, give or take the bursts cut at its ends), and with --failover every
session of the killed router was restored (and none still reconnecting).

--cleanup-stale: first delete the mrn<pid>-* namespaces of runs whose process is gone
(left behind by a kill -9) and that hold no process.

Logs of every process go to a temporary directory (--keep-logs DIR: that directory, kept);
on failure the directory is kept and the tail of every log is printed. Needs root, iproute2,
/usr/bin/icebox (zeroc-icebox), /usr/sbin/haproxy (apt-get install haproxy), for --backbone replicated
icegridregistry, icegridnode and icegridadmin (zeroc-icegrid), and python3-yaml;
the probes inside the namespaces (TCP connects, /metrics) are made by this script itself, from
a thread that entered the namespace with setns(2). Exit codes: 0 ok, 1 failed
or --check failed, 2 cannot run here (not root, missing program), 130 interrupted.
"""
import argparse
import ctypes
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from perf_common import portable, sched_ns, sha256  # perf/perf_common.py (this directory is on sys.path when run as a script)
import icestorm_replicas  # noqa: E402  (tests/interop/icestorm_replicas.py, on sys.path through perf_common)

PERF = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(PERF)
ICEBOX = "/usr/bin/icebox"
HAPROXY = "/usr/sbin/haproxy"
CLK_TCK = os.sysconf("SC_CLK_TCK")

BACKBONE_IP = "198.18.0.2"
LB_IP = "198.18.0.3"
PREFIX_LEN = 15  # every address is in 198.18.0.0/15: one L2 segment, no routes needed
CLIENT_PORT, SERVER_PORT, TM_PORT, PUB_PORT, METRICS_PORT = 4063, 4064, 10000, 10001, 9464
TOPIC = "time"
INSTANCE = "IceStorm"

# --backbone replicated: an IceGrid registry in mrn<pid>-bb and one IceGrid node per IceStorm replica
ICEGRIDREGISTRY = "/usr/bin/icegridregistry"
ICEGRIDNODE = "/usr/bin/icegridnode"
ICEGRIDADMIN = "/usr/bin/icegridadmin"
REGISTRY_PORT = 4061
NODE_PORT = 10002        # each replica's election endpoint (IceStorm's <service>.Node adapter)
REPLICAS = 3
TM_GROUP = INSTANCE + ".TopicManagerReplicaGroup"
PUB_GROUP = INSTANCE + ".PublishReplicaGroup"


def replica_ip(k):
    return "198.18.0.%d" % (10 + k)


def locator_proxy():
    return "IceGrid/Locator:tcp -h %s -p %d" % (BACKBONE_IP, REGISTRY_PORT)

SESSIONS_PER_HAPROXY = 9000   # sessions planned per HAProxy process (one more process as margin)
ROUTER_FD_BUDGET = 19500      # connections one router may take (its 20,000 descriptors less listeners, links, logs)
HAPROXY_MAXCONN = 9500        # 2 descriptors per proxied connection: ~19,000 of the 20,000
SESSIONS_PER_SUBSCRIBER = 17000

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


class Fail(Exception):
    """The run cannot go on; the message says why."""


class TimeBound(BaseException):
    """The run passed its overall time bound (raised in the main thread by the watchdog)."""


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def _child_setup():
    _libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG: a child dies with this script


# ---------------------------------------------------------------------------------------------
# Namespaces

def ip(*args, check=True):
    r = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=20)
    if check and r.returncode != 0:
        raise Fail("ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


def in_netns(ns, fn, *args, timeout=30):
    """Runs fn(*args) in a fresh thread that first enters network namespace `ns` (setns only
    changes the calling thread's namespace): sockets it makes belong to `ns`. Returns its value
    or raises its exception."""
    out = {}

    def body():
        try:
            fd = os.open("/var/run/netns/" + ns, os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    e = ctypes.get_errno()
                    raise OSError(e, "setns(%s): %s" % (ns, os.strerror(e)))
            finally:
                os.close(fd)
            out["value"] = fn(*args)
        except BaseException as e:  # noqa: B902 (handed to the caller)
            out["error"] = e

    t = threading.Thread(target=body, daemon=True, name="netns-" + ns)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise Fail("%s in namespace %s: no answer in %d s" % (getattr(fn, "__name__", "call"), ns, timeout))
    if "error" in out:
        raise out["error"]
    return out.get("value")


def tcp_open(host, port, timeout=1.0):
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        return True
    except OSError:
        return False


def http_get(url, timeout=5.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode(errors="replace")


TCP_COUNTERS = ("ListenOverflows", "ListenDrops", "TCPReqQFullDrop", "TCPReqQFullDoCookies", "TCPBacklogDrop",
                "TCPTimeouts", "TCPSynRetrans")


def tcp_ext_counters():
    """Every TcpExt counter of the calling thread's network namespace (run it through in_netns)."""
    with open("/proc/thread-self/net/netstat") as f:
        lines = f.read().splitlines()
    for head, values in zip(lines[::2], lines[1::2]):
        if head.startswith("TcpExt:"):
            return dict(zip(head.split()[1:], (int(v) for v in values.split()[1:])))
    return {}


def parse_metrics(text):
    """Sums over shards of every sample of a Prometheus text: {name: value}."""
    sums = {}
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)$", line)
        if m:
            try:
                sums[m.group(1)] = sums.get(m.group(1), 0.0) + float(m.group(2))
            except ValueError:
                pass
    return sums


# ---------------------------------------------------------------------------------------------
# /proc

def cpu_seconds(pid):
    """utime + stime of a process (all its threads), in seconds; None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def sched_seconds(pid):
    """On-CPU seconds of the live threads (procstat.sched_ns); None once the process is gone."""
    ns = sched_ns(pid)
    return None if ns is None else ns / 1e9


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------
# Processes

class Proc:
    """A child started in a namespace (`ip netns exec` execs the command: the PID is the
    program's own). Its own session, so a Ctrl-C on the terminal reaches only this script, which
    stops the children in order; PR_SET_PDEATHSIG kills it if this script dies."""

    def __init__(self, run, name, role, ns, cmd, pipe=False):
        self.name, self.role, self.ns, self.cmd = name, role, ns, cmd
        self.log_path = os.path.join(run.logdir, name + ".log")
        self.log = open(self.log_path, "ab")
        self.log.write(("# %s (namespace %s)\n" % (" ".join(cmd), ns)).encode())
        self.log.flush()
        self.popen = subprocess.Popen(["ip", "netns", "exec", ns] + cmd, cwd=run.tmp, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE if pipe else self.log, stderr=subprocess.STDOUT,
                                      start_new_session=True, preexec_fn=_child_setup)
        self.pid = self.popen.pid
        self.killed = False  # killed on purpose (failover): not an error

    def alive(self):
        return self.popen.poll() is None

    def send(self, sig):
        if self.alive():
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        """sig by PID, SIGKILL after timeout seconds."""
        if self.alive():
            self.send(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                try:
                    self.popen.wait(5)
                except subprocess.TimeoutExpired:
                    pass

    def tail(self, n=15):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 64 * 1024))
                text = f.read().decode(errors="replace").replace("\r", "\n")
            return "\n".join(l for l in text.splitlines() if l.strip())[-4000:].splitlines()[-n:]
        except OSError:
            return []


# clock-subscriber's status line, once a second (demo/clock/clock_subscriber.cpp, print_status):
# ticks/s, p50 and p99 are of the second just ended, lost (and lost after reconnect) since the
# start; with --reconnect it ends with `reconnecting X  restored Y`. The final status line follows
# the last one without a '\r', so one text line may hold two: every match is used, in order.
STATUS = re.compile(r"([\d.]+)s  sessions up (\d+) \(failed (\d+), dropped (\d+)\)  ticks/s (\d+)  lost (\d+)  "
                    r"p50 ([\d.]+) ms  p99 ([\d.]+) ms(?:  lost after reconnect (\d+))?"
                    r"(?:  reconnecting (\d+)  restored (\d+))?"
                    r"(?:  max gap (\d+) ms  duplicates (\d+))?")
ALL_UP = re.compile(r"^(\d+) sessions up in ([\d.]+) s")
SUMMARY = re.compile(r"^summary: sessions (\d+) up, (\d+) failed.*?, (\d+) dropped by the router; ticks received (\d+), "
                     r"lost (\d+), malformed (\d+); latency p50 ([\d.]+) ms, p99 ([\d.]+) ms")
RECONNECTIONS = re.compile(r"^reconnections: (\d+) sessions restored, (\d+) reconnecting at the end")


# An IceStorm replica's election trace (IceStorm.Trace.Election=1) when it joins a group: as its
# coordinator (the master) or as a slave.
DUTY = re.compile(r"node (\d+): reporting for duty in group")
COMMENCING = re.compile(r"replication commencing with (\d+)/(\d+) nodes")
# What a --kill-backbone run notes the time of (None until seen): whichever apply to what was killed.
KILL_EVENTS = ("restarted", "listening", "rejoined", "replica_set_full", "enabled", "node_started", "nodes_back",
               "new_pid", "relinked")
# A moraine-topics member's trace (topics.trace.topic: 1) when a router links its topic from it.
LINK_TRACE = re.compile(r"topic '[^']+': link to '([^']+)'")
# The IceGrid registry's trace (IceGrid.Registry.Trace.Node=1) when a node registers or goes.
NODE_TRACE = re.compile(r"Node: node `([^']+)' (up|down)")


class LogWatch:
    """Follows files another process writes (an IceGrid node's server output), every 50 ms, and
    keeps each new line with the monotonic time it was seen."""

    def __init__(self, paths):
        self.paths = paths
        self.offsets = {p: 0 for p in paths}
        self.partial = {p: b"" for p in paths}
        self.seen = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True, name="logwatch")

    def start(self):
        self.thread.start()

    def _run(self):
        while True:
            for p in self.paths:
                try:
                    with open(p, "rb") as f:
                        if os.fstat(f.fileno()).st_size < self.offsets[p]:  # truncated: written anew
                            self.offsets[p], self.partial[p] = 0, b""
                        f.seek(self.offsets[p])
                        data = f.read()
                except OSError:
                    continue
                if not data:
                    continue
                now = time.monotonic()
                self.offsets[p] += len(data)
                parts = (self.partial[p] + data).split(b"\n")
                self.partial[p] = parts.pop()
                with self.lock:
                    self.seen += [(now, l.decode(errors="replace")) for l in parts if l.strip()]
            time.sleep(0.05)

    def lines(self, after=None):
        with self.lock:
            return [(t, l) for t, l in self.seen if after is None or t >= after]

    def find(self, regex, after=None):
        """(time, line) of the first line since `after` that `regex` matches, or None."""
        for t, l in self.lines(after):
            if regex.search(l):
                return t, l
        return None


class Subscriber:
    """One clock-subscriber process and what its output said (read by a thread)."""

    def __init__(self, run, index, ns, sessions, cmd):
        self.index, self.sessions = index, sessions
        self.name = "subscriber-%d" % index
        self.proc = Proc(run, self.name, "subscriber", ns, cmd, pipe=True)
        self.lock = threading.Lock()
        self.statuses = []         # (monotonic arrival, status dict)
        self.ticks_total = 0       # sum of ticks/s over every status line: every tick received
        self.all_up = None         # (monotonic, sessions, seconds it said)
        self.summary = None
        self.reconnections = None
        self.result = None
        self.errors = []
        self.thread = threading.Thread(target=self._read, daemon=True, name=self.name)
        self.thread.start()

    def _read(self):
        fd = self.proc.popen.stdout.fileno()
        partial = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            data = partial + chunk
            parts = re.split(rb"[\r\n]", data)
            partial = parts.pop()
            for p in parts:
                if p.strip():
                    self._line(p.decode(errors="replace"))
        if partial.strip():
            self._line(partial.decode(errors="replace"))

    def _line(self, text):
        now = time.monotonic()
        self.proc.log.write((text.rstrip() + "\n").encode())
        self.proc.log.flush()
        with self.lock:
            for m in STATUS.finditer(text):
                g = m.groups()
                st = {"t": float(g[0]), "up": int(g[1]), "failed": int(g[2]), "dropped": int(g[3]),
                      "ticks": int(g[4]), "lost": int(g[5]), "p50": float(g[6]), "p99": float(g[7]),
                      "lost_reconnected": None if g[8] is None else int(g[8]),
                      "reconnecting": None if g[9] is None else int(g[9]),
                      "restored": None if g[10] is None else int(g[10]),
                      "max_gap_ms": None if g[11] is None else int(g[11]),
                      "duplicates": None if g[12] is None else int(g[12])}
                self.ticks_total += st["ticks"]
                st["ticks_total"] = self.ticks_total
                self.statuses.append((now, st))
            m = ALL_UP.match(text)
            if m:
                self.all_up = (now, int(m.group(1)), float(m.group(2)))
            m = SUMMARY.match(text)
            if m:
                g = m.groups()
                self.summary = {"sessions_up": int(g[0]), "failed": int(g[1]), "dropped": int(g[2]), "ticks": int(g[3]),
                                "lost": int(g[4]), "p50_ms": float(g[6]), "p99_ms": float(g[7])}
            m = RECONNECTIONS.match(text)
            if m:
                self.reconnections = {"restored": int(m.group(1)), "reconnecting": int(m.group(2))}
            if text.startswith("result "):
                try:
                    self.result = json.loads(text[len("result "):])
                except ValueError:
                    self.errors.append("unreadable result line: " + text)
            if text.startswith("clock-subscriber:"):
                self.errors.append(text)

    def last(self):
        with self.lock:
            return self.statuses[-1] if self.statuses else (None, None)

    def since(self, t0, t1=None):
        with self.lock:
            return [s for t, s in self.statuses if t >= t0 and (t1 is None or t <= t1)]

    def final(self):
        """The run's figures: the result line, else the summary (+ reconnections) line, else None."""
        with self.lock:
            if self.result is not None:
                return dict(self.result, source="result")
            if self.summary is not None:
                r = dict(self.summary, source="summary", lost_reconnected=None, restored=None, reconnecting=None)
                if self.reconnections:
                    r.update(self.reconnections)
                return r
        return None


# ---------------------------------------------------------------------------------------------
# HAProxy

def haproxy_config(stats_socket, routers, processes):
    # Each router may open ROUTER_FD_BUDGET connections (its descriptor limit less headroom);
    # every HAProxy process gets an equal share of that, so together they never push a router
    # past its limit: what does not fit waits in HAProxy's queue or goes to another router.
    per_server = ROUTER_FD_BUDGET // processes
    servers = "\n".join("    server r%d 198.18.1.%d:%d maxconn %d" % (i, i, CLIENT_PORT, per_server)
                         for i in range(1, routers + 1))
    return """# written by perf/cluster.py; one HAProxy process per copy of this file (only the stats socket differs)
global
    maxconn {maxconn}
    nbthread 1
    # fail at start rather than run with fewer descriptors than maxconn needs
    strict-limits
    stats socket {sock} mode 600 level admin
    # no log target: with -db, alerts and warnings (servers going DOWN/UP) go to stderr

defaults
    mode tcp
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout check 2s
    # a connection waiting for a router with a free slot (server maxconn) waits this long
    timeout queue 10s
    retries 3
    # redispatch on every retry (the default is the last one only): a client that HAProxy sent
    # to a router that just died goes elsewhere on its first retry
    option redispatch 1

frontend routers_in
    bind {lb}:{port}
    maxconn {maxconn}
    default_backend routers

backend routers
    balance leastconn
    default-server check inter 500ms fall 2 rise 2
{servers}
""".format(maxconn=HAPROXY_MAXCONN, sock=stats_socket, lb=LB_IP, port=CLIENT_PORT, servers=servers)


def haproxy_cmd(sock, cmd, timeout=3.0):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(sock)
        s.sendall(cmd.encode() + b"\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace")


def haproxy_info(sock):
    info = {}
    for line in haproxy_cmd(sock, "show info").splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            info[k.strip()] = v.strip()
    return info


def haproxy_servers(sock):
    """{server name: (status, current sessions)} of backend `routers`."""
    lines = haproxy_cmd(sock, "show stat").splitlines()
    if not lines or not lines[0].startswith("# "):
        return {}
    head = lines[0][2:].split(",")
    out = {}
    for line in lines[1:]:
        row = dict(zip(head, line.split(",")))
        if row.get("pxname") == "routers" and row.get("svname") not in ("BACKEND", "FRONTEND"):
            out[row["svname"]] = (row.get("status", "?"), int(row.get("scur") or 0))
    return out


# ---------------------------------------------------------------------------------------------
# The run

def clean(d):
    """A YAML mapping without the keys whose value is None (left to their defaults)."""
    if isinstance(d, dict):
        return {k: clean(v) for k, v in d.items() if v is not None}
    return d


class Run:
    def __init__(self, a):
        self.a = a
        self.prefix = "mrn%d" % os.getpid()
        self.namespaces = []       # made by this run, in order
        self.procs = []            # every child, in start order
        self.routers = []          # Proc per router (index i-1 is router i)
        self.haproxies = []        # (Proc, stats socket path)
        self.subscribers = []
        self.icebox = self.publisher = None
        self.registry = None
        self.nodes = []            # --backbone replicated: Proc per IceGrid node (index k-1: replica k)
        self.node_cmds = {}        # replica k: its node's command line
        self.members = {}          # --backbone federated: member k's moraine-topics (Proc)
        self.member_cmds = {}      # member k: its command line
        self.registry_cmd = None
        self.replica_logs = {}     # replica k: LogWatch of its IceStorm's output (election traces)
        if a.keep_logs:
            os.makedirs(a.keep_logs, exist_ok=True)
            self.logdir = os.path.abspath(a.keep_logs)
        self.tmp = tempfile.mkdtemp(prefix="moraine-cluster-")
        if not a.keep_logs:
            self.logdir = os.path.join(self.tmp, "logs")
            os.makedirs(self.logdir)
        self.result = {"config": {}, "ok": False}
        self.stopping_subscribers = False  # from then on a subscriber that exits is expected
        self.rss_idle = {}

    # -- topology ---------------------------------------------------------------------------

    def ns(self, role):
        return "%s-%s" % (self.prefix, role)

    def add_ns(self, role):
        name = self.ns(role)
        ip("netns", "add", name)
        self.namespaces.append(name)
        ip("-n", name, "link", "set", "lo", "up")
        return name

    def add_node(self, role, addr, wide_ports=False, somaxconn=0):
        """A node namespace with eth0 (addr/15), its veth peer `role` on the switch's bridge;
        somaxconn > 0: the namespace's net.core.somaxconn (the cap of every listen queue in it)."""
        name = self.add_ns(role)
        sw = self.ns("sw")
        ip("-n", sw, "link", "add", role, "type", "veth", "peer", "name", "eth0", "netns", name)
        ip("-n", sw, "link", "set", role, "master", "br0", "up")
        ip("-n", name, "addr", "add", "%s/%d" % (addr, PREFIX_LEN), "dev", "eth0")
        ip("-n", name, "link", "set", "eth0", "up")
        if wide_ports:
            r = subprocess.run(["ip", "netns", "exec", name, "sysctl", "-q", "-w", "net.ipv4.ip_local_port_range=1024 65535"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=10)
            if r.returncode != 0:
                raise Fail("sysctl ip_local_port_range in %s: %s" % (name, r.stdout.strip()))
        if somaxconn:
            r = subprocess.run(["ip", "netns", "exec", name, "sysctl", "-q", "-w", "net.core.somaxconn=%d" % somaxconn],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=10)
            if r.returncode != 0:
                raise Fail("sysctl somaxconn in %s: %s" % (name, r.stdout.strip()))
        return name

    def build_topology(self, routers, clients):
        sw = self.add_ns("sw")
        ip("-n", sw, "link", "add", "br0", "type", "bridge")
        ip("-n", sw, "link", "set", "br0", "up")
        self.add_node("bb", BACKBONE_IP)
        if self.a.backbone in ("replicated", "federated"):
            for k in range(1, REPLICAS + 1):
                self.add_node("bb%d" % k, replica_ip(k))
        if self.a.front == "haproxy":
            self.add_node("lb", LB_IP, wide_ports=True)
        for role in sorted({self.router_role(i) for i in range(1, routers + 1)}):
            self.add_node(role, self.router_ip(int(role[1:])), somaxconn=self.a.tcp_backlog)
        for j in range(1, clients + 1):
            self.add_node("c%d" % j, "198.18.2.%d" % j, wide_ports=True)

    # -- where router i is: its own host, or (--front reuseport) one host shared by all -------

    def router_role(self, i):
        return "r1" if self.a.front == "reuseport" else "r%d" % i

    def router_ip(self, i):
        return "198.18.1.1" if self.a.front == "reuseport" else "198.18.1.%d" % i

    def router_port(self, i, base):
        """Router i's port for `base`: the same on every host, or its own where they share one
        (the client port excepted: that one is shared)."""
        return base + 100 * i if self.a.front == "reuseport" and base != CLIENT_PORT else base

    # -- processes --------------------------------------------------------------------------

    def start(self, name, role, ns, cmd):
        p = Proc(self, name, role, ns, cmd)
        self.procs.append(p)
        return p

    def check_alive(self):
        for p in self.procs:
            if not p.killed and not p.alive() and not (p.role == "subscriber" and self.stopping_subscribers):
                raise Fail("%s (pid %d) exited with status %s" % (p.name, p.pid, p.popen.returncode))

    def wait_for(self, pred, timeout, what, interval=0.2, progress=None):
        """Polls pred() until truthy; Fail after timeout seconds or when a child died."""
        end = time.monotonic() + timeout
        next_progress = time.monotonic() + 5
        while True:
            v = pred()
            if v:
                return v
            self.check_alive()
            now = time.monotonic()
            if now >= end:
                raise Fail("%s: not within %.0f s" % (what, timeout))
            if progress and now >= next_progress:
                log(progress())
                next_progress = now + 5
            time.sleep(interval)

    def router_metrics(self, i, timeout=5.0):
        """Router i's /metrics (sums over shards), read inside its namespace; None if unreachable."""
        try:
            text = in_netns(self.ns(self.router_role(i)), http_get,
                            "http://127.0.0.1:%d/metrics" % self.router_port(i, METRICS_PORT), timeout,
                            timeout=timeout + 2)
            return parse_metrics(text)
        except (OSError, Fail):
            return None

    def live_routers(self):
        return [i for i in range(1, len(self.routers) + 1) if not self.routers[i - 1].killed]

    def scrape_routers(self):
        return {i: self.router_metrics(i) for i in self.live_routers()}

    # -- phases -----------------------------------------------------------------------------

    def copy_binaries(self):
        """Copies the programs into the run's directory: a rebuild of --bin during the run changes nothing."""
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir)
        self.bins, sums = {}, {}
        for prog in ("moraine-router", "clock-subscriber", "clock-publisher", "moraine-topics"):
            src = os.path.join(self.a.bin, prog)
            dst = os.path.join(bindir, prog)
            shutil.copy2(src, dst)
            self.bins[prog] = dst
            sums[prog] = sha256(dst)
        with open(self.bins["clock-subscriber"], "rb") as f:
            self.subscriber_has_result = b'result {"sessions_up"' in f.read()
        self.result["config"]["binaries"] = {"dir": os.path.abspath(self.a.bin), "sha256": sums}
        self.result["config"]["subscriber_result_line"] = self.subscriber_has_result

    def start_backbone(self):
        if self.a.backbone == "replicated":
            return self.start_replicated_backbone()
        if self.a.backbone == "federated":
            return self.start_federated_backbone()
        bb = self.ns("bb")
        cfg = os.path.join(self.tmp, "icebox.cfg")
        props = {
            "IceBox.Service.IceStorm": "IceStormService,37:createIceStorm --Ice.Config=%s" % cfg,
            "IceStorm.InstanceName": INSTANCE,
            "IceStorm.TopicManager.Endpoints": "tcp -h %s -p %d" % (BACKBONE_IP, TM_PORT),
            "IceStorm.Publish.Endpoints": "tcp -h %s -p %d" % (BACKBONE_IP, PUB_PORT),
            "IceStorm.Transient": "1",
            "IceStorm.Discard.Interval": "1",
            "Ice.Warn.Connections": "0",
        }
        with open(cfg, "w") as f:
            f.write("# written by perf/cluster.py\n")
            for k in sorted(props):
                f.write("%s=%s\n" % (k, props[k]))
        self.icebox = self.start("icebox", "backbone", bb, [ICEBOX, "--Ice.Config=" + cfg])
        for port in (TM_PORT, PUB_PORT):
            self.wait_for(lambda port=port: in_netns(bb, tcp_open, BACKBONE_IP, port), 20,
                          "icebox listening on %s:%d" % (BACKBONE_IP, port))

    # -- --backbone federated --------------------------------------------------------------

    def member_endpoints(self, port):
        """Every federation member's endpoint on `port`, ':'-joined (what each publishes)."""
        return ":".join("tcp -h %s -p %d" % (replica_ip(k), port) for k in range(1, REPLICAS + 1))

    def start_federated_backbone(self):
        """REPLICAS moraine-topics, one per namespace mrn<pid>-bb<k>, in memory, knowing nothing of
        each other: the routers link each topic from every member. Each publishes its own
        TopicManager endpoint (a router's link must be made at that member) and every member's
        Publish endpoint (the publisher object's proxy names all three, for the publisher's
        failover)."""
        import yaml  # python3-yaml
        t0 = time.monotonic()
        for k in range(1, REPLICAS + 1):
            topics = {"enabled": True, "instance_name": INSTANCE, "transient": True, "discard_interval_s": 1,
                      "topic_manager_endpoints": "tcp -h %s -p %d" % (replica_ip(k), TM_PORT),
                      "publish_endpoints": "tcp -h %s -p %d" % (replica_ip(k), PUB_PORT),
                      "publish_published_endpoints": self.member_endpoints(PUB_PORT),
                      "trace": {"topic": 1}}  # "topic 'time': link to ...": a restarted member's links again
            path = os.path.join(self.tmp, "member-%d.yaml" % k)
            with open(path, "w") as f:
                f.write("# written by perf/cluster.py: member %d of a federated backbone\n" % k)
                yaml.safe_dump({"topics": topics}, f, sort_keys=False, default_flow_style=False)
            self.member_cmds[k] = [self.bins["moraine-topics"], "--config", path, "--threads", "1"]
            self.members[k] = self.start("moraine-topics-%d" % k, "backbone", self.ns("bb%d" % k), self.member_cmds[k])
        for k in range(1, REPLICAS + 1):
            self.wait_for(lambda k=k: in_netns(self.ns("bb%d" % k), tcp_open, replica_ip(k), TM_PORT), 20,
                          "moraine-topics %d listening on %s:%d" % (k, replica_ip(k), TM_PORT))
        self.result["backbone"] = {"kind": "federated", "members": REPLICAS, "formed_s": round(time.monotonic() - t0, 2)}
        log("backbone: %d moraine-topics, federated (%s)" % (REPLICAS, ", ".join(replica_ip(k) for k in range(1, REPLICAS + 1))))

    # -- --backbone replicated -------------------------------------------------------------

    def backbone_xml(self):
        """The IceGrid application: IceStorm replicated 3 times (IceStorm's HA mode: an elected
        master, the others slaves; each replica delivers the events published to it), one
        replica per node, each an IceBox server with activation "always" (its node starts it
        again when it dies). The TopicManager and Publish adapters are in replica groups; the
        adapter ids follow the <instance><node id>.TopicManager / .Node pattern by which each
        replica finds the others through the registry."""
        boxes = [(("node%d" % k), [icestorm_replicas.replica_icebox(
            INSTANCE, k, "tcp -h %s -p %d" % (replica_ip(k), TM_PORT), "tcp -h %s -p %d" % (replica_ip(k), PUB_PORT),
            "tcp -h %s -p %d" % (replica_ip(k), NODE_PORT), TM_GROUP, PUB_GROUP, self.a.election_timeout,
            run_as_root=True, extra_properties={"Trace.Election": 1})]) for k in range(1, REPLICAS + 1)]
        return icestorm_replicas.application("Backbone", INSTANCE, TM_GROUP, PUB_GROUP, boxes,
                                             "written by perf/cluster.py: IceStorm replicated %d times under IceGrid"
                                             % REPLICAS)

    def write_config(self, name, props):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write("# written by perf/cluster.py\n")
            for k in sorted(props):
                f.write("%s=%s\n" % (k, props[k]))
        return path

    def start_replicated_backbone(self):
        bb = self.ns("bb")
        t0 = time.monotonic()
        reg_data = os.path.join(self.tmp, "registry")
        os.makedirs(reg_data)
        cfg = self.write_config("registry.cfg", {
            "IceGrid.InstanceName": "IceGrid",
            "IceGrid.Registry.Client.Endpoints": "tcp -h %s -p %d" % (BACKBONE_IP, REGISTRY_PORT),
            "IceGrid.Registry.Server.Endpoints": "tcp -h %s" % BACKBONE_IP,
            "IceGrid.Registry.Internal.Endpoints": "tcp -h %s" % BACKBONE_IP,
            "IceGrid.Registry.LMDB.Path": reg_data,
            "IceGrid.Registry.LMDB.MapSize": "16",
            "IceGrid.Registry.PermissionsVerifier": "IceGrid/NullPermissionsVerifier",
            "IceGrid.Registry.AdminPermissionsVerifier": "IceGrid/NullPermissionsVerifier",
            "IceGrid.Registry.Discovery.Enabled": "0",
            "IceGrid.Registry.Trace.Node": "1",  # "node `nodeK' up": --kill-what registry reads it
            "Ice.Warn.Connections": "0",
        })
        self.registry_cmd = [ICEGRIDREGISTRY, "--Ice.Config=" + cfg]  # kept: --kill-what registry starts it again
        self.registry = self.start("icegridregistry", "registry", bb, self.registry_cmd)
        self.wait_for(lambda: in_netns(bb, tcp_open, BACKBONE_IP, REGISTRY_PORT), 20,
                      "icegridregistry listening on %s:%d" % (BACKBONE_IP, REGISTRY_PORT))
        for k in range(1, REPLICAS + 1):
            data, out = os.path.join(self.tmp, "node%d" % k), os.path.join(self.logdir, "node%d-servers" % k)
            os.makedirs(data)
            os.makedirs(out, exist_ok=True)
            ncfg = self.write_config("node%d.cfg" % k, {
                "Ice.Default.Locator": locator_proxy(),
                "IceGrid.Node.Name": "node%d" % k,
                "IceGrid.Node.Endpoints": "tcp -h %s" % replica_ip(k),
                "IceGrid.Node.Data": data,
                "IceGrid.Node.Output": out,
                # Run as root (this script must), a server without `user` would run as nobody, who
                # cannot read the run's directory: the descriptor names root, which this allows.
                "IceGrid.Node.AllowRunningServersAsRoot": "1",
                "IceGrid.Node.Trace.Server": "1",
                "IceGrid.Node.Trace.Replica": "1",  # its sessions with the registry, for the record
                "Ice.Warn.Connections": "0",
            })
            self.node_cmds[k] = [ICEGRIDNODE, "--Ice.Config=" + ncfg]  # kept: --kill-what node starts it again
            self.nodes.append(self.start("icegridnode-%d" % k, "backbone", self.ns("bb%d" % k), self.node_cmds[k]))
            self.replica_logs[k] = LogWatch([os.path.join(out, "%s%d.err" % (INSTANCE, k)),
                                             os.path.join(out, "%s%d.out" % (INSTANCE, k))])
        xml = os.path.join(self.tmp, "backbone.xml")
        with open(xml, "w") as f:
            f.write(self.backbone_xml())

        def deployed():
            r = subprocess.run(["ip", "netns", "exec", bb, ICEGRIDADMIN, "--Ice.Default.Locator=" + locator_proxy(),
                                "-u", "perf", "-p", "perf", "-e", "application add '%s'" % xml],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
            if r.returncode != 0:
                self.deploy_error = r.stdout.strip()
            return r.returncode == 0
        self.wait_for(deployed, 20, "icegridadmin application add (%s)" % getattr(self, "deploy_error", ""), interval=1.0)
        for w in self.replica_logs.values():
            w.start()
        # Every replica up, then one master and the others reporting for duty (the first election
        # needs all of them: IceStorm's start-up rule).
        for k in range(1, REPLICAS + 1):
            self.wait_for(lambda k=k: in_netns(self.ns("bb%d" % k), tcp_open, replica_ip(k), TM_PORT), 30,
                          "IceStorm replica %d listening on %s:%d" % (k, replica_ip(k), TM_PORT))

        def formed():
            return all(self.replica_logs[k].find(DUTY) for k in range(1, REPLICAS + 1))
        self.wait_for(formed, 60, "the IceStorm replicas electing a master (%s in their logs)" % DUTY.pattern)
        master = self.master()
        self.result["backbone"] = {"kind": "replicated", "replicas": REPLICAS, "election_timeouts_s": self.a.election_timeout,
                                   "formed_s": round(time.monotonic() - t0, 2), "master": master,
                                   "replica_pids": {k: self.replica_pid(k) for k in range(1, REPLICAS + 1)}}
        log("backbone: IceGrid registry %s:%d, %d IceStorm replicas (%s), master replica %s, formed in %.1f s"
            % (BACKBONE_IP, REGISTRY_PORT, REPLICAS, ", ".join(replica_ip(k) for k in range(1, REPLICAS + 1)),
               master, time.monotonic() - t0))

    def icegridadmin(self, command, timeout=30):
        """Runs one icegridadmin command against the run's registry; Fail if it fails."""
        r = subprocess.run(["ip", "netns", "exec", self.ns("bb"), ICEGRIDADMIN, "--Ice.Default.Locator=" + locator_proxy(),
                            "-u", "perf", "-p", "perf", "-e", command],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        if r.returncode != 0:
            raise Fail("icegridadmin %s: %s" % (command, r.stdout.strip()))
        return r.stdout

    def replica_pid(self, k):
        """The PID of replica k's icebox: the child of IceGrid node k (None while there is none);
        with --backbone federated, member k's moraine-topics while it runs."""
        if self.a.backbone == "federated":
            m = self.members.get(k)
            return m.pid if m and m.alive() else None
        node = self.nodes[k - 1]
        kids = []
        try:
            for tid in os.listdir("/proc/%d/task" % node.pid):
                with open("/proc/%d/task/%s/children" % (node.pid, tid)) as f:
                    kids += [int(x) for x in f.read().split()]
        except OSError:
            return None
        for pid in kids:
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if b"icebox" in f.read():
                        return pid
            except OSError:
                pass
        return None

    def master(self, after=None):
        """The replica whose last election trace (since `after`) says it became the coordinator."""
        best = None
        for k, w in self.replica_logs.items():
            for t, line in w.lines(after):
                if DUTY.search(line) and "as coordinator" in line and (best is None or t > best[0]):
                    best = (t, k)
        return best[1] if best else None

    def publisher_replica(self):
        """The replica the publisher's last `connected to` line names (None if unknown)."""
        try:
            with open(self.publisher.log_path, errors="replace") as f:
                text = f.read()
        except OSError:
            return None
        ms = re.findall(r"connected to tcp -h (\S+) -p", text)
        for k in range(1, REPLICAS + 1):
            if ms and ms[-1] == replica_ip(k):
                return k
        return None

    def router_yaml(self, i):
        import yaml  # python3-yaml
        with open(os.path.join(REPO, "conf", "moraine.yaml")) as f:
            cfg = yaml.safe_load(f)
        addr = self.router_ip(i)
        tm_port, pub_port = self.router_port(i, TM_PORT), self.router_port(i, PUB_PORT)
        cfg["threads"] = self.a.threads
        cfg["metrics"] = {"listen": "127.0.0.1:%d" % self.router_port(i, METRICS_PORT)}
        cfg["client"]["endpoints"] = "tcp -h %s -p %d" % (addr, CLIENT_PORT)
        if self.a.front == "reuseport":
            cfg["client"]["reuse_port"] = True
        if self.a.tcp_backlog:
            cfg["limits"]["tcp_backlog"] = self.a.tcp_backlog
        # The router's own address (docs/deployment.md): a back end calling a client back must
        # reach the router holding its session.
        cfg["server"]["endpoints"] = "tcp -h %s -p %d" % (addr, self.router_port(i, SERVER_PORT))
        if self.a.auth == "crypt":
            cfg["auth"]["mode"] = "crypt_file"
            cfg["auth"]["crypt_passwords"] = self.passwords
        else:  # Glacier2's NullPermissionsVerifier: set-up without a SHA-512 crypt per session
            cfg["auth"] = {"mode": "allow_all"}
        t = cfg["topics"]
        t["enabled"] = True
        t["instance_name"] = INSTANCE
        t["topic_manager_endpoints"] = "tcp -h 127.0.0.1 -p %d:tcp -h %s -p %d" % (tm_port, addr, tm_port)
        # What the clients write; with --front reuseport no router binds it, and each reaches its own.
        t["topic_manager_published_endpoints"] = "tcp -h 127.0.0.1 -p %d" % TM_PORT
        t["publish_endpoints"] = "tcp -h %s -p %d" % (addr, pub_port)
        if self.a.backbone == "replicated":
            # The replicated IceStorm hands out indirect proxies (its replica groups): the router
            # resolves them through the IceGrid registry, as an Ice client with Ice.Default.Locator.
            cfg["locator"] = {"proxy": locator_proxy()}
        t["upstream"] = {
            "federated": self.a.backbone == "federated",  # a link from every member
            "topic_manager": self.upstream_manager(),
            "topics": [TOPIC],
            "link_category": "edge%d" % i,  # the identity the backbone links to: one per router
            "endpoints": "tcp -h %s -p %d" % (addr, tm_port),
            "cost": 0,
            "check_interval_ms": 1000,
        }
        path = os.path.join(self.tmp, "router-%d.yaml" % i)
        with open(path, "w") as f:
            f.write("# written by perf/cluster.py from conf/moraine.yaml: router %d of %d, namespace %s\n"
                    % (i, self.a.routers, self.ns(self.router_role(i))))
            yaml.safe_dump(clean(cfg), f, sort_keys=False, default_flow_style=False)
        return path

    def start_routers(self):
        self.passwords = os.path.join(self.tmp, "passwords")
        shutil.copy(os.path.join(REPO, "conf", "passwords"), self.passwords)
        for i in range(1, self.a.routers + 1):
            p = self.start("router-%d" % i, "router", self.ns(self.router_role(i)),
                           [self.bins["moraine-router"], "--config", self.router_yaml(i)])
            self.routers.append(p)
        for i, p in enumerate(self.routers, 1):
            def ready(i=i, p=p):
                if not p.alive():
                    text = "\n".join(p.tail(10))
                    hint = ""
                    if "upstream" in text:
                        hint = "\nthis moraine-router does not accept topics.upstream: build a newer one (--bin)"
                    raise Fail("router %d exited (status %s) at start:\n%s%s" % (i, p.popen.returncode, text, hint))
                return (self.router_metrics(i, timeout=1.0) is not None
                        and all(in_netns(self.ns(self.router_role(i)), tcp_open, self.router_ip(i), port)
                                for port in (CLIENT_PORT, self.router_port(i, TM_PORT))))
            self.wait_for(ready, 20, "router %d: metrics and client endpoint" % i)

    def wait_linked(self):
        """Each router links its topic from the backbone itself (topics.upstream): waits until every
        router's moraine_upstream_links gauge says so."""
        t0 = time.monotonic()

        def linked():
            ms = self.scrape_routers()
            if any(m and "moraine_upstream_links" not in m for m in ms.values()):
                raise Fail("the routers export no moraine_upstream_links: this moraine-router has no topics.upstream")
            return all(m and m.get("moraine_upstream_links", 0) >= self.links_expected() for m in ms.values())
        self.wait_for(linked, 30, "every router's upstream link to the backbone (moraine_upstream_links)")
        self.result["link_s"] = round(time.monotonic() - t0, 2)
        log("topic '%s' linked from the backbone by every router (topics.upstream) after %.1f s"
            % (TOPIC, time.monotonic() - t0))

    def links_expected(self):
        """moraine_upstream_links of a router whose links are all in place: one, or one per member."""
        return REPLICAS if self.a.backbone == "federated" else 1

    def upstream_manager(self):
        """The backbone's TopicManager as each router's topics.upstream names it."""
        if self.a.backbone == "replicated":
            # The replica group's well-known object, found through the locator (findObjectById,
            # then the group's endpoints): every replica registered, tried in turn.
            return self.a.upstream_manager or "%s/TopicManager" % INSTANCE
        if self.a.backbone == "federated":
            return "%s/TopicManager:%s" % (INSTANCE, self.member_endpoints(TM_PORT))
        return "%s/TopicManager:tcp -h %s -p %d" % (INSTANCE, BACKBONE_IP, TM_PORT)

    def start_publisher(self):
        if self.a.backbone == "replicated":
            # An IceStorm client of IceGrid: the TopicManager and the publisher object through the
            # locator, twoway, sending a tick again to another replica if its replica dies.
            where = ["--locator", "tcp -h %s -p %d" % (BACKBONE_IP, REGISTRY_PORT), "--twoway"]
        elif self.a.backbone == "federated":
            # Any member: the publisher object's proxy names every member's Publish endpoint, and a
            # tick whose member died is sent again to another.
            where = ["--topic-manager", self.member_endpoints(TM_PORT), "--twoway"]
        else:
            where = ["--topic-manager", "tcp -h %s -p %d" % (BACKBONE_IP, TM_PORT)]
        self.publisher = self.start("publisher", "publisher", self.ns("bb"),
                                    [self.bins["clock-publisher"]] + where + ["--topic", TOPIC, "--rate", str(self.a.rate)])

    def start_haproxy(self, total):
        n = math.ceil(total / SESSIONS_PER_HAPROXY) + 1
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        need = 2 * HAPROXY_MAXCONN + self.a.routers + 100  # 2 per connection, checks, listeners, pipes
        if need > hard:
            raise Fail("HAProxy maxconn %d needs about %d descriptors, the hard limit is %d" % (HAPROXY_MAXCONN, need, hard))
        for k in range(1, n + 1):
            sock = os.path.join(self.tmp, "haproxy-%d.sock" % k)
            cfg = os.path.join(self.tmp, "haproxy-%d.cfg" % k)
            with open(cfg, "w") as f:
                f.write(haproxy_config(sock, self.a.routers, n))
            if k == 1:
                r = subprocess.run(["ip", "netns", "exec", self.ns("lb"), HAPROXY, "-c", "-f", cfg],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
                if r.returncode != 0:
                    raise Fail("haproxy -c -f %s:\n%s" % (cfg, r.stdout.strip()))
                warnings = [l for l in r.stdout.splitlines() if "WARNING" in l or "ALERT" in l]
                if warnings:
                    log("haproxy -c: " + "; ".join(warnings))
            p = self.start("haproxy-%d" % k, "haproxy", self.ns("lb"), [HAPROXY, "-db", "-f", cfg])
            self.haproxies.append((p, sock))
        infos = []
        for p, sock in self.haproxies:
            def up(sock=sock):
                try:
                    return haproxy_info(sock)
                except OSError:
                    return None
            info = self.wait_for(up, 15, "%s stats socket" % p.name)
            ulimit, maxsock, maxconn = int(info.get("Ulimit-n", 0)), int(info.get("Maxsock", 0)), int(info.get("Maxconn", 0))
            if ulimit > hard or maxsock > hard or maxconn < HAPROXY_MAXCONN:
                raise Fail("%s: Ulimit-n %d, Maxsock %d, Maxconn %d against the hard limit %d and maxconn %d"
                           % (p.name, ulimit, maxsock, maxconn, hard, HAPROXY_MAXCONN))
            infos.append({"pid": p.pid, "ulimit_n": ulimit, "maxsock": maxsock, "maxconn": maxconn,
                          "version": info.get("Version")})
        self.wait_for(lambda: all(st == "UP" for _, sock in self.haproxies
                                  for st, _ in haproxy_servers(sock).values()), 15, "HAProxy: every router UP")
        self.result["haproxy"] = {"processes": infos, "descriptor_hard_limit": hard}
        log("HAProxy: %d processes on %s:%d (maxconn %d each: Ulimit-n %s, Maxsock %s; hard limit %d)"
            % (n, LB_IP, CLIENT_PORT, HAPROXY_MAXCONN, "/".join(str(i["ulimit_n"]) for i in infos),
               "/".join(str(i["maxsock"]) for i in infos), hard))

    def haproxy_per_server(self):
        out = {}
        for _, sock in self.haproxies:
            try:
                for name, (status, scur) in haproxy_servers(sock).items():
                    st, n = out.get(name, (status, 0))
                    out[name] = (status if status != "UP" else st, n + scur)
            except OSError:
                pass
        return out

    def router_proxy_endpoints(self):
        """The endpoints of the subscribers' router proxy: HAProxy's, the shared one (--front
        reuseport), or (--front none) every router's."""
        if self.a.front == "haproxy":
            return "tcp -h %s -p %d" % (LB_IP, CLIENT_PORT)
        if self.a.front == "reuseport":
            return "tcp -h %s -p %d" % (self.router_ip(1), CLIENT_PORT)
        return ":".join("tcp -h 198.18.1.%d -p %d" % (i, CLIENT_PORT) for i in range(1, self.a.routers + 1))

    def start_subscribers(self, total, duration):
        p = math.ceil(total / self.a.sessions_per_subscriber)
        counts = [total // p + (1 if j < total % p else 0) for j in range(p)]
        for j, n in enumerate(counts, 1):
            cmd = [self.bins["clock-subscriber"], "--router", self.router_proxy_endpoints(),
                   "--user", "demo", "--password", "demo", "--sessions", str(n), "--duration", str(duration),
                   "--reconnect"]
            s = Subscriber(self, j, self.ns("c%d" % j), n, cmd)
            self.procs.append(s.proc)
            self.subscribers.append(s)

    def tcp_counters(self):
        """TcpExt counters (listen queue overflows, SYN retransmissions...) of every node namespace
        but the backbone's, counted since it was made: what would slow set-up and failover."""
        tcp = {}
        roles = (["lb"] * (self.a.front == "haproxy")
                 + sorted({self.router_role(i) for i in range(1, len(self.routers) + 1)})
                 + ["c%d" % j for j in range(1, len(self.subscribers) + 1)])
        for role in roles:
            try:
                tcp[role] = in_netns(self.ns(role), tcp_ext_counters, timeout=5)
            except (OSError, Fail) as e:
                tcp[role] = {"error": str(e)}
        return tcp

    def live_line(self):
        up = sum((s.last()[1] or {}).get("up", 0) for s in self.subscribers)
        ticks = sum((s.last()[1] or {}).get("ticks", 0) for s in self.subscribers)
        lost = sum((s.last()[1] or {}).get("lost", 0) for s in self.subscribers)
        rec = sum((s.last()[1] or {}).get("reconnecting") or 0 for s in self.subscribers)
        return "subscribers: %d/%d sessions up, ticks/s %d, lost %d, reconnecting %d" % (
            up, self.a.sessions, ticks, lost, rec)

    def cpu_subjects(self):
        """(name, role, pid) of every process whose CPU is counted: the children started here and,
        with --backbone replicated, the IceStorm replicas their IceGrid nodes started."""
        subjects = [(p.name, p.role, p.pid) for p in self.procs]
        for k in range(1, len(self.nodes) + 1):  # (a federated backbone's members are among the procs)
            pid = self.replica_pid(k)
            if pid:
                subjects.append(("icestorm-%d" % k, "backbone", pid))
        return subjects

    def cpu_snapshot(self):
        """{name: (utime + stime, schedstat)} in seconds."""
        return {name: (cpu_seconds(pid), sched_seconds(pid)) for name, _, pid in self.cpu_subjects()}

    # -- the measurement ------------------------------------------------------------------

    def measure(self):
        a = self.a
        total = a.sessions
        res = self.result
        settle_bound = a.settle_max
        failover_bound = ((a.failover_timeout + a.tail + 2) if a.failover else 0) + \
            ((a.backbone_tail + 5) if a.kill_backbone else 0)
        if self.subscriber_has_result:
            sub_duration = settle_bound + a.duration + failover_bound + 120  # stopped by SIGINT before that
        else:
            # No SIGINT handling in this clock-subscriber: it runs for exactly the time the phases
            # need (settle taken at its minimum) and its summary line is read when it ends.
            sub_duration = a.settle_min + a.duration + failover_bound + 5
        res["config"]["subscriber_duration_s"] = sub_duration

        t_start = time.monotonic()
        self.start_subscribers(total, sub_duration)
        log("%d clock-subscriber process(es) started: %s sessions through %s"
            % (len(self.subscribers), " + ".join(str(s.sessions) for s in self.subscribers),
               front_text(a)))
        # The subscribers notice "all up" at their 1 s status tick; the routers' gauges, read every
        # ~0.5 s meanwhile, say when every session was subscribed with a finer grain.
        seen = {"subscribed": None, "polled": 0.0}

        def all_up():
            now = time.monotonic()
            if seen["subscribed"] is None and now - seen["polled"] >= 0.5:
                seen["polled"] = now
                ms = self.scrape_routers()
                if all(ms.values()) and sum(m.get("moraine_subscribers", 0) for m in ms.values()) >= total:
                    seen["subscribed"] = now
            return all(s.all_up for s in self.subscribers)
        self.wait_for(all_up, a.setup_timeout, "every subscriber's sessions up", progress=self.live_line)
        t_up = max(s.all_up[0] for s in self.subscribers)
        setup = {"seconds": round(t_up - t_start, 2),
                 "routers_all_subscribed_s": round(seen["subscribed"] - t_start, 2) if seen["subscribed"] else None,
                 "per_subscriber_s": [s.all_up[2] for s in self.subscribers],
                 "sessions_up": [s.all_up[1] for s in self.subscribers]}
        res["setup"] = setup
        ms = self.scrape_routers()
        per_router = {i: int(m.get("moraine_sessions", 0)) if m else None for i, m in ms.items()}
        lb = self.haproxy_per_server()
        per_haproxy = []
        for hp, sock in self.haproxies:
            try:
                per_haproxy.append(int(haproxy_info(sock).get("CurrConns", 0)))
            except (OSError, ValueError):
                per_haproxy.append(None)
        last = [s.last()[1] for s in self.subscribers]
        res["tcp_counters_all_up"] = self.tcp_counters()
        res["sessions"] = {"expected": total, "up": sum(st["up"] for st in last),
                           "failed": sum(st["failed"] for st in last),
                           "held_by_routers": sum(v or 0 for v in per_router.values()),
                           "per_router": {"router-%d" % i: v for i, v in per_router.items()},
                           "haproxy_per_server": {k: v[1] for k, v in lb.items()},
                           "haproxy_per_process": per_haproxy}
        log("sessions up in %.1f s (the subscribers say %s s; the routers had every subscriber after %s s): "
            "routers hold %d (%s)"
            % (setup["seconds"], "/".join("%.1f" % x for x in setup["per_subscriber_s"]),
               fmt(setup["routers_all_subscribed_s"], "%.1f"),
               res["sessions"]["held_by_routers"], ", ".join("r%d %s" % kv for kv in per_router.items())))

        # Settle: every subscriber gets one tick per session per second, 3 status lines in a row.
        t_settle = time.monotonic()

        def settled():
            if time.monotonic() - t_settle < a.settle_min:
                return False
            for s in self.subscribers:
                lines = s.since(t_settle)
                want = 3 * s.sessions * a.rate
                if len(lines) < 3 or abs(sum(st["ticks"] for st in lines[-3:]) - want) > 0.05 * want:
                    return False
            return True
        try:
            if not self.subscriber_has_result:
                time.sleep(a.settle_min)  # the subscribers' run is sized for exactly this
            else:
                self.wait_for(settled, settle_bound, "settle", progress=self.live_line)
            res["settle_s"] = round(time.monotonic() - t_settle, 1)
        except Fail as e:
            if "not within" not in str(e):
                raise
            res["settle_s"] = None
            log("warning: the ticks did not settle at --rate per session per second within %d s; measuring anyway"
                % settle_bound)

        # The steady window.
        ms0 = self.scrape_routers()
        sub0 = [s.last()[1] for s in self.subscribers]
        t0, cpu0 = time.monotonic(), self.cpu_snapshot()
        log("steady window: %d s" % a.duration)
        end = t0 + a.duration
        next_progress = t0 + 5
        while time.monotonic() < end:
            self.check_alive()
            time.sleep(min(0.2, max(0.0, end - time.monotonic())))
            if time.monotonic() >= next_progress:
                log(self.live_line())
                next_progress += 5
        t1, cpu1 = time.monotonic(), self.cpu_snapshot()
        sub1 = [s.last()[1] for s in self.subscribers]
        ms1 = self.scrape_routers()
        rss = {p.name: rss_kib(p.pid) for p in self.routers}
        wall = t1 - t0
        res["window"] = self.window_figures(wall, cpu0, cpu1, sub0, sub1, ms0, ms1, rss, t0, t1, per_router)

        if a.failover:
            res["failover"] = self.failover(total)
        if a.kill_backbone:
            res["backbone_kill"] = self.backbone_kill()

        self.stop_subscribers()
        finals = [s.final() for s in self.subscribers]
        res["subscribers"] = [{"name": s.name, "sessions": s.sessions, "final": f, "errors": s.errors}
                              for s, f in zip(self.subscribers, finals)]
        tcp_end = self.tcp_counters()
        # In the JSON: the counters of TCP_COUNTERS, and every other TcpExt counter that changed
        # between all up and the end (a diagnosis of set-up and failover at a glance).
        res["tcp_counters"] = {ns: {k: n for k, n in v.items() if k in TCP_COUNTERS} for ns, v in tcp_end.items()}
        res["tcp_counters_changed"] = {
            ns: {k: [res["tcp_counters_all_up"].get(ns, {}).get(k), n] for k, n in v.items()
                 if n != res["tcp_counters_all_up"].get(ns, {}).get(k)} for ns, v in tcp_end.items()}
        res["tcp_counters_all_up"] = {ns: {k: n for k, n in v.items() if k in TCP_COUNTERS}
                                      for ns, v in res["tcp_counters_all_up"].items()}
        ms_end = self.scrape_routers()
        res["routers_at_end"] = {"router-%d" % i: {k: m.get(k) for k in (
            "moraine_sessions_created_total", "moraine_events_delivered_total", "moraine_events_dropped_total")}
            if m else None for i, m in ms_end.items()}

    def window_figures(self, wall, cpu0, cpu1, sub0, sub1, ms0, ms1, rss, t0, t1, per_router):
        a = self.a
        cpu = {}
        for name, role, pid in self.cpu_subjects():
            (c0, n0), (c1, n1) = cpu0.get(name, (None, None)), cpu1.get(name, (None, None))
            cpu[name] = {"role": role, "pid": pid,
                         "cpu_s": None if c0 is None or c1 is None else round(c1 - c0, 3),
                         "sched_s": None if n0 is None or n1 is None else round(n1 - n0, 4)}
            if cpu[name]["cpu_s"] is not None:
                cpu[name]["cpu_percent"] = round(100.0 * (c1 - c0) / wall, 1)
        events = sum(b["ticks_total"] - a_["ticks_total"] for a_, b in zip(sub0, sub1))
        lost = sum(b["lost"] - a_["lost"] for a_, b in zip(sub0, sub1))
        router_events = int(sum((ms1[i] or {}).get("moraine_events_delivered_total", 0)
                            - (ms0[i] or {}).get("moraine_events_delivered_total", 0) for i in ms1 if ms0.get(i)))
        router_dropped = int(sum((ms1[i] or {}).get("moraine_events_dropped_total", 0)
                                 - (ms0[i] or {}).get("moraine_events_dropped_total", 0) for i in ms1 if ms0.get(i)))

        def group(roles, key="cpu_s"):
            vals = [v[key] for v in cpu.values() if v["role"] in roles]
            return None if not vals or any(v is None for v in vals) else sum(vals)

        # The denominator of CPU per event: the routers' own count, read right after the CPU at both
        # ends, so it covers the same instants (the window is a whole number of seconds: a tick
        # burst cut at its start is cut the same way at its end). The subscribers' count comes from
        # their status lines, whose boundaries jitter inside a burst (up to one burst either end).
        all_scraped = all(ms0.get(i) and ms1.get(i) for i in ms1) and len(ms1) == len(self.routers)
        denominator = router_events if all_scraped and router_events > 0 else events

        def per_event(c):
            return None if c is None or not denominator else round(1e6 * c / denominator, 2)
        groups = {"routers": group({"router"}), "haproxy": group({"haproxy"}), "backbone (icebox)": group({"backbone"}),
                  "infrastructure": group({"router", "haproxy", "backbone", "registry"}),
                  "load generators": group({"subscriber", "publisher"})}
        roles = {"routers": {"router"}, "haproxy": {"haproxy"}, "backbone (icebox)": {"backbone"},
                 "infrastructure": {"router", "haproxy", "backbone", "registry"}, "load generators": {"subscriber", "publisher"}}
        sched = {k: group(r, "sched_s") for k, r in roles.items()}
        subs = []
        for s, a_, b in zip(self.subscribers, sub0, sub1):
            lines = [st for st in s.since(t0, t1 + 0.5) if st["ticks"]]
            p50s, p99s = [st["p50"] for st in lines], [st["p99"] for st in lines]
            subs.append({"name": s.name, "sessions": s.sessions, "events": b["ticks_total"] - a_["ticks_total"],
                         "lost": b["lost"] - a_["lost"],
                         "p50_ms": round(statistics.median(p50s), 2) if p50s else None,
                         "p99_ms": round(statistics.median(p99s), 2) if p99s else None,
                         "p99_worst_second_ms": max(p99s) if p99s else None})
        routers = []
        for i, p in enumerate(self.routers, 1):
            n = per_router.get(i) or 0
            r, idle = rss.get(p.name), self.rss_idle.get(p.name)
            delivered = int((ms1.get(i) or {}).get("moraine_events_delivered_total", 0)
                            - (ms0.get(i) or {}).get("moraine_events_delivered_total", 0))
            c = cpu[p.name]["cpu_s"]
            routers.append({"name": p.name, "sessions": n, "rss_kib": r, "rss_idle_kib": idle,
                            "rss_bytes_per_session": round((r - idle) * 1024.0 / n) if n and r and idle else None,
                            "events_delivered": delivered, "cpu_s": c, "cpu_percent": cpu[p.name].get("cpu_percent"),
                            "cpu_us_per_event": round(1e6 * c / delivered, 2) if c is not None and delivered else None})
        return {"seconds": round(wall, 2), "events": events, "events_per_s": round(events / wall, 1),
                "expected_events": round(a.sessions * wall * a.rate), "lost": lost,
                "router_events_delivered": router_events, "router_events_dropped": router_dropped,
                "cpu_per_event_denominator": "routers" if denominator == router_events else "subscribers",
                "cpu": cpu, "cpu_s": {k: (round(v, 3) if v is not None else None) for k, v in groups.items()},
                "cpu_us_per_event": {k: per_event(v) for k, v in groups.items()},
                "sched_us_per_event": {k: per_event(v) for k, v in sched.items()},
                "subscribers": subs,
                "p50_ms_worst": max((x["p50_ms"] for x in subs if x["p50_ms"] is not None), default=None),
                "p99_ms_worst": max((x["p99_ms"] for x in subs if x["p99_ms"] is not None), default=None),
                "p99_worst_second_ms": max((x["p99_worst_second_ms"] for x in subs
                                            if x["p99_worst_second_ms"] is not None), default=None),
                "routers": routers}

    def gauge_sample(self):
        """One point of the failover timeline: when (time.monotonic(), made relative to the kill
        at the end) and each router's sessions and subscribers (/metrics; None for a router
        that did not answer)."""
        ms = self.scrape_routers()
        # CPU seconds so far of each router and subscriber process: which of them is saturated
        # while the sessions come back (the difference between two samples over their interval).
        cpu = {name: cpu_seconds(pid) for name, role, pid in self.cpu_subjects() if role in ("router", "subscriber")}
        return {"t": time.monotonic(), "cpu_s": cpu,
                "sessions": {"router-%d" % i: int(m.get("moraine_sessions", 0)) if m else None for i, m in ms.items()},
                "subscribers": {"router-%d" % i: int(m.get("moraine_subscribers", 0)) if m else None
                                for i, m in ms.items()}}

    def subscriber_timeline(self, t_from, t0):
        """The subscribers' status lines since t_from, summed per second of arrival (seconds since
        t0, rounded down): ticks received, sessions up, reconnecting, restored so far."""
        per = {}
        for s in self.subscribers:
            with s.lock:
                lines = [(t, st) for t, st in s.statuses if t >= t_from]
            for t, st in lines:
                k = math.floor(t - t0)
                acc = per.setdefault(k, {"t": k, "ticks": 0, "up": 0, "reconnecting": 0, "restored": 0})
                acc["ticks"] += st["ticks"]
                acc["up"] += st["up"]
                acc["reconnecting"] += st["reconnecting"] or 0
                acc["restored"] += st["restored"] or 0
        return [per[k] for k in sorted(per)]

    def failover(self, total):
        a = self.a
        victim = self.routers[0]
        # The timeline starts 2 s before the kill: the steady state it is compared with.
        t_before = time.monotonic()
        gauges = []
        while time.monotonic() - t_before < 2.0:
            gauges.append(self.gauge_sample())
            time.sleep(0.2)
        held = gauges[-1]["sessions"].get("router-1")  # the last sample before the kill
        base = [s.last()[1] for s in self.subscribers]
        if held is None:
            raise Fail("failover: router 1's metrics unreadable just before the kill")
        log("failover: kill -9 router 1 (pid %d), holding %d sessions" % (victim.pid, held))
        victim.killed = True
        t_kill = time.monotonic()
        os.kill(victim.pid, signal.SIGKILL)
        victim.popen.wait(10)
        fo = {"router": 1, "pid": victim.pid, "sessions_on_killed_router": held}
        t_lb_down = t_routers = t_subscribed = t_done = None
        max_reconnecting = 0
        end = t_kill + a.failover_timeout
        next_progress = t_kill + 5
        while time.monotonic() < end:
            now = time.monotonic()
            if t_lb_down is None and a.front == "haproxy":
                servers = self.haproxy_per_server()
                if servers.get("r1", ("UP",))[0] != "UP":
                    t_lb_down = now
            g = self.gauge_sample()  # every 0.2 s: the timeline, and when the survivors hold all
            gauges.append(g)
            if None not in g["sessions"].values():
                if t_routers is None and sum(g["sessions"].values()) >= total:
                    t_routers = now
                if t_subscribed is None and sum(g["subscribers"].values()) >= total:
                    t_subscribed = now
            lines = [s.since(t_kill) for s in self.subscribers]
            reconnecting = [ls[-1]["reconnecting"] or 0 for ls in lines if ls]
            max_reconnecting = max(max_reconnecting, sum(reconnecting))
            restored = sum((ls[-1]["restored"] or 0) - (b["restored"] or 0) for ls, b in zip(lines, base) if ls)
            if all(lines) and sum(reconnecting) == 0 and restored >= held:
                t_done = now
                break
            self.check_alive()
            if now >= next_progress:
                log("failover: %.0f s after the kill: reconnecting %d, restored %d of %d%s"
                    % (now - t_kill, sum(reconnecting), restored, held,
                       "" if a.front != "haproxy" else "; HAProxy r1 DOWN" if t_lb_down else "; HAProxy r1 still UP"))
                next_progress += 5
            time.sleep(0.2)
        fo["haproxy_marked_down_s"] = round(t_lb_down - t_kill, 2) if t_lb_down else None
        fo["routers_hold_all_sessions_s"] = round(t_routers - t_kill, 2) if t_routers else None
        fo["routers_hold_all_subscribers_s"] = round(t_subscribed - t_kill, 2) if t_subscribed else None
        fo["restored_s"] = round(t_done - t_kill, 2) if t_done else None
        fo["max_reconnecting_seen"] = max_reconnecting
        last = [s.last()[1] for s in self.subscribers]
        fo["restored"] = sum((l["restored"] or 0) - (b["restored"] or 0) for l, b in zip(last, base))
        fo["reconnecting"] = sum(l["reconnecting"] or 0 for l in last)
        if t_done is None:
            log("failover: NOT restored within %d s: reconnecting %d, restored %d of %d"
                % (a.failover_timeout, fo["reconnecting"], fo["restored"], held))
        else:
            log("failover: the subscribers report every session restored %.1f s after the kill (their status "
                "lines are 1 s apart); the surviving routers held every session after %s s and every subscriber "
                "after %s s%s"
                % (fo["restored_s"], fo["routers_hold_all_sessions_s"], fo["routers_hold_all_subscribers_s"],
                   "; HAProxy marked r1 DOWN after %s s" % fo["haproxy_marked_down_s"] if a.front == "haproxy" else ""))
        # The tail: the restored sessions must get ticks again.
        t_tail = time.monotonic()
        log("failover: %d s more of ticks" % a.tail)
        while time.monotonic() - t_tail < a.tail:
            self.check_alive()
            gauges.append(self.gauge_sample())
            time.sleep(0.2)
        for g in gauges:  # seconds relative to the kill
            g["t"] = round(g["t"] - t_kill, 3)
        fo["timeline"] = {"routers": gauges, "subscribers": self.subscriber_timeline(t_before, t_kill)}
        tail_lines = [s.since(t_tail) for s in self.subscribers]
        fo["tail_ticks_per_s"] = [ls[-1]["ticks"] if ls else None for ls in tail_lines]
        fo["tail_full_seconds"] = all(ls and any(st["ticks"] >= s.sessions * min(1.0, self.a.rate) for st in ls)
                                      for ls, s in zip(tail_lines, self.subscribers))
        last = [s.last()[1] for s in self.subscribers]
        fo["lost_undisturbed"] = sum(l["lost"] - b["lost"] for l, b in zip(last, base))
        if all(l["lost_reconnected"] is not None for l in last):
            fo["lost_reconnected"] = sum(l["lost_reconnected"] - (b["lost_reconnected"] or 0) for l, b in zip(last, base))
        ms = self.scrape_routers()
        fo["sessions_per_router_after"] = {"router-%d" % i: int(m.get("moraine_sessions", 0)) if m else None
                                           for i, m in ms.items()}
        return fo

    def timeline_sample(self):
        """One point of the backbone-kill timeline: each router's delivered events (counter) and
        sessions, from /metrics."""
        ms = self.scrape_routers()
        return {"t": time.monotonic(),
                "delivered": {"router-%d" % i: int(m.get("moraine_events_delivered_total", 0)) if m else None
                              for i, m in ms.items()},
                "sessions": {"router-%d" % i: int(m.get("moraine_sessions", 0)) if m else None for i, m in ms.items()}}

    def victim_replica(self, pub_k, master):
        """The replica --kill-replica names: the publisher's, the master, a slave, or k."""
        choice = self.a.kill_replica
        if choice == "publisher":
            victim = pub_k
        elif choice == "master":
            victim = master
        elif choice == "slave":
            victim = next((k for k in range(1, REPLICAS + 1) if k not in (pub_k, master)), None) or \
                next(k for k in range(1, REPLICAS + 1) if k != master)
        else:
            victim = int(choice)
        if victim is None or not 1 <= victim <= REPLICAS:
            raise Fail("--kill-replica %s: cannot tell which replica (publisher's %s, master %s)" % (choice, pub_k, master))
        return victim

    def strike_replica(self, victim, roles, pub_k, master):
        """kill -9 of replica `victim`'s icebox (--kill-what replica) or of its IceGrid node and the
        icebox together (node; the node is started again after --hold-down s). Returns (kill time,
        the icebox's pid, the events seen, progress): progress() notes what has come back since and
        is true once the replica is in a full replica set again."""
        a = self.a
        pid = self.replica_pid(victim)
        if pid is None:
            raise Fail("replica %d: no icebox process under its IceGrid node" % victim)
        server = "%s%d" % (INSTANCE, victim)
        node_too = a.kill_what == "node"
        if a.hold_down and not node_too:
            # The replica's host "lost" for --hold-down s: its node may not start it again until
            # then (a disabled server keeps running; it only cannot be started).
            self.icegridadmin("server disable %s" % server)
        log("backbone kill: kill -9 %sIceStorm replica %d (%s; pid %d): the publisher talks to replica %s, the master "
            "is %s%s" % ("IceGrid node %d and its " % victim if node_too else "", victim, " and ".join(roles), pid, pub_k,
                         master, ("; the node starts again after %d s" if node_too else
                                  "; its node may start it again after %d s") % a.hold_down if a.hold_down else ""))
        t_kill = time.monotonic()
        if node_too:
            node = self.nodes[victim - 1]
            node.killed = True
            os.kill(node.pid, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
        ev = dict.fromkeys(KILL_EVENTS)
        ns, addr = self.ns("bb%d" % victim), replica_ip(victim)
        enabler = []

        def bring_back(now):
            """After --hold-down s: the replica's server enabled again, or its node started again."""
            if now - t_kill < a.hold_down:
                return
            if node_too and ev["node_started"] is None:
                self.nodes[victim - 1].popen.wait(5)
                self.nodes[victim - 1] = self.start("icegridnode-%d-again" % victim, "backbone", ns, self.node_cmds[victim])
                ev["node_started"] = now
            elif a.hold_down and not node_too and not enabler:
                def enable():
                    self.icegridadmin("server enable %s" % server)
                    ev["enabled"] = time.monotonic()
                enabler.append(threading.Thread(target=enable, daemon=True))
                enabler[0].start()

        def progress():
            now = time.monotonic()
            bring_back(now)
            if ev["restarted"] is None:
                p2 = self.replica_pid(victim)
                if p2 and p2 != pid:
                    ev["restarted"], ev["new_pid"] = now, p2
            if ev["restarted"] is not None and ev["listening"] is None and in_netns(ns, tcp_open, addr, TM_PORT, 0.2):
                ev["listening"] = now
            if ev["rejoined"] is None:
                f = self.replica_logs[victim].find(DUTY, t_kill)
                if f:
                    ev["rejoined"] = f[0]
            if ev["replica_set_full"] is None:
                ev["replica_set_full"] = self.replica_set_full_since(t_kill)
            return ev["replica_set_full"] is not None and ev["rejoined"] is not None
        return t_kill, pid, ev, progress

    def strike_member(self, victim, roles, pub_k):
        """kill -9 of federation member `victim`'s moraine-topics, started again after --hold-down s
        (as a supervisor would: in memory, it knows no topic and no link then). Returns (kill time,
        its pid, the events seen, progress): progress() is true once every router has linked its
        topic from the new process again (its trace: one `link to` per router)."""
        a = self.a
        old, ns = self.members[victim], self.ns("bb%d" % victim)
        log("backbone kill: kill -9 moraine-topics member %d (%s; pid %d): the publisher talks to member %s; "
            "started again after %d s" % (victim, " and ".join(roles), old.pid, pub_k, a.hold_down))
        t_kill = time.monotonic()
        old.killed = True
        os.kill(old.pid, signal.SIGKILL)
        old.popen.wait(5)
        ev = dict.fromkeys(KILL_EVENTS)

        def progress():
            now = time.monotonic()
            if ev["restarted"] is None and now - t_kill >= a.hold_down:
                self.members[victim] = self.start("moraine-topics-%d-again" % victim, "backbone", ns,
                                                  self.member_cmds[victim])
                ev["restarted"], ev["new_pid"] = now, self.members[victim].pid
            if ev["restarted"] is not None and ev["listening"] is None and \
                    in_netns(ns, tcp_open, replica_ip(victim), TM_PORT, 0.2):
                ev["listening"] = now
            if ev["listening"] is not None and ev["relinked"] is None and \
                    self.links_in_log(self.members[victim]) >= len(self.routers):
                ev["relinked"] = now
            return ev["relinked"] is not None
        return t_kill, old.pid, ev, progress

    def links_in_log(self, member):
        """How many links a federation member's log says it made (topics trace: one per router; the
        routers' later checks find LinkExists and trace nothing)."""
        try:
            with open(member.log_path, errors="replace") as f:
                return len(LINK_TRACE.findall(f.read()))
        except OSError:
            return 0

    def replica_set_full_since(self, t):
        """When a coordinator last said since `t` that it replicates to every replica, or None."""
        for w in self.replica_logs.values():
            for t_line, line in w.lines(t):
                m = COMMENCING.search(line)
                if m and int(m.group(1)) == int(m.group(2)) == REPLICAS:
                    return t_line
        return None

    def strike_registry(self):
        """kill -9 of the IceGrid registry, started again after --hold-down s with the same
        configuration and database (as a supervisor would). Returns (kill time, its pid, the events
        seen, progress): progress() is true once every node has registered with it again."""
        a = self.a
        bb, old = self.ns("bb"), self.registry
        log("backbone kill: kill -9 the IceGrid registry (pid %d); started again after %d s" % (old.pid, a.hold_down))
        t_kill = time.monotonic()
        old.killed = True
        os.kill(old.pid, signal.SIGKILL)
        old.popen.wait(5)
        ev = dict.fromkeys(KILL_EVENTS)
        def progress():
            now = time.monotonic()
            if ev["restarted"] is None and now - t_kill >= a.hold_down:
                self.registry = self.start("icegridregistry-again", "registry", bb, self.registry_cmd)
                ev["restarted"], ev["new_pid"] = now, self.registry.pid
            if ev["restarted"] is not None and ev["listening"] is None and \
                    in_netns(bb, tcp_open, BACKBONE_IP, REGISTRY_PORT, 0.2):
                ev["listening"] = now
            if ev["restarted"] is not None and ev["nodes_back"] is None and self.nodes_up() == REPLICAS:
                ev["nodes_back"] = now
            return ev["nodes_back"] is not None
        return t_kill, old.pid, ev, progress

    def nodes_up(self):
        """How many IceGrid nodes have a session with the current registry: its trace (Node=1)
        says "node `nodeK' up" when one registers, "down" when it goes."""
        try:
            with open(self.registry.log_path, errors="replace") as f:
                text = f.read()
        except OSError:
            return 0
        state = {}
        for name, what in NODE_TRACE.findall(text):
            state[name] = what == "up"
        return sum(state.values())

    def log_comeback(self, victim, ev, t_kill):
        """One log line: what came back after the kill, and when (or that it did not)."""
        a = self.a
        since = lambda t: fmt(t and t - t_kill, "%.2f")  # noqa: E731
        if a.backbone == "federated":
            log("backbone kill: member %d started again after %s s, listening after %s s, linked from every router "
                "again after %s s; %d s more" % (victim, since(ev["restarted"]), since(ev["listening"]),
                                               since(ev["relinked"]) if ev["relinked"] else "NOT (within %d s)"
                                               % a.backbone_tail, a.tail))
        elif victim is None:
            log("backbone kill: registry started again after %s s, listening after %s s, all %d nodes registered "
                "after %s s; %d s more" % (since(ev["restarted"]), since(ev["listening"]), REPLICAS,
                                           since(ev["nodes_back"]) if ev["nodes_back"] else "NOT (within %d s)" % a.backbone_tail,
                                           a.tail))
        elif ev["replica_set_full"] is None:
            log("backbone kill: replica %d NOT back in a %d-replica set within %d s" % (victim, REPLICAS, a.backbone_tail))
        else:
            log("backbone kill: replica %d restarted by its node after %s s%s, listening after %s s, back in the "
                "replica set (%d/%d) after %s s; %d s more"
                % (victim, since(ev["restarted"]),
                   " (node started again after %s s)" % since(ev["node_started"]) if ev["node_started"] else "",
                   since(ev["listening"]), REPLICAS, REPLICAS, since(ev["replica_set_full"]), a.tail))

    def backbone_kill(self):
        """kill -9 one IceStorm replica (--kill-replica) and follow, every 100 ms, the events the
        routers deliver and the sessions they hold, until its node has started it again and it
        is back in the replica set (the coordinator's `replication commencing with 3/3 nodes`),
        then --tail more seconds. The subscribers give the clock's longest stop (their `max gap`)
        and the ticks lost or received twice since the kill."""
        a = self.a
        pts = []
        step = 0.1

        grid = [time.monotonic()]  # the next sample's time: one 0.1 s grid across the calls below

        def sample_until(t_end, stop=None):
            while time.monotonic() < t_end:
                time.sleep(max(0.0, grid[0] - time.monotonic()))
                grid[0] = max(grid[0] + step, time.monotonic() + step / 2)  # after a slow scrape: no bunching
                pts.append(self.timeline_sample())
                self.check_alive()
                if stop and stop():
                    return

        t_before = time.monotonic()
        # The steady state the timeline starts with: 2 s, then a random fraction of a second, so
        # that the kill falls at a random point of the replicas' 1 s election timers (a slave's
        # MasterTimeout check, the master's ElectionTimeout check), which decide how long the
        # replicas hold events; without it every run would kill at about the same phase.
        delay = 2.0 + random.uniform(0.0, 1.0)
        sample_until(t_before + delay)
        pub_k, master = self.publisher_replica(), self.master()
        victim = None if a.kill_what == "registry" else self.victim_replica(pub_k, master)
        roles = ["registry"] if victim is None else \
            [r for r, k in (("the publisher's", pub_k), ("master", master)) if k == victim] or \
            ["slave" if a.backbone == "replicated" else "not the publisher's"]
        base = [s.last()[1] for s in self.subscribers]
        if victim is None:
            t_kill, pid, ev, progress = self.strike_registry()
        elif a.backbone == "federated":
            t_kill, pid, ev, progress = self.strike_member(victim, roles, pub_k)
        else:
            t_kill, pid, ev, progress = self.strike_replica(victim, roles, pub_k, master)
        sample_until(t_kill + a.backbone_tail, progress)
        self.log_comeback(victim, ev, t_kill)
        sample_until(time.monotonic() + a.tail)
        t_end = time.monotonic()
        time.sleep(1.5)  # the subscribers' status line covering the end
        last = [s.last()[1] for s in self.subscribers]

        # The timeline: events/s delivered by the routers between successive points, and sessions held.
        timeline = []
        for p0, p1 in zip(pts, pts[1:]):
            d0, d1 = p0["delivered"], p1["delivered"]
            ok = all(d1.get(n) is not None and d0.get(n) is not None for n in d1)
            dt = p1["t"] - p0["t"]
            timeline.append({"t": round(p1["t"] - t_kill, 3),
                             "events_per_s": round(sum(d1[n] - d0[n] for n in d1) / dt, 1) if ok and dt > 0 else None,
                             "sessions": sum(v or 0 for v in p1["sessions"].values()),
                             "per_router": p1["sessions"]})
        # The routers' view of the stop: the longest time between two points whose counters grew.
        grew = [p["t"] for p0, p in zip(pts, pts[1:])
                if sum(v or 0 for v in p["delivered"].values()) > sum(v or 0 for v in p0["delivered"].values())]
        after = [t for t in grew if t >= t_kill - 2.0]
        router_gap = max((t1 - t0 for t0, t1 in zip(after, after[1:])), default=None)
        # The subscribers' view: the longest wait of a session for its next tick (status lines
        # since the kill, the one covering it included), against the same figure before.
        gaps_after = [st["max_gap_ms"] for s in self.subscribers for st in s.since(t_kill) if st["max_gap_ms"] is not None]
        gaps_before = [st["max_gap_ms"] for s in self.subscribers for st in s.since(t_kill - 10.0, t_kill)
                       if st["max_gap_ms"] is not None]
        period_ms = 1000.0 / a.rate
        pub_lines = []
        try:
            with open(self.publisher.log_path, errors="replace") as f:
                pub_lines = [l.strip() for l in f if "failed:" in l or "connected to" in l]
        except OSError:
            pass
        after_kill = lambda t: round(t - t_kill, 2) if t else None  # noqa: E731
        bk = {"killed": a.kill_what, "replica": victim, "pid": pid, "kill_after_s": round(delay, 3), "new_pid": ev["new_pid"],
              "roles": roles, "hold_down_s": a.hold_down, "enabled_s": after_kill(ev["enabled"]),
              "node_started_s": after_kill(ev["node_started"]), "nodes_back_s": after_kill(ev["nodes_back"]),
              "relinked_s": after_kill(ev["relinked"]),
              "publisher_replica_before": pub_k, "master_before": master,
              "master_after": self.master(t_kill), "publisher_replica_after": self.publisher_replica(),
              "restarted_s": round(ev["restarted"] - t_kill, 2) if ev["restarted"] else None,
              "listening_s": round(ev["listening"] - t_kill, 2) if ev["listening"] else None,
              "rejoined_s": round(ev["rejoined"] - t_kill, 2) if ev["rejoined"] else None,
              "replica_set_full_s": round(ev["replica_set_full"] - t_kill, 2) if ev["replica_set_full"] else None,
              "period_ms": period_ms,
              "max_gap_ms": max(gaps_after, default=None), "max_gap_before_ms": max(gaps_before, default=None),
              "router_longest_stop_s": round(router_gap, 3) if router_gap is not None else None,
              "lost": sum(l["lost"] - b["lost"] for l, b in zip(last, base)),
              "lost_reconnected": sum((l["lost_reconnected"] or 0) - (b["lost_reconnected"] or 0) for l, b in zip(last, base)),
              "duplicates": sum((l["duplicates"] or 0) - (b["duplicates"] or 0) for l, b in zip(last, base)),
              "reconnecting": sum(l["reconnecting"] or 0 for l in last),
              "seconds_after_kill": round(t_end - t_kill, 1),
              "publisher_log": pub_lines[-20:],
              "election_trace": ["%.3f %s" % (t - t_kill, l) for k in sorted(self.replica_logs)
                                 for t, l in self.replica_logs[k].lines(t_kill - 0.5) if "Election" in l][:200],
              "timeline": timeline,
              "subscriber_seconds": self.subscriber_timeline(t_before, t_kill)}
        stop = None if bk["max_gap_ms"] is None else bk["max_gap_ms"] - period_ms
        bk["clock_stop_ms"] = round(stop, 1) if stop is not None else None
        log("backbone kill: longest wait of a session for its next tick %s ms (%s ms before the kill; the period is "
            "%.0f ms), so the clock stopped for %s ms; the routers' longest stretch without a delivery %s s; lost %d, "
            "received twice %d"
            % (bk["max_gap_ms"], bk["max_gap_before_ms"], period_ms, fmt(bk["clock_stop_ms"], "%.0f"),
               fmt(bk["router_longest_stop_s"], "%.2f"), bk["lost"], bk["duplicates"]))
        return bk

    def stop_subscribers(self):
        """SIGINT (each prints its final lines and result at its next status tick), or, for an
        older clock-subscriber, waits for it to end by itself; the result or summary is read."""
        self.stopping_subscribers = True
        if self.subscriber_has_result:
            for s in self.subscribers:
                s.proc.send(signal.SIGINT)
        bound = 20 if self.subscriber_has_result else self.a.failover_timeout + self.a.settle_max + self.a.duration + 30
        end = time.monotonic() + bound
        for s in self.subscribers:
            try:
                s.proc.popen.wait(max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                log("%s: still running %d s after it should have ended; killing it" % (s.name, bound))
                s.proc.stop(signal.SIGKILL, 5)
            s.thread.join(5)

    # -- teardown ---------------------------------------------------------------------------

    def teardown(self):
        order = ["subscriber", "publisher", "haproxy", "router", "backbone", "registry"]
        for role in order:
            group = [p for p in self.procs if p.role == role and p.alive()]
            sig = signal.SIGINT if role == "subscriber" else signal.SIGTERM
            for p in group:
                p.send(sig)
            deadline = time.monotonic() + 10
            for p in group:
                try:
                    p.popen.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.popen.kill()
                    try:
                        p.popen.wait(5)
                    except subprocess.TimeoutExpired:
                        log("warning: %s (pid %d) did not die" % (p.name, p.pid))
        for p in self.procs:
            try:
                p.log.close()
            except OSError:
                pass
        # The IceStorm replicas are their IceGrid nodes' children: a node stops them when it
        # stops; any left (a node killed after its timeout) are this run's, in its namespaces.
        for name in self.namespaces:
            if re.match(r"^%s-bb\d+$" % re.escape(self.prefix), name):
                for pid in ip("netns", "pids", name, check=False).stdout.split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                        log("killed replica process %s left in %s" % (pid, name))
                    except (OSError, ValueError):
                        pass
        for name in reversed(self.namespaces):
            r = ip("netns", "pids", name, check=False)
            left = r.stdout.split()
            if left:
                log("warning: namespace %s still holds processes %s (not started here?); deleting its name anyway"
                    % (name, " ".join(left)))
            ip("netns", "del", name, check=False)
        self.namespaces = []

    def print_logs(self):
        print("\nthe last lines of each log (%s):" % self.logdir)
        for p in self.procs:
            lines = p.tail(12)
            if lines:
                print("--- %s (pid %d, %s) ---" % (p.name, p.pid, "running" if p.alive() else
                                                     "exit %s" % p.popen.returncode))
                for l in lines:
                    print("    " + l)


# ---------------------------------------------------------------------------------------------
# Report

def front_text(a):
    """What stands between the subscribers and the routers, in words."""
    return {"haproxy": "HAProxy", "none": "a %d-endpoint router proxy" % a.routers,
            "reuseport": "one client port shared by the routers, SO_REUSEPORT"}[a.front]


def fmt(v, spec="%.1f", none="-"):
    return none if v is None else spec % v


def report(res, a):
    print()
    front = ("HAProxy x%d" % len(res.get("haproxy", {}).get("processes", [])) if a.front == "haproxy"
             else "no proxy (%s)" % front_text(a))
    print("=== cluster: %d routers (threads %d), %d sessions, %s, %s backbone linked to each router ==="
          % (a.routers, a.threads, a.sessions, front,
             {"icebox": "icebox", "replicated": "IceStorm replicated %d times under IceGrid" % REPLICAS,
              "federated": "%d moraine-topics federated" % REPLICAS}[a.backbone]))
    s = res.get("setup")
    if s:
        print("set-up: all sessions up in %.1f s from the subscribers' start (they say %s s, at their 1 s status ticks; "
              "the routers' gauges had every subscriber after %s s)"
              % (s["seconds"], ", ".join("%.1f" % x for x in s["per_subscriber_s"]),
                 fmt(s.get("routers_all_subscribed_s"), "%.1f")))
    ss = res.get("sessions")
    if ss:
        print("sessions: %d up of %d (%d failed); routers hold %d: %s"
              % (ss["up"], ss["expected"], ss["failed"], ss["held_by_routers"],
                 ", ".join("%s %s" % kv for kv in ss["per_router"].items())))
        if a.front == "haproxy":
            print("HAProxy: connections per router %s; per process (the kernel's SO_REUSEPORT spread; maxconn %d) %s"
                  % (", ".join("%s %s" % kv for kv in sorted(ss["haproxy_per_server"].items())), HAPROXY_MAXCONN,
                     ", ".join(str(n) for n in ss["haproxy_per_process"])))
    w = res.get("window")
    if w:
        print("steady window %.1f s: routers delivered %d events (%.0f/s; expected at --rate: %d), dropped %d; "
              "subscribers received %d (%.0f/s; their status lines cut the bursts at the ends), lost %d"
              % (w["seconds"], w["router_events_delivered"], w["router_events_delivered"] / w["seconds"],
                 w["expected_events"], w["router_events_dropped"], w["events"], w["events_per_s"], w["lost"]))
        print("latency: p50 %s ms, p99 %s ms (worst subscriber, median of its seconds); worst second's p99 %s ms"
              % (fmt(w["p50_ms_worst"], "%.2f"), fmt(w["p99_ms_worst"], "%.2f"), fmt(w["p99_worst_second_ms"], "%.2f")))
        print()
        print("%-16s %8s %8s %10s %8s %10s %10s %12s" % ("process", "pid", "CPU s", "(sched s)", "CPU %", "sessions",
                                                      "RSS MiB", "B/session"))
        routers = {r["name"]: r for r in w["routers"]}
        subs_by_name = {x["name"]: x["sessions"] for x in w["subscribers"]}
        for name, c in w["cpu"].items():
            r = routers.get(name, {})
            sessions = r.get("sessions") if r else subs_by_name.get(name)
            print("%-16s %8d %8s %10s %8s %10s %10s %12s" % (
                name, c["pid"], fmt(c["cpu_s"], "%.2f"), fmt(c["sched_s"], "%.3f"), fmt(c.get("cpu_percent")),
                fmt(sessions, "%d", ""), fmt(r["rss_kib"] / 1024.0 if r.get("rss_kib") else None, "%.1f", ""),
                fmt(r.get("rss_bytes_per_session"), "%d", "")))
        print()
        print("CPU per delivered event (us; per event the %s counted; utime+stime, schedstat in parentheses): "
              % w["cpu_per_event_denominator"] + ", ".join(
            "%s %s (%s)" % (k, fmt(v, "%.2f"), fmt(w["sched_us_per_event"][k], "%.2f"))
            for k, v in w["cpu_us_per_event"].items()))
        print("  per router: " + ", ".join("%s %s us (%d events)" % (r["name"], fmt(r["cpu_us_per_event"], "%.2f"),
                                                                     r["events_delivered"]) for r in w["routers"]))
        print()
        print("%-16s %9s %9s %6s %9s %9s %12s" % ("subscriber", "sessions", "events", "lost", "p50 ms", "p99 ms", "worst p99"))
        for x in w["subscribers"]:
            print("%-16s %9d %9d %6d %9s %9s %12s" % (x["name"], x["sessions"], x["events"], x["lost"],
                                                       fmt(x["p50_ms"], "%.2f"), fmt(x["p99_ms"], "%.2f"),
                                                       fmt(x["p99_worst_second_ms"], "%.2f")))
    fo = res.get("failover")
    if fo:
        print()
        print("failover: router 1 (pid %d) killed holding %d sessions; the subscribers report them restored after %s s "
              "(status lines 1 s apart): %d restored, %d still reconnecting, at most %d reconnecting in one status line"
              % (fo["pid"], fo["sessions_on_killed_router"], fmt(fo["restored_s"], "%.1f", "NOT"), fo["restored"],
                 fo["reconnecting"], fo["max_reconnecting_seen"]))
        print("  surviving routers (/metrics every ~0.2 s): every session after %s s, every subscriber after %s s; "
              "HAProxy marked r1 DOWN after %s s; now %s"
              % (fmt(fo["routers_hold_all_sessions_s"], "%.2f"), fmt(fo["routers_hold_all_subscribers_s"], "%.2f"),
                 fmt(fo["haproxy_marked_down_s"], "%.2f", "- (no HAProxy)"),
                 ", ".join("%s %s" % kv for kv in fo["sessions_per_router_after"].items())))
        print("  ticks lost since the kill: undisturbed sessions %d, reconnected sessions %s; ticks/s in the tail: %s"
              % (fo["lost_undisturbed"], fmt(fo.get("lost_reconnected"), "%d", "?"),
                 ", ".join(str(t) for t in fo["tail_ticks_per_s"])))
    bk = res.get("backbone_kill")
    if bk:
        print()
        killed = bk.get("killed", "replica")
        if bk.get("hold_down_s") and killed == "replica":
            print("backbone kill: the replica's server was disabled in IceGrid for %d s (enabled again after %s s)"
                  % (bk["hold_down_s"], fmt(bk.get("enabled_s"), "%.2f")))
        if a.backbone == "federated":
            print("backbone kill: moraine-topics member %d (%s) killed; started again after %s s, listening after "
                  "%s s, linked from every router again after %s s; publisher on member %s -> %s"
                  % (bk["replica"], " and ".join(bk["roles"]), fmt(bk["restarted_s"], "%.2f"),
                     fmt(bk["listening_s"], "%.2f"), fmt(bk.get("relinked_s"), "%.2f"),
                     bk["publisher_replica_before"], bk["publisher_replica_after"]))
        elif killed == "registry":
            print("backbone kill: the IceGrid registry killed; started again after %s s, listening after %s s, all %d "
                  "nodes registered again after %s s; master %s -> %s, publisher on replica %s -> %s"
                  % (fmt(bk["restarted_s"], "%.2f"), fmt(bk["listening_s"], "%.2f"), REPLICAS,
                     fmt(bk["nodes_back_s"], "%.2f"), bk["master_before"], fmt(bk["master_after"], "%s", "(no election)"),
                     bk["publisher_replica_before"], bk["publisher_replica_after"]))
        else:
            if killed == "node":
                print("backbone kill: IceGrid node %d killed with its replica; started again after %s s"
                      % (bk["replica"], fmt(bk.get("node_started_s"), "%.2f")))
            print("backbone kill: IceStorm replica %d (%s) killed; its node restarted it after %s s, listening after %s s, "
                  "in a group again after %s s, %d/%d replicas replicating after %s s; master %s -> %s, publisher on "
                  "replica %s -> %s"
                  % (bk["replica"], " and ".join(bk["roles"]), fmt(bk["restarted_s"], "%.2f"),
                     fmt(bk["listening_s"], "%.2f"), fmt(bk["rejoined_s"], "%.2f"), REPLICAS, REPLICAS,
                     fmt(bk["replica_set_full_s"], "%.2f"), bk["master_before"], bk["master_after"],
                     bk["publisher_replica_before"], bk["publisher_replica_after"]))
        print("  clock: longest wait of a session for its next tick %s ms (before the kill %s ms; period %.0f ms): "
              "stopped %s ms; routers' longest stretch without a delivery %s s; lost %d (reconnected sessions %d), "
              "received twice %d"
              % (fmt(bk["max_gap_ms"], "%d"), fmt(bk["max_gap_before_ms"], "%d"), bk["period_ms"],
                 fmt(bk["clock_stop_ms"], "%.0f"), fmt(bk["router_longest_stop_s"], "%.2f"), bk["lost"],
                 bk["lost_reconnected"], bk["duplicates"]))
        for l in bk["publisher_log"]:
            print("  publisher: " + l)
    subs = res.get("subscribers")
    if subs:
        print()
        for x in subs:
            f = x["final"]
            if f is None:
                print("%s: no result line%s" % (x["name"], (": " + "; ".join(x["errors"])) if x["errors"] else ""))
                continue
            print("%s (%s line): sessions_up %s, failed %s, dropped %s, ticks %s, lost %s, lost_reconnected %s, "
                  "restored %s, reconnecting %s, p50 %s ms, p99 %s ms"
                  % (x["name"], f["source"], f.get("sessions_up"), f.get("failed"), f.get("dropped"), f.get("ticks"),
                     f.get("lost"), f.get("lost_reconnected"), f.get("restored"), f.get("reconnecting"),
                     f.get("p50_ms"), f.get("p99_ms")))
    tcp, tcp_up = res.get("tcp_counters"), res.get("tcp_counters_all_up") or {}
    if tcp:
        print()
        print("kernel TCP counters (TcpExt) per namespace, when all sessions were up -> at the end (0 -> 0 left out):")
        for ns, v in tcp.items():
            nz = ["%s %s -> %s" % (k, (tcp_up.get(ns) or {}).get(k, "?"), v.get(k)) for k in TCP_COUNTERS if v.get(k)]
            print("  %-4s %s" % (ns, ", ".join(nz) if nz else "0"))
    c = res.get("checks")
    if c:
        print()
        for name, (ok, why) in c.items():
            print("check %-28s %s  %s" % (name, "ok  " if ok else "FAIL", why))


def checks(res, a):
    c = {}
    ss = res.get("sessions") or {}
    subs = res.get("subscribers") or []
    finals = [x["final"] for x in subs]
    up_ok = bool(ss) and ss["up"] == a.sessions and ss["failed"] == 0 and ss["held_by_routers"] == a.sessions
    c["every session up"] = (up_ok, "%s up, %s failed, routers held %s, of %d" % (
        ss.get("up"), ss.get("failed"), ss.get("held_by_routers"), a.sessions))
    lost = [f.get("lost") for f in finals if f] if finals and all(finals) else None
    c["undisturbed sessions lost 0"] = (lost is not None and sum(lost) == 0,
                                        "lost %s (whole run, sessions that kept their router)" % (
                                            sum(lost) if lost is not None else "unknown: no result line"))
    w = res.get("window")
    # The routers' count is exact over the window; the subscribers' may miss up to one tick burst
    # (one tick per session) at either end, where their status lines cut it.
    flowed = bool(w) and w["expected_events"] > 0 and w["router_events_delivered"] >= 0.95 * w["expected_events"] \
        and w["events"] >= w["expected_events"] - 2 * a.sessions
    c["events flowed"] = (flowed, "routers delivered %s, subscribers received %s, of %s expected in the window "
                          "(--rate per session per second)" % (w and w["router_events_delivered"], w and w["events"],
                                                            w and w["expected_events"]))
    if a.kill_backbone:
        bk = res.get("backbone_kill")
        c["backbone kill: lost 0"] = (bool(bk) and bk["lost"] == 0 and bk["lost_reconnected"] == 0,
                                      "lost %s since the kill" % (bk and bk["lost"]))
        c["backbone kill: clock stop <= 1 s"] = (bool(bk) and bk["clock_stop_ms"] is not None
                                                 and bk["clock_stop_ms"] <= 1000,
                                                 "longest wait for a tick %s ms, period %s ms" % (
                                                     bk and bk["max_gap_ms"], bk and bk["period_ms"]))
        if a.backbone == "federated":
            c["backbone kill: member linked again"] = (
                bool(bk) and bk.get("relinked_s") is not None,
                "every router linked from the new member after %s s" % (bk and bk.get("relinked_s")))
        elif a.kill_what == "registry":
            c["backbone kill: every node registered again"] = (
                bool(bk) and bk["nodes_back_s"] is not None,
                "%d nodes up after %s s" % (REPLICAS, bk and bk["nodes_back_s"]))
        else:
            c["backbone kill: replica back"] = (bool(bk) and bk["replica_set_full_s"] is not None,
                                                "%d/%d replicas after %s s" % (REPLICAS, REPLICAS,
                                                                              bk and bk["replica_set_full_s"]))
    if a.failover:
        fo = res.get("failover")
        ok = bool(fo) and fo["restored_s"] is not None and fo["restored"] >= fo["sessions_on_killed_router"] \
            and fo["reconnecting"] == 0
        c["failover: every session restored"] = (ok, "%s restored of %s, %s reconnecting" % (
            fo and fo["restored"], fo and fo["sessions_on_killed_router"], fo and fo["reconnecting"]))
    return c


# ---------------------------------------------------------------------------------------------

def cleanup_stale():
    r = ip("netns", "list", check=False)
    names = [l.split()[0] for l in r.stdout.splitlines() if l.strip()]
    for name in names:
        m = re.match(r"^mrn(\d+)-", name)
        if not m or os.path.exists("/proc/%s" % m.group(1)):
            continue
        if ip("netns", "pids", name, check=False).stdout.split():
            log("stale namespace %s still holds processes: left alone" % name)
            continue
        ip("netns", "del", name, check=False)
        log("deleted stale namespace %s" % name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--routers", type=int, default=2, help="moraine-routers behind HAProxy (1..200; default 2)")
    ap.add_argument("--sessions", type=int, default=2000, help="sessions in all (default 2000)")
    ap.add_argument("--duration", type=int, default=30, help="seconds of the steady window (default 30)")
    ap.add_argument("--rate", type=float, default=1.0,
                    help="ticks per second the publisher sends, so events/s = sessions x rate (default 1: the clock demo)")
    ap.add_argument("--threads", type=int, default=1, help="threads (shards) per router (default 1)")
    ap.add_argument("--front", choices=("haproxy", "none", "reuseport"), default="haproxy",
                    help="haproxy: the subscribers reach the routers through HAProxy (default); none: through a "
                         "router proxy with every router's endpoint, nothing in between; reuseport: every router "
                         "on one host and one client port (SO_REUSEPORT)")
    ap.add_argument("--auth", choices=("crypt", "allow_all"), default="crypt",
                    help="crypt: conf/passwords (SHA-512 crypt, about 1.9 ms of CPU per createSession on the "
                         "development machine); allow_all: any user and password, to time set-up and failover "
                         "without that cost")
    ap.add_argument("--failover", action="store_true", help="kill -9 router 1 after the window and time the failover")
    ap.add_argument("--backbone", choices=("icebox", "replicated", "federated"), default="icebox",
                    help="icebox: one transient IceStorm in mrn<pid>-bb (default); replicated: an IceGrid registry "
                         "there and IceStorm replicated 3 times under IceGrid, one IceGrid node and replica per "
                         "namespace mrn<pid>-bb1..3, the publisher twoway through the locator; federated: 3 "
                         "moraine-topics in mrn<pid>-bb1..3, each router linked from every one of them, the "
                         "publisher twoway to any")
    ap.add_argument("--kill-backbone", action="store_true",
                    help="after the window (and --failover, if given), kill -9 one IceStorm replica and record the "
                         "timeline until it is back in the replica set (--backbone replicated)")
    ap.add_argument("--kill-replica", default="publisher",
                    help="which replica --kill-backbone kills: publisher (the one the publisher is connected to; "
                         "default), master (the elected coordinator), slave (one that is neither), or 1..3")
    ap.add_argument("--kill-what", choices=("replica", "node", "registry"), default="replica",
                    help="with --kill-backbone: what dies: the replica's icebox (default), its IceGrid node with "
                         "the icebox (started again by this script after --hold-down s), or the IceGrid registry "
                         "(likewise)")
    ap.add_argument("--backbone-tail", type=int, default=30,
                    help="seconds at most after the backbone kill (default 30): the timeline runs until the killed "
                         "replica is back in the replica set, then --tail more seconds")
    ap.add_argument("--hold-down", type=int, default=0,
                    help="with --kill-backbone: the killed replica's server is disabled in IceGrid for this many "
                         "seconds first (icegridadmin server disable/enable), so its node starts it again only then: "
                         "a replica whose host is gone for a while (default 0: started again at once)")
    ap.add_argument("--election-timeout", type=int, default=1,
                    help="IceStorm.Election.{Master,Election,Response}Timeout of the replicas, seconds (default 1; "
                         "IceStorm's own default is 10)")
    ap.add_argument("--upstream-manager", help="the routers' topics.upstream.topic_manager with --backbone replicated "
                    "(default IceStorm/TopicManager, the replica group's well-known object through the locator; e.g. "
                    "'IceStorm/TopicManager:tcp -h 198.18.0.11 -p 10000:tcp -h 198.18.0.12 -p 10000:tcp -h 198.18.0.13 "
                    "-p 10000' names the replicas directly)")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                    help="moraine-router, clock-subscriber and clock-publisher (default build/bin)")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--keep-logs", metavar="DIR", help="write the logs to DIR and keep them")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every check holds")
    ap.add_argument("--settle-min", type=int, default=3, help="seconds at least between all up and the window (default 3)")
    ap.add_argument("--settle-max", type=int, default=30, help="seconds at most to wait for steady ticks (default 30)")
    ap.add_argument("--setup-timeout", type=int, help="seconds for every session to come up (default 60 + sessions/200)")
    ap.add_argument("--tcp-backlog", type=int, default=0,
                    help="each router's listen queue (limits.tcp_backlog) and its namespace's net.core.somaxconn, "
                         "in connections; 0 (default): the router's default, SOMAXCONN (4096). A survivor that takes "
                         "over thousands of clients at once needs one as long as the burst (docs/properties.md)")
    ap.add_argument("--sessions-per-subscriber", type=int, default=SESSIONS_PER_SUBSCRIBER,
                    help="at most this many sessions per clock-subscriber process (default %d; one thread each)"
                    % SESSIONS_PER_SUBSCRIBER)
    ap.add_argument("--failover-timeout", type=int, default=60, help="seconds for every session to be restored (default 60)")
    ap.add_argument("--tail", type=int, default=5, help="seconds of ticks after the failover (default 5)")
    ap.add_argument("--time-bound", type=int, help="seconds the whole run may take before it is stopped "
                    "(default: 180 + the bounds of every phase)")
    ap.add_argument("--cleanup-stale", action="store_true", help="first delete the namespaces of dead runs")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    if a.setup_timeout is None:
        a.setup_timeout = 60 + a.sessions // 200

    if os.geteuid() != 0:
        print("cluster.py: must run as root (it creates network namespaces, veth pairs and a bridge): "
              "sudo /usr/bin/python3 %s ..." % sys.argv[0], file=sys.stderr)
        return 2
    if a.front == "haproxy" and not os.path.exists(HAPROXY):
        print("cluster.py: %s is missing: apt-get install haproxy" % HAPROXY, file=sys.stderr)
        return 2
    if not os.path.exists(ICEBOX):
        print("cluster.py: %s is missing: apt-get install zeroc-icebox (scripts/setup)" % ICEBOX, file=sys.stderr)
        return 2
    for prog in ("moraine-router", "clock-subscriber", "clock-publisher", "moraine-topics"):
        if not os.access(os.path.join(a.bin, prog), os.X_OK):
            print("cluster.py: %s/%s is missing: build first (scripts/build)" % (a.bin, prog), file=sys.stderr)
            return 2
    if not 1 <= a.routers <= 200 or a.sessions < 1 or a.duration < 1 or a.threads < 0:
        print("cluster.py: --routers 1..200, --sessions >= 1, --duration >= 1, --threads >= 0", file=sys.stderr)
        return 2
    if math.ceil(a.sessions / a.sessions_per_subscriber) > 250:
        print("cluster.py: too many sessions", file=sys.stderr)
        return 2
    if a.kill_backbone and a.backbone == "icebox":
        print("cluster.py: --kill-backbone needs --backbone replicated or federated", file=sys.stderr)
        return 2
    if a.kill_backbone and a.backbone == "federated" and a.kill_what != "replica":
        print("cluster.py: --kill-what %s needs --backbone replicated (a federation has no IceGrid)" % a.kill_what,
              file=sys.stderr)
        return 2
    if a.backbone == "replicated":
        for prog in (ICEGRIDREGISTRY, ICEGRIDNODE, ICEGRIDADMIN):
            if not os.path.exists(prog):
                print("cluster.py: %s is missing: apt-get install zeroc-icegrid" % prog, file=sys.stderr)
                return 2
    if a.failover and a.routers < 2:
        print("cluster.py: --failover needs --routers 2 or more", file=sys.stderr)
        return 2
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    per_router = math.ceil(a.sessions / a.routers)
    after = math.ceil(a.sessions / (a.routers - 1)) if a.failover else per_router
    if after + 100 > hard:
        log("warning: each router gets about %d sessions%s, one descriptor each, and the limit is %d per process: "
            "expect refused sessions; use more --routers" % (per_router, " (%d after the failover)" % after
                                                              if a.failover else "", hard))

    if a.cleanup_stale:
        cleanup_stale()
    stale = [l.split()[0] for l in ip("netns", "list", check=False).stdout.splitlines()
             if re.match(r"^mrn(\d+)-", l) and not os.path.exists("/proc/%s" % re.match(r"^mrn(\d+)-", l).group(1))]
    if stale:
        log("note: %d namespaces of dead runs (%s...); --cleanup-stale deletes them" % (len(stale), stale[0]))

    run = Run(a)
    res = run.result
    res["config"].update({"routers": a.routers, "sessions": a.sessions, "rate": a.rate, "duration_s": a.duration,
                          "threads": a.threads,
                          "failover": a.failover, "backbone": a.backbone, "kill_backbone": a.kill_backbone,
                          "kill_replica": a.kill_replica if a.kill_backbone else None,
                          "kill_what": a.kill_what if a.kill_backbone else None,
                          "subscriber_processes": math.ceil(a.sessions / a.sessions_per_subscriber),
                          "tcp_backlog": a.tcp_backlog,
                          "front": a.front, "auth": a.auth,
                          "haproxy_processes": (math.ceil(a.sessions / SESSIONS_PER_HAPROXY) + 1
                                                if a.front == "haproxy" else 0),
                          "namespace_prefix": run.prefix, "started": time.strftime("%Y-%m-%d %H:%M:%S")})

    # The whole run is bounded: start-up, set-up, settle, window, failover, stop, plus margin.
    bound = a.time_bound or (180 + a.setup_timeout + a.settle_max + a.duration
                             + (a.failover_timeout + a.tail if a.failover else 0)
                             + (a.backbone_tail + a.tail + 90 if a.backbone != "icebox" else 0))
    main_thread = threading.main_thread()
    timed_out = threading.Event()

    def watchdog():
        timed_out.set()
        signal.pthread_kill(main_thread.ident, signal.SIGUSR1)

    def on_usr1(signum, frame):
        if timed_out.is_set():
            raise TimeBound()

    def on_term(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGUSR1, on_usr1)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored (&, nohup)
    timer = threading.Timer(bound, watchdog)
    timer.daemon = True
    timer.start()

    rc = 1
    t0 = time.monotonic()
    try:
        try:
            log("run %s: %d routers, %d sessions, logs in %s" % (run.prefix, a.routers, a.sessions, run.logdir))
            run.copy_binaries()
            run.build_topology(a.routers, res["config"]["subscriber_processes"])
            log("topology: %d namespaces (%s-*) on bridge br0 of %s" % (len(run.namespaces), run.prefix, run.ns("sw")))
            run.start_backbone()
            run.start_routers()
            run.wait_linked()
            run.start_publisher()
            if a.front == "haproxy":
                run.start_haproxy(a.sessions)
            time.sleep(0.5)
            run.rss_idle = {p.name: rss_kib(p.pid) for p in run.routers}
            run.measure()
            res["checks"] = {k: list(v) for k, v in checks(res, a).items()}
            ok = all(v[0] for v in res["checks"].values())
            res["ok"] = ok
            rc = 0 if ok or not a.check else 1
        except Fail as e:
            log("FAILED: %s" % e)
            res["error"] = str(e)
            rc = 1
        except TimeBound:
            log("FAILED: the run passed its time bound of %d s" % bound)
            res["error"] = "time bound %d s passed" % bound
            rc = 1
        except KeyboardInterrupt:
            log("interrupted")
            res["error"] = "interrupted"
            rc = 130
        finally:
            timer.cancel()
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            log("tearing down")
            run.teardown()
        res["total_s"] = round(time.monotonic() - t0, 1)
        report(res, a)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(portable(res), f, indent=1)
            print("\nJSON: %s" % a.json)
        if rc not in (0, 130):
            run.print_logs()
    finally:
        shutil.rmtree(os.path.join(run.tmp, "bin"), ignore_errors=True)  # the copied programs
        for name in os.listdir(run.tmp):  # the sockets are gone with their HAProxy
            if name.endswith(".sock"):
                try:
                    os.unlink(os.path.join(run.tmp, name))
                except OSError:
                    pass
        if a.keep_logs:
            # the configurations beside the logs
            for name in os.listdir(run.tmp):
                if name.endswith((".yaml", ".cfg")):
                    shutil.copy(os.path.join(run.tmp, name), os.path.join(run.logdir, name))
            shutil.rmtree(run.tmp, ignore_errors=True)
            print("logs and configurations: %s" % run.logdir)
        elif rc == 0 and res.get("ok"):
            shutil.rmtree(run.tmp, ignore_errors=True)
        else:
            print("logs and configurations kept in %s" % run.tmp)
    return rc


if __name__ == "__main__":
    sys.exit(main())
