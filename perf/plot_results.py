#!/usr/bin/python3
"""plot_results.py: two PNGs from the perf scripts' JSON results, moraine-router against
glacier2router + IceStorm and NATS.

  /usr/bin/python3 perf/plot_results.py FILE... [--out-dir perf/plots]

FILE is what bench_kernel_write --json writes (its writev2 lines: the kernel's floor, in the CPU
plot only), or what fanout_rate.py --json writes (one JSON object per run per line: moraine-router
--threads 1 and, with --nats, nats-server with GOMAXPROCS=1) or what clock_compare.py --json
writes (one JSON object whose "runs" are the clock demo at 1 tick/s: moraine-router as
conf/moraine.yaml configures it, and glacier2router + IceStorm in icebox; tcp runs only; with
--kernel-gap-us, its paced floor of each repeat joins the CPU plot as the kernel's series).
Draws
  cpu_per_event.png  router CPU per delivered event (us) against sessions; for glacier2router the
                     CPU of glacier2router and icebox (IceStorm) together;
  p99_latency.png    p99 latency (ms) against offered events/s (sessions x publish rate), with the
                     50 ms line of "keeps up".
One series per system, harness and publish rate in the first (x: sessions; only the series
measured at more than one session count, e.g. the 1/s sweeps); in the second, the
rates measured at one session count form a series, and session counts measured at one rate only
(the clock at 1/s) one per rate. A point is the median of the repeats. Runs that failed are left out. CPU is the schedstat figure (ns resolution) where
the script recorded one, else utime + stime.
"""
import argparse
import json
import os
import statistics
import sys

import matplotlib
matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

NAMES = {"kernel": "kernel floor", "moraine": "moraine-router", "moraine-icestorm": "moraine-router + IceStorm", "glacier2": "glacier2router + IceStorm",
         "nats": "NATS 2.9"}
COLOURS = {"kernel": "tab:grey", "moraine": "tab:blue", "moraine-icestorm": "tab:purple", "glacier2": "tab:red", "nats": "tab:green"}


def fanout_point(r):
    """A fanout_rate.py run as a point."""
    return {"system": r["system"], "harness": "fanout_rate " + ("GOMAXPROCS=1" if r["system"] == "nats" else "--threads 1"),
            "rate": r["rate"], "sessions": r["sessions"], "offered": r["offered_events_per_s"],
            "cpu_us": r.get("router_sched_us_per_event") or r["router_cpu_us_per_event"], "p99_ms": r["p99_ms"]}


def per_event_ns(c):
    """CPU ns per event of one process: schedstat (ns resolution) if read, else utime + stime."""
    return c["sched_ns_per_event"] if c.get("sched_ns_per_event") is not None else c["ns_per_event"]


def clock_point(r):
    """A clock_compare.py run (1 tick/s) as a point; None for failed or non-tcp runs."""
    if not r.get("ok") or r.get("transport", "tcp") != "tcp":
        return None
    cpu = r["cpu"]
    ns = sum(per_event_ns(cpu[k]) for k in ("router", "icebox") if k in cpu)
    return {"system": r["router"], "harness": "clock_compare", "rate": 1, "sessions": r["sessions"],
            "offered": r["expected_events_per_s"], "cpu_us": ns / 1000.0, "p99_ms": r["p99_ms"]}


def kernel_point(r):
    """A bench_kernel_write --json line (writev2, as moraine-router writes) as a point of the CPU plot."""
    if r.get("mode") != "writev2":
        return None
    paced = r.get("gap_us", 0) >= 1000000  # one round per second, as the clock ticks; else back to back (rate 0)
    return {"system": "kernel", "harness": "bench_kernel_write writev2" + ("" if paced else ", back to back"),
            "rate": 1 if paced else 0,
            "sessions": r["sockets"], "offered": None, "cpu_us": r["cpu_ns_per_write"] / 1000.0, "p99_ms": None}


def paired_kernel_point(k):
    """A floor clock_compare.py --kernel-gap-us measured before one repeat: one `write` per socket,
    paced one round per second, as moraine-router now writes a tick (one buffer: params inline)."""
    return {"system": "kernel", "harness": "bench_kernel_write write", "rate": 1, "sessions": k["sessions"],
            "offered": None, "cpu_us": k["write"]["cpu_ns_per_write"] / 1000.0, "p99_ms": None}


