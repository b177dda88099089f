#!/usr/bin/python3
"""idle_rss.py: moraine-router's resident memory per idle session, with and without a topic
subscription.

  /usr/bin/python3 perf/idle_rss.py [--sessions 5000] [--repeats 3] [--modes plain,subscribed]
        [--router build/bin/moraine-router] [--bin-dir build/bin] [--settle 2] [--setup-timeout 180]
        [--json FILE]

Per run (modes interleaved: plain, subscribed, plain, subscribed, ... for --repeats):
  moraine-router --ice-config FILE --threads 1: a Glacier2 property file written once on free
  ports below the ephemeral range (tests/interop/ports.py): client and server endpoints,
  Glacier2/NullPermissionsVerifier (no crypt cost), SessionTimeout 600 (no idle session is closed
  during a run), unbuffered, and the embedded topic service (IceStorm.TopicManager/Publish
  endpoints) in both modes, so the baseline is the same. Once the client endpoint accepts
  connections and --settle s have passed, VmRSS (and RssAnon) is read: the baseline.
  plain       N sessions opened by this script itself over raw sockets (hand-encoded Ice:
              validate connection, then createSession("u<i>", "p") on
              Glacier2/router, at most 256 in flight); each connection then stays open and
              silent (the router's heartbeats pile up in the kernel, unread).
  subscribed  build/bin/clock-subscriber --sessions N: each session also hosts a servant and
              subscribes it (oneway) to topic `time` through the router; nothing is published.
  When all N sessions are up (every createSession answered with success / clock-subscriber's
  "N sessions up"), --settle s more, then VmRSS again. Bytes per session =
  (VmRSS after - VmRSS before) / N. RSS is user-space memory only: kernel socket buffers are not
  in it. The router's one-time costs (code paged in, first-use allocations) are included,
  spread over N (a few tens of bytes per session at N = 5,000).
Every process is stopped by PID (SIGTERM, SIGKILL after 5 s); every wait is bounded. Prints one
line per run and a summary (min / median / max per mode). The descriptor limit must allow N
client sockets here and N in the router (ulimit -n; 5,000 needs > 10,000 for both together).
"""
import argparse
import errno
import json
import os
import re
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.append(os.path.join(REPO, "tests", "interop"))
import ice_wire  # noqa: E402  (tests/interop/ice_wire.py: hand-encoded Ice messages)
from perf_common import portable, status_kib, stop, wait_listening, write_router_config  # noqa: E402

HOST = "127.0.0.1"
VALIDATE = ice_wire.VALIDATE  # also the router's heartbeat


def create_session_request(rid, user, password):
    """createSession(user, password) on Glacier2/router: a twoway request message, no facet,
    empty context, encoding 1.1 (docs/ice-wire.md §4)."""
    return ice_wire.request(rid, "router", "Glacier2", "createSession",
                            ice_wire.ice_string(user) + ice_wire.ice_string(password))


class RawSessions:
    """N raw Ice connections to the router, each with one session (createSession answered with
    a success reply), opened at most `in_flight` at a time with one selector. The sockets stay
    open until close()."""

    def __init__(self, port, n, in_flight=256):
        self.port, self.n, self.in_flight = port, n, in_flight
        self.socks = []

    def open(self, timeout, router):
        sel = selectors.DefaultSelector()
        started = up = 0
        pending = {}  # socket -> [state, bytes received]
        end = time.monotonic() + timeout
        try:
            while up < self.n:
                while started < self.n and len(pending) < self.in_flight:
                    s = socket.socket()
                    s.setblocking(False)
                    err = s.connect_ex((HOST, self.port))
                    if err not in (0, errno.EINPROGRESS):
                        s.close()
                        raise RuntimeError("connect: %s" % os.strerror(err))
                    self.socks.append(s)
                    pending[s] = ["validate", b"", started]
                    sel.register(s, selectors.EVENT_READ)
                    started += 1
                if time.monotonic() > end:
                    raise RuntimeError("%d of %d sessions up after %.0f s" % (up, self.n, timeout))
                if router.poll() is not None:
                    raise RuntimeError("router exited with %d" % router.returncode)
                for key, _ in sel.select(0.5):
                    s = key.fileobj
                    st = pending[s]
                    try:
                        data = s.recv(4096)
                    except BlockingIOError:
                        continue
                    if not data:
                        raise RuntimeError("router closed connection %d during set-up" % st[2])
                    st[1] += data
                    if st[0] == "validate" and len(st[1]) >= 14:
                        if st[1][:14] != VALIDATE:
                            raise RuntimeError("expected validate connection, got %r" % st[1][:14])
                        st[1] = st[1][14:]
                        st[0] = "reply"
                        s.sendall(create_session_request(1, "u%d" % st[2], "p"))
                    if st[0] == "reply":
                        while st[1].startswith(VALIDATE):  # a heartbeat before the reply
                            st[1] = st[1][14:]
                        if len(st[1]) >= 14:
                            size = struct.unpack("<i", st[1][10:14])[0]
                            if len(st[1]) >= size:
                                if st[1][8] != 2 or struct.unpack("<i", st[1][14:18])[0] != 1 or st[1][18] != 0:
                                    raise RuntimeError("createSession failed: %s" % st[1][:size].hex())
                                sel.unregister(s)
                                del pending[s]
                                up += 1
        finally:
            sel.close()
        return up

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []


