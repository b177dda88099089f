#!/usr/bin/python3
"""Plots an overload run of perf/fanout_rate.py (--json FILE): the router's peak RSS and the
p99 latency against the offered load, one line per system (moraine-router, nats-server).

  /usr/bin/python3 perf/plot_overload.py perf/plots/data/overload.jsonl perf/plots/overload.png
"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    runs = [json.loads(line) for line in open(src) if line.strip()]
    fig, (rss, p99) = plt.subplots(1, 2, figsize=(11, 4))
    for system in sorted({r["system"] for r in runs}):
        rs = sorted((r for r in runs if r["system"] == system), key=lambda r: r["offered_events_per_s"])
        x = [r["offered_events_per_s"] / 1e6 for r in rs]
        rss.plot(x, [r["router_rss_peak_kib"] / 1024 for r in rs], marker="o", label=system)
        p99.plot(x, [r["p99_ms"] for r in rs], marker="o", label=system)
    rss.set(xlabel="offered (M events/s)", ylabel="server peak RSS (MiB)", title="memory under overload")
    p99.set(xlabel="offered (M events/s)", ylabel="p99 latency (ms)", title="latency under overload", yscale="log")
    for ax in (rss, p99):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle("500 subscriber sessions, one shard sharing its core with a busy loop (perf/RESULTS.md)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(out)


if __name__ == "__main__":
    main()
