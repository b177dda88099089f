#!/usr/bin/python3
"""tls_handshake_flood.py: the clock over TLS under a flood of TLS handshakes, moraine-router (one
shard) beside glacier2router + icebox IceStorm, with 1,000 sessions (issue 29's handshake goal).

  /usr/bin/python3 perf/tls_handshake_flood.py [--sessions 1000] [--repeats 3] [--phase-seconds 10]
        [--routers moraine,glacier2] [--bin-dir build/bin] [--attack-procs 4] [--half-open 200]
        [--attacker-nice 10] [--threads 1] [--json FILE]

Each run is tests/hostile/clock_under_attack.py's (routers interleaved: moraine, glacier2,
moraine, ...): the router with an ssl client endpoint (moraine-router --threads 1;
glacier2router with its defaults, IceStorm in icebox), clock-subscriber --sessions N over TLS,
clock-publisher --rate 1; then the phases baseline, flood (tests/hostile/handshake_attack.py:
complete handshakes, as fast as --attack-procs processes can), half-open (--half-open connections
that sent part of a ClientHello or nothing, re-opened when closed) and after, --phase-seconds
each. Figures per phase: p50/p99 of the tick latency (median of the per-second values; worst
second), p99 / baseline p99, ticks lost, share of ticks delivered, router CPU, handshakes/s the
router completed (the attacker counts a handshake once the router's Ice validate connection
message arrived after it).

The attacker runs on the same machine. Its TLS client work costs about as much CPU per handshake
as the router's (about 1.2 ms with OpenSSL 3 on the development machine), so on 2 cores the
handshakes/s are bounded by what the attacker gets, not only by the router. It runs at nice
--attacker-nice (10) so it takes the CPU the router and the sessions leave, as a remote attacker
would take none; say so with the figures.

Before each run, waits up to --wait-quiet s for other un-niced load under 0.5 cores (records it).
Writes perf/out/tls_handshake_flood-<time>.json (or --json) and a log directory, prints a row per
run and a summary per router (median [min-max] over the repeats). Every process is stopped by PID.
"""
import argparse
import os
import statistics
import sys
import time

PERF = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(PERF)
sys.path.insert(0, os.path.join(REPO, "tests", "hostile"))
import clock_under_attack as U  # noqa: E402
import clock_compare as C  # noqa: E402  (output paths, JSON, wait_quiet, log)
from perf_common import sha256  # noqa: E402

FIGURES = [  # (key in the summary, label, format)
    ("p99_baseline", "p99 baseline ms", "%.1f"),
    ("p99_flood", "p99 flood ms", "%.1f"),
    ("ratio_flood", "p99 flood / baseline", "%.2f"),
    ("p99_flood_worst", "p99 flood worst s ms", "%.1f"),
    ("handshakes_per_s", "handshakes/s (flood)", "%.0f"),
    ("router_cpu_flood", "router CPU flood %", "%.0f"),
    ("p99_half_open", "p99 half-open ms", "%.1f"),
    ("ratio_half_open", "p99 half-open / baseline", "%.2f"),
    ("closed_half_open", "half-open closed by router", "%.0f"),
    ("p99_after", "p99 after ms", "%.1f"),
    ("lost", "ticks lost (all phases)", "%.0f"),
    ("dropped", "sessions dropped", "%.0f"),
]


def figures(res):
    """The FIGURES of one run."""
    ph = res["phases"]
    g = {"p99_baseline": ph["baseline"]["p99_ms"], "p99_flood": ph["flood"]["p99_ms"],
         "ratio_flood": ph["flood"]["p99_ratio"], "p99_flood_worst": ph["flood"]["p99_ms_max"],
         "handshakes_per_s": ph["flood"]["attack"]["per_s"], "router_cpu_flood": 100 * ph["flood"]["cpu_util"]["router"],
         "p99_half_open": ph["half-open"]["p99_ms"], "ratio_half_open": ph["half-open"]["p99_ratio"],
         "closed_half_open": ph["half-open"]["attack"]["closed_by_router"], "p99_after": ph["after"]["p99_ms"],
         "lost": res["lost"], "dropped": res["dropped"]}
    return g