def load(path):
    """The points of one result file of either kind."""
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and "runs" in doc:
        return [p for p in map(clock_point, doc["runs"]) if p] + [
            paired_kernel_point(k) for k in doc.get("kernel_paired", []) if k.get("write")]
    runs = [doc] if isinstance(doc, dict) else [json.loads(line) for line in text.splitlines() if line.strip()]
    kernel = [p for p in map(kernel_point, (r for r in runs if "mode" in r and "sockets" in r)) if p]
    return kernel + [fanout_point(r) for r in runs if r.get("script") == "fanout_rate"]


def by_rate(p, points):
    """Series of the CPU plot: one per system, harness and publish rate (x: sessions)."""
    return (p["system"], "%s, %d/s" % (p["harness"], p["rate"]) if p["rate"] else p["harness"])


def by_load(p, points):
    """Series of the latency plot: the rates measured at one session count form a series (x:
    offered events/s); a session count measured at one rate only joins the other such counts
    of that rate (e.g. the clock at 1/s with 1,000 .. 19,000 sessions)."""
    rates = {q["rate"] for q in points if (q["system"], q["harness"], q["sessions"]) ==
             (p["system"], p["harness"], p["sessions"])}
    if len(rates) > 1:
        return (p["system"], "%s, %d sessions" % (p["harness"], p["sessions"]))
    return (p["system"], "%s, %d/s" % (p["harness"], p["rate"]))


def series(points, key):
    """{key: sorted [(sessions, offered, median cpu_us, median p99_ms)]}, repeats merged."""
    grouped = {}
    for p in points:
        grouped.setdefault(key(p, points), {}).setdefault((p["sessions"], p["offered"]), []).append(p)
    out = {}
    for k, by_x in grouped.items():
        rows = []
        for (n, offered), ps in sorted(by_x.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            cpu = [p["cpu_us"] for p in ps if p["cpu_us"] is not None]
            p99 = [p["p99_ms"] for p in ps if p["p99_ms"] is not None]
            rows.append((n, offered, statistics.median(cpu) if cpu else None, statistics.median(p99) if p99 else None))
        out[k] = rows
    return out


def draw(data, x_index, y_index, xlabel, ylabel, title, path, log=False, hline=None):
    fig, ax = plt.subplots(figsize=(8, 5))
    styles = ["o-", "s--", "^:", "d-.", "v-"]
    seen = {}
    for (system, harness), rows in sorted(data.items()):
        pts = [(r[x_index], r[y_index]) for r in rows if r[y_index] is not None]
        if not pts:
            continue
        style = styles[seen.setdefault(system, 0) % len(styles)]
        seen[system] += 1
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=COLOURS.get(system),
                label="%s (%s)" % (NAMES.get(system, system), harness))
    if hline is not None:
        ax.axhline(hline, color="grey", linewidth=0.8, linestyle=":")
    if log:  # latencies span 1 ms .. 1 s, loads 10^3 .. 10^5 events/s
        ax.set_xscale("log")
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="fanout_rate.py --json / clock_compare.py --json results")
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "plots"))
    a = ap.parse_args()
    points = [p for path in a.files for p in load(path)]
    if not points:
        sys.exit("plot_results.py: no runs in %s" % ", ".join(a.files))
    # The kernel's floor belongs to the CPU plot only: it has no latency.
    cpu_data = series(points, by_rate)
    p99_data = series([p for p in points if p["offered"] is not None], by_load)
    # Against sessions only the series measured at several session counts say something; a rate
    # sweep at one session count is in the latency plot. (All of them if none qualifies.)
    swept = {k: rows for k, rows in cpu_data.items() if len({r[0] for r in rows}) > 1}
    cpu_data = swept or cpu_data
    os.makedirs(a.out_dir, exist_ok=True)
    cpu_png = os.path.join(a.out_dir, "cpu_per_event.png")
    p99_png = os.path.join(a.out_dir, "p99_latency.png")
    draw(cpu_data, 0, 2, "sessions (subscribers)", "router CPU per delivered event (us)",
         "Router CPU per delivered event", cpu_png)
    draw(p99_data, 1, 3, "offered events/s (sessions x publish rate)", "p99 latency (ms)",
         "p99 latency against offered load (50 ms: keeps up)", p99_png, log=True, hline=50)
    for key, rows in sorted(p99_data.items()):
        print("%-28s %-34s %s" % (NAMES.get(key[0], key[0]), key[1], "; ".join(
            "%d sessions, %d ev/s: %s us/event, p99 %s ms" % (
                n, off, "-" if c is None else "%.2f" % c, "-" if p is None else "%.1f" % p)
            for n, off, c, p in rows)))
    print("wrote %s and %s" % (cpu_png, p99_png))


if __name__ == "__main__":
    main()