def one_run(a, mode, cfg, client, tm, logdir, tag):
    router = subprocess.Popen([a.router, "--ice-config", cfg, "--threads", "1"],
                              stdout=open(os.path.join(logdir, tag + "-router.log"), "w"), stderr=subprocess.STDOUT)
    sub = raw = None
    try:
        wait_listening(client, router)
        time.sleep(a.settle)
        rss0, anon0 = status_kib(router.pid, "VmRSS"), status_kib(router.pid, "RssAnon")
        t0 = time.monotonic()
        if mode == "plain":
            raw = RawSessions(client, a.sessions)
            raw.open(a.setup_timeout, router)
        else:
            log = os.path.join(logdir, tag + "-subscriber.log")
            sub = subprocess.Popen([os.path.join(a.bin_dir, "clock-subscriber"), "--router",
                                    "tcp -h %s -p %d" % (HOST, client), "--topic-manager", "tcp -h %s -p %d" % (HOST, tm),
                                    "--sessions", str(a.sessions), "--duration", str(a.setup_timeout + 60)],
                                   stdout=open(log, "w"), stderr=subprocess.STDOUT)
            end = time.monotonic() + a.setup_timeout
            while True:
                m = re.search(r"(\d+) sessions up in", open(log).read())
                if m:
                    break
                if sub.poll() is not None:
                    raise RuntimeError("clock-subscriber exited: see " + log)
                if time.monotonic() > end:
                    raise RuntimeError("clock-subscriber's sessions not up after %.0f s: see %s" % (a.setup_timeout, log))
                time.sleep(0.1)
            if int(m.group(1)) != a.sessions:
                raise RuntimeError("%s of %d sessions up: see %s" % (m.group(1), a.sessions, log))
        setup = time.monotonic() - t0
        time.sleep(a.settle)
        if router.poll() is not None:
            raise RuntimeError("router exited with %d" % router.returncode)
        rss1, anon1 = status_kib(router.pid, "VmRSS"), status_kib(router.pid, "RssAnon")
    finally:
        stop(sub)
        if raw is not None:
            raw.close()
        stop(router)
    return {"mode": mode, "sessions": a.sessions, "rss_before_kib": rss0, "rss_after_kib": rss1,
            "anon_before_kib": anon0, "anon_after_kib": anon1, "setup_s": setup,
            "bytes_per_session": (rss1 - rss0) * 1024 / a.sessions,
            "anon_bytes_per_session": (anon1 - anon0) * 1024 / a.sessions}


def spread(vals, spec):
    return "/".join(spec % v for v in (min(vals), statistics.median(vals), max(vals)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", default="plain,subscribed", help="plain, subscribed or both (comma-separated)")
    ap.add_argument("--router", default=os.path.join(REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"), help="clock-subscriber")
    ap.add_argument("--settle", type=float, default=2.0, help="seconds before each VmRSS reading")
    ap.add_argument("--setup-timeout", type=float, default=180.0)
    ap.add_argument("--json", help="also write the runs to this file")
    a = ap.parse_args()
    modes = a.modes.split(",")
    for m in modes:
        if m not in ("plain", "subscribed"):
            ap.error("unknown mode %r" % m)
    tmp = tempfile.mkdtemp(prefix="moraine-idle-rss-")
    cfg, client, tm = write_router_config(tmp, 600)
    runs = []
    for rep in range(a.repeats):
        for mode in modes:
            r = one_run(a, mode, cfg, client, tm, tmp, "r%d-%s" % (rep, mode))
            runs.append(r)
            print("%-10s %d sessions up in %.1f s: VmRSS %d -> %d KiB = %.0f B/session (RssAnon %.0f B/session)" % (
                mode, a.sessions, r["setup_s"], r["rss_before_kib"], r["rss_after_kib"], r["bytes_per_session"],
                r["anon_bytes_per_session"]), flush=True)
    print("\nsummary: router VmRSS per idle session, min/median/max of %d runs (logs in %s)" % (a.repeats, tmp))
    for mode in modes:
        rs = [r for r in runs if r["mode"] == mode]
        print("%-10s %s B/session (RssAnon %s; VmRSS before the first session %s KiB)" % (
            mode, spread([r["bytes_per_session"] for r in rs], "%.0f"),
            spread([r["anon_bytes_per_session"] for r in rs], "%.0f"), spread([r["rss_before_kib"] for r in rs], "%d")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(portable(runs), f, indent=1)


if __name__ == "__main__":
    main()