def summarise(result):
    result["summary"] = {}
    for kind in result["routers"]:
        runs = [figures(r) for r in result["runs"] if r.get("ok") and r["router"] == kind]
        if runs:
            result["summary"][kind] = {k: {"median": statistics.median([r[k] for r in runs if r[k] is not None] or [0]),
                                           "min": min(r[k] for r in runs if r[k] is not None),
                                           "max": max(r[k] for r in runs if r[k] is not None), "n": len(runs)}
                                       for k, _, _ in FIGURES}


def report(result):
    for r in result["runs"]:
        head = "%s #%d (%d sessions)" % (r["router"], r["repeat"], r["sessions"])
        if r.get("ok"):
            print(head + ":\n" + U.summary_line(r))
        else:
            print(head + ": FAILED: %s" % r.get("error"))
    kinds = [k for k in result["routers"] if k in result["summary"]]
    if not kinds:
        return
    print("\nmedian [min-max] over %s repeats, %d sessions, %d s per phase, attacker %d processes at nice %d, "
          "%d half-open:" % ("/".join(str(result["summary"][k]["lost"]["n"]) for k in kinds), result["sessions"],
                             result["phase_seconds"], result["attack_procs"], result["attacker_nice"], result["half_open"]))
    print("| | %s |" % " | ".join(kinds))
    print("|---|%s" % ("---|" * len(kinds)))
    for key, label, spec in FIGURES:
        cells = []
        for k in kinds:
            s = result["summary"][k][key]
            cells.append("%s [%s-%s]" % (spec % s["median"], spec % s["min"], spec % s["max"]))
        print("| %s | %s |" % (label, " | ".join(cells)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--phase-seconds", type=int, default=10)
    ap.add_argument("--routers", default="moraine,glacier2")
    ap.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"))
    ap.add_argument("--threads", type=int, default=1, help="moraine-router --threads (default 1: one shard)")
    ap.add_argument("--attack-procs", type=int, default=4)
    ap.add_argument("--half-open", type=int, default=200)
    ap.add_argument("--attacker-nice", type=int, default=10)
    ap.add_argument("--settle", type=int, default=3)
    ap.add_argument("--settle-max", type=int, default=60)
    ap.add_argument("--setup-timeout", type=float, default=180)
    ap.add_argument("--wait-quiet", type=float, default=20)
    ap.add_argument("--json", help="result file (default perf/out/tls_handshake_flood-<time>.json)")
    a = ap.parse_args()
    a.phases = U.PHASES
    routers = a.routers.split(",")
    bins = {k: os.path.join(os.path.abspath(a.bin_dir), k) for k in ("moraine-router", "clock-subscriber", "clock-publisher")}
    out_json, logdir, stamp = C.output_paths("tls_handshake_flood", a.json)
    C.stop_on_sigterm()
    t0 = time.monotonic()
    result = dict(stamp=stamp, sessions=a.sessions, repeats=a.repeats, phase_seconds=a.phase_seconds, routers=routers,
                  threads=a.threads, attack_procs=a.attack_procs, half_open=a.half_open, attacker_nice=a.attacker_nice,
                  ncpu=os.cpu_count(), moraine_sha256=sha256(bins["moraine-router"]) if "moraine" in routers else None,
                  runs=[])

    def measure():
        for rep in range(1, a.repeats + 1):
            for kind in routers:
                run = dict(router=kind, repeat=rep, sessions=a.sessions, ok=False)
                if a.wait_quiet > 0:
                    run["load_before_cores"] = C.wait_quiet(a.wait_quiet)
                run["loadavg_start"] = open("/proc/loadavg").read().split()[:3]
                C.log("%s #%d: %d sessions" % (kind, rep, a.sessions))
                try:
                    run.update(U.run(kind, bins, a.sessions, a, os.path.join(logdir, "%s-%d" % (kind, rep))))
                    print(U.summary_line(run), flush=True)
                except (U.RunError, OSError, RuntimeError) as e:
                    run["error"] = str(e)
                    C.log("run failed: %s" % e)
                run["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
                result["runs"].append(run)
                C.save_json(result, out_json)

    return C.run_and_report(result, t0, out_json, logdir, os.path.join(logdir, "tmp"), measure, summarise, report)


if __name__ == "__main__":
    sys.exit(main())
