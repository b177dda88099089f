#!/usr/bin/python3
"""A flood of TLS handshakes must not starve the sessions that share the shard, nor lose their events.

  /usr/bin/python3 tests/hostile/tls_handshake_flood.py [--bin-dir build/bin] [--sessions 300]
        [--phase-seconds 4] [--keep]

moraine-router --threads 1 (one shard: sessions and attacker share its thread) serves the clock
over TLS to --sessions clock-subscriber sessions (1 tick/s each), and meanwhile an attacker on the
same ssl endpoint opens complete TLS handshakes as fast as 4 processes can, then, in a second
phase, holds 200 half-open ones (half sent 40 bytes of a ClientHello, half nothing). The phases
(baseline, flood, half-open, after), --phase-seconds each, are those of
tests/hostile/clock_under_attack.py; tests/hostile/handshake_attack.py is the attacker. About 30 s.
Prints, per phase, p50 and p99 of the tick latency, the ratio of p99 to the baseline's, ticks
delivered, lost, router CPU and the handshakes/s the router completed.

What is asserted, and why these bounds:
  - no tick lost and no session dropped, over all phases (the `after` phase lets a gap caused
    during the attack be noticed): a deterministic property, whatever the machine's load.
  - every second of every phase delivered at least 50% of N ticks: sessions keep being served.
    A one-second status window can straddle a tick delayed across its boundary, so a second may
    show fewer than N even when nothing is wrong; a starved shard shows none.
  - p99 (median over the phase's seconds) at most 500 ms under the flood and 250 ms with the
    half-open connections. Complete handshakes cost the router about 1 ms of CPU each (today on
    the shard's thread), and the p99 that results depends on how 2 CPUs are shared between the
    router, the attacker (whose TLS client work costs as much) and clock-subscriber; other
    builds on a CI machine move it by tens of ms. Bounds at a quarter and half of the tick
    interval cannot flake from load alone, yet catch the regressions that matter: a shard that
    blocks on a handshake (a synchronous handshake waiting for its peer: half-open connections
    then stall every session, seconds at a time) or that serves queued handshakes before events.
    The issue's goal (at most 2x the baseline) is measured, not asserted, here: the baseline p99
    of a few hundred sessions is ~10 ms and moves by more than 2x with the machine's load and
    idle wake-ups alone. perf/tls_handshake_flood.py, with 1,000 sessions, reports the ratio
    beside glacier2router's.
  - router CPU during the half-open phase at most 20% (normally 1-2%): 200 connections that send
    nothing must cost nothing; a router that spins on them would take a whole core.
  - the flood completed at least 50 handshakes/s: the test did attack (a broken attacker or an
    endpoint that refuses every handshake would otherwise pass).
Moraine only: glacier2router's figures are perf/tls_handshake_flood.py's. Loopback only; bounded
(--timeout, default 150 s); every process it starts is stopped by PID.
Exit status 0 (PASS) or 1 (FAIL, logs kept).
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import clock_under_attack as U  # noqa: E402

MIN_TICKS_SHARE = 0.5
MIN_HANDSHAKES_PER_S = 50
FLOOD_P99_MAX_MS = 500.0
HALF_OPEN_P99_MAX_MS = 250.0
HALF_OPEN_CPU_MAX = 0.20


def check_run(res):
    """The failures of the module docstring's assertions, as text (empty: pass)."""
    bad = []
    if res["lost"] or res["dropped"] or res["failed"]:
        bad.append("lost %d ticks, %d sessions dropped, %d failed" % (res["lost"], res["dropped"], res["failed"]))
    for name, f in res["phases"].items():
        if f["min_ticks_share"] < MIN_TICKS_SHARE:
            bad.append("%s: a second delivered only %.0f%% of the sessions' ticks" % (name, 100 * f["min_ticks_share"]))
    base = res["phases"]["baseline"]["p99_ms"]
    flood = res["phases"]["flood"]
    if flood["p99_ms"] > FLOOD_P99_MAX_MS:
        bad.append("p99 under the handshake flood %.1f ms > %.0f ms" % (flood["p99_ms"], FLOOD_P99_MAX_MS))
    half = res["phases"]["half-open"]
    if half["p99_ms"] > HALF_OPEN_P99_MAX_MS:
        bad.append("p99 with half-open handshakes %.1f ms > %.0f ms (baseline %.1f ms)"
                   % (half["p99_ms"], HALF_OPEN_P99_MAX_MS, base))
    if half["cpu_util"]["router"] > HALF_OPEN_CPU_MAX:
        bad.append("the router used %.0f%% CPU while %d half-open connections sat (at most %.0f%%)"
                   % (100 * half["cpu_util"]["router"], half["attack"]["connections"], 100 * HALF_OPEN_CPU_MAX))
    rate = flood["attack"]["per_s"]
    if rate < MIN_HANDSHAKES_PER_S:
        bad.append("the flood completed only %.0f handshakes/s (at least %d expected)" % (rate, MIN_HANDSHAKES_PER_S))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"))
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--phase-seconds", type=int, default=4)
    ap.add_argument("--attack-procs", type=int, default=4)
    ap.add_argument("--half-open", type=int, default=200)
    ap.add_argument("--attacker-nice", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=150.0)
    ap.add_argument("--keep", action="store_true", help="keep logs and certificates even on success")
    a = ap.parse_args()
    a.threads, a.settle, a.settle_max, a.setup_timeout, a.phases = 1, 2, 20, 60, U.PHASES
    bins = {k: os.path.join(os.path.abspath(a.bin_dir), k) for k in ("moraine-router", "clock-subscriber", "clock-publisher")}
    d = tempfile.mkdtemp(prefix="moraine-flood-")

    def on_alarm(*_):
        raise U.RunError("no result within %.0f s" % a.timeout)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(a.timeout))
    ok = False
    try:
        res = U.run("moraine", bins, a.sessions, a, d)
        print("moraine-router --threads 1, %d TLS sessions, 1 tick/s, %d s per phase:" % (a.sessions, a.phase_seconds))
        print(U.summary_line(res))
        bad = check_run(res)
        for b in bad:
            print("FAIL tls_handshake_flood: %s" % b)
        ok = not bad
    except (U.RunError, OSError, RuntimeError) as e:
        print("FAIL tls_handshake_flood: %s" % e)
    finally:
        signal.alarm(0)
    if ok and not a.keep:
        shutil.rmtree(d, ignore_errors=True)
    else:
        print("logs in %s" % d)
    print("PASS tls_handshake_flood" if ok else "FAIL tls_handshake_flood")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
