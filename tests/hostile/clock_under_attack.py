"""One run of the clock over TLS while an attacker floods the router's ssl endpoint with handshakes:
the machinery of tests/hostile/tls_handshake_flood.py (short, in CI) and
perf/tls_handshake_flood.py (1,000 sessions, both routers, repeats).

run(kind, ...) starts, on free loopback ports below the ephemeral range:
  moraine:  moraine-router --ice-config FILE --threads T (one shard by default: the sessions and
            the attacker's handshakes share its one thread) with its embedded topic service;
  glacier2: glacier2router --Ice.Config=FILE + icebox running IceStorm on the same FILE, as
            perf/clock_compare.py runs them (glacier2router's own thread pools, its defaults);
one Glacier2 property file for both: ssl client endpoint (certificates made fresh with `openssl`,
perf/tls_certs.py, VerifyPeer=1), tcp server endpoint, TopicManager and Publish endpoints on tcp,
the null permissions verifier, unbuffered, SessionTimeout 30. Then clock-subscriber --sessions N
over ssl (a client certificate, password sessions), and once it has the topic, clock-publisher
--rate 1. After all sessions are up and `settle` status seconds in a row delivered N ticks (+-2%),
the phases run in order, each `seconds` status lines long:
  baseline    nothing else;
  flood       tests/hostile/handshake_attack.py flood (complete handshakes, --procs workers);
  half-open   tests/hostile/handshake_attack.py half-open (--connections held, re-opened when closed);
  after       nothing else again: what the attack left behind (late ticks, lost ones now noticed).
The first status line after an attacker starts is dropped (it spans the attacker's start-up) and
the attacker runs 1.5 s longer than the phase, so every second measured was under attack.

Per phase: clock-subscriber's per-second p50 and p99 (ms; the median over the phase's seconds and
the worst second), ticks delivered and their share of N per second, lost (its cumulative counter's
growth over the phase), sessions dropped by the router, the router's CPU use (and icebox's), and
the attacker's JSON (handshakes completed per second, its handshake time p50/p99, half-open
connections the router closed).

Every process is stopped by PID (SIGTERM, SIGKILL after 5 s); every wait is bounded. Raises
RunError on a failed run, after stopping everything.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "perf"))
import clock_compare as C  # noqa: E402  (Proc, SubscriberReader, wait_ready, cpu_times, RunError)
import tls_certs  # noqa: E402  (perf/tls_certs.py: ca, server, client certificates)
sys.path.insert(0, os.path.join(REPO, "tests", "interop"))
import ports  # noqa: E402  (listening ports below the ephemeral range)

RunError = C.RunError
ATTACKER = os.path.join(HERE, "handshake_attack.py")
PYTHON = "/usr/bin/python3"
PHASES = ("baseline", "flood", "half-open", "after")


def write_config(d, certs, p):
    """The property file both routers read (see the module docstring); p: the four ports."""
    props = {
        "Glacier2.InstanceName": "Glacier2",
        "Glacier2.Client.Endpoints": "ssl -h 127.0.0.1 -p %d" % p["client"],
        "Glacier2.Server.Endpoints": "tcp -h 127.0.0.1 -p %d" % p["server"],
        "Glacier2.PermissionsVerifier": "Glacier2/NullPermissionsVerifier",
        "Glacier2.SessionTimeout": "30",
        "Glacier2.Client.Buffered": "0",
        "Glacier2.Server.Buffered": "0",
        "Ice.Warn.Connections": "0",
        "IceStorm.InstanceName": "IceStorm",
        "IceStorm.TopicManager.Endpoints": "tcp -h 127.0.0.1 -p %d" % p["tm"],
        "IceStorm.Publish.Endpoints": "tcp -h 127.0.0.1 -p %d" % p["pub"],
        "IceStorm.Transient": "1",
    }
    props.update(tls_certs.iceSSL_props(certs, "server", verify_peer=1))
    return tls_certs.write_properties(os.path.join(d, "router.cfg"), props)


def start_router(kind, bins, cfg, d, p, ctx, threads):
    """{name: Proc} of the router under test (and icebox), each ready on its ports."""
    procs = {}
    try:
        if kind == "moraine":
            procs["router"] = C.Proc("moraine-router", [bins["moraine-router"], "--ice-config", cfg,
                                                        "--threads", str(threads)], d)
            C.wait_ready(procs["router"], p["tm"])
        else:
            box_cfg = tls_certs.write_properties(os.path.join(d, "icebox.cfg"), {
                "IceBox.Service.IceStorm": "IceStormService,37:createIceStorm --Ice.Config=%s" % cfg,
                "Ice.Warn.Connections": "0"})
            procs["icebox"] = C.Proc("icebox", ["/usr/bin/icebox", "--Ice.Config=" + box_cfg], d)
            C.wait_ready(procs["icebox"], p["tm"])
            procs["router"] = C.Proc("glacier2router", ["/usr/bin/glacier2router", "--Ice.Config=" + cfg], d)
        C.wait_ready(procs["router"], p["client"], tls=ctx)
    except BaseException:
        for proc in procs.values():
            proc.stop()
        raise
    return procs


def cpu_s(procs):
    return {k: sum(C.cpu_times(proc.pid)) for k, proc in procs.items()}


def status_lines(reader, n, deadline, what):
    """The next n status dicts of clock-subscriber."""
    lines = []
    while len(lines) < n:
        ev, _, v = reader.next(deadline, what)
        if ev == "status":
            lines.append(v)
    return lines


def attacker_cmd(mode, port, seconds, a):
    cmd = [PYTHON, ATTACKER, mode, "--port", str(port), "--seconds", "%.1f" % seconds, "--nice", str(a.attacker_nice)]
    return cmd + (["--procs", str(a.attack_procs)] if mode == "flood" else ["--connections", str(a.half_open)])


def phase(name, reader, procs, last, n, a, d, port):
    """One phase (see the module docstring); last: the status dict before it. Returns
    (figures, the phase's last status dict)."""
    attacker = None
    if name in ("flood", "half-open"):
        attacker = C.Proc("attacker-" + name, attacker_cmd(name, port, a.phase_seconds + 1.5, a), d, pipe_stdout=True)
    t0, c0 = time.monotonic(), cpu_s(procs)
    deadline = t0 + a.phase_seconds + 30
    try:
        if attacker:
            last = status_lines(reader, 1, deadline, name + " start")[0]  # spans the attacker's start-up
            t0, c0 = time.monotonic(), cpu_s(procs)
        lines = status_lines(reader, a.phase_seconds, deadline, name + " status lines")
        wall = time.monotonic() - t0
        c1 = cpu_s(procs)
        attack = None
        if attacker:
            try:
                out, _ = attacker.popen.communicate(timeout=a.phase_seconds + 20)
            except subprocess.TimeoutExpired:
                raise RunError("the %s attacker did not finish: %s" % (name, attacker.tail()))
            try:
                attack = json.loads(out.decode().strip().splitlines()[-1])
            except (ValueError, IndexError):
                raise RunError("the %s attacker printed no result (status %s): %s"
                               % (name, attacker.popen.returncode, attacker.tail()))
    finally:
        if attacker:
            attacker.stop()
    p50s = [s["p50"] for s in lines if s["ticks"]]
    p99s = [s["p99"] for s in lines if s["ticks"]]
    fig = dict(seconds=len(lines), ticks=sum(s["ticks"] for s in lines),
               min_ticks_share=min(s["ticks"] for s in lines) / float(n),
               ticks_share=sum(s["ticks"] for s in lines) / float(n * len(lines)),
               lost=lines[-1]["lost"] - last["lost"], dropped=lines[-1]["dropped"] - last["dropped"],
               p50_ms=statistics.median(p50s) if p50s else None, p99_ms=statistics.median(p99s) if p99s else None,
               p99_ms_max=max(p99s) if p99s else None, p99_ms_seconds=p99s,
               cpu_util={k: (c1[k] - c0[k]) / wall for k in c1}, attack=attack)
    return fig, lines[-1]


def run(kind, bins, n, a, d):
    """One run against `kind` (moraine or glacier2) with n sessions; logs and files in d.
    a: phase_seconds, settle, settle_max, setup_timeout, threads, attack_procs, half_open,
    attacker_nice, phases (names from PHASES). Returns the result dict."""
    os.makedirs(d, exist_ok=True)
    certs = tls_certs.make(os.path.join(d, "tls"))
    ctx = tls_certs.probe_context(certs)
    p = {k: ports.free_port() for k in ("client", "server", "tm", "pub")}
    cfg = write_config(d, certs, p)
    res = dict(router=kind, sessions=n, threads=a.threads if kind == "moraine" else None, ports=p, logs=d)
    procs, others = {}, []
    try:
        procs = start_router(kind, bins, cfg, d, p, ctx, a.threads)
        sub = C.Proc("clock-subscriber", [
            bins["clock-subscriber"], "--sessions", str(n), "--duration", "100000",
            "--router", "ssl -h 127.0.0.1 -p %d" % p["client"], "--topic-manager", "tcp -h 127.0.0.1 -p %d" % p["tm"],
            "--tls-ca", os.path.join(certs, "ca.pem"), "--tls-cert", os.path.join(certs, "client.pem"),
            "--tls-key", os.path.join(certs, "client_key.pem")], d, pipe_stdout=True)
        others.append(sub)
        reader = C.SubscriberReader(sub, os.path.join(d, "clock-subscriber.out"))
        reader.start()
        t_sub = time.monotonic()
        # clock-subscriber makes the topic (see perf/clock_compare.py): its first status line, then
        # the publisher.
        status_lines(reader, 1, t_sub + 30, "clock-subscriber's first status line")
        time.sleep(0.5)  # ticks land mid-second, away from the subscriber's status boundaries
        others.append(C.Proc("clock-publisher", [bins["clock-publisher"], "--rate", "1",
                                                 "--topic-manager", "tcp -h 127.0.0.1 -p %d" % p["tm"]], d))
        deadline = t_sub + a.setup_timeout
        while True:
            ev, _, v = reader.next(deadline, "all %d sessions up" % n)
            if ev == "all_up":
                res["setup_s"] = v[1]
                if v[0] != n:
                    raise RunError("only %d of %d sessions up" % (v[0], n))
                break
        settle_end = time.monotonic() + a.settle + a.settle_max
        in_row, last = 0, None
        while in_row < a.settle:
            last = status_lines(reader, 1, settle_end + 30, "settling")[0]
            in_row = in_row + 1 if abs(last["ticks"] - n) <= 0.02 * n else 0
            if time.monotonic() > settle_end:
                res["steady_not_reached"] = True
                break
        res["phases"] = {}
        for name in a.phases:
            res["phases"][name], last = phase(name, reader, procs, last, n, a, d, p["client"])
            if not all(proc.alive() for proc in procs.values()):
                raise RunError("%s died during the %s phase: %s" % (
                    [k for k, proc in procs.items() if not proc.alive()], name, procs["router"].tail()))
        res["failed"], res["dropped"], res["lost"] = last["failed"], last["dropped"], last["lost"]
        base = res["phases"].get("baseline", {}).get("p99_ms")
        for name, fig in res["phases"].items():
            fig["p99_ratio"] = fig["p99_ms"] / base if base and fig["p99_ms"] is not None else None
        res["ok"] = True
    finally:
        for proc in reversed(others):
            proc.stop()
        for proc in procs.values():
            proc.stop()
    return res


def summary_line(res):
    """One line per phase: p50/p99 (worst second), ratio to the baseline, ticks, lost, CPU, attack."""
    out = []
    for name, f in res["phases"].items():
        att = f.get("attack") or {}
        extra = ""
        if att.get("mode") == "flood":
            extra = "; %.0f handshakes/s completed (handshake p50 %.1f ms, p99 %.1f ms, %d failed)" % (
                att["per_s"], att["handshake_ms_p50"] or 0, att["handshake_ms_p99"] or 0, att["failed"])
        elif att.get("mode") == "half-open":
            extra = "; %d half-open held, %d closed by the router" % (att["connections"], att["closed_by_router"])
        out.append("  %-9s p50 %6.2f ms  p99 %7.2f ms (worst s %7.2f, x%.2f)  ticks %3.0f%%  lost %d  router CPU %3.0f%%%s"
                   % (name, f["p50_ms"] or 0, f["p99_ms"] or 0, f["p99_ms_max"] or 0, f["p99_ratio"] or 0,
                      100 * f["ticks_share"], f["lost"], 100 * f["cpu_util"]["router"], extra))
    return "\n".join(out)
