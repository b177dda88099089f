#!/usr/bin/python3
"""cluster_table.py: perf/cluster.py results (--json files) as one Markdown table, one row per
front (haproxy, none, reuseport) and router count, median [min-max] over the runs given.

  /usr/bin/python3 perf/cluster_table.py perf/out/cluster-front/*.json

Per row: runs, sessions per router, events/s the routers delivered, ticks lost, p99 (worst
subscriber, median of its seconds), CPU per delivered event (utime + stime) of the routers, of
HAProxy, of the backbone (icebox), of the infrastructure (all three) and of the load generators,
and router RSS per session. Runs with --failover are left out (their window is before the kill,
but their set-up differs); runs whose checks failed are counted and named under the table.
"""
import json
import statistics
import sys


def spread(values, spec="%.2f"):
    """median [min-max] of the values that are not None, or '-'."""
    vs = [v for v in values if v is not None]
    if not vs:
        return "-"
    if len(vs) == 1:
        return spec % vs[0]
    return (spec + " [" + spec + "-" + spec + "]") % (statistics.median(vs), min(vs), max(vs))


def row_key(res):
    cfg = res["config"]
    return cfg.get("front", "haproxy"), cfg["routers"]


def figures(res):
    """The figures of one run's steady window."""
    w = res["window"]
    cpu = w["cpu_us_per_event"]
    rss = [r["rss_bytes_per_session"] for r in w["routers"] if r.get("rss_bytes_per_session")]
    return {"sessions": res["sessions"]["held_by_routers"] / max(1, res["config"]["routers"]),
            "events_per_s": w["router_events_delivered"] / w["seconds"], "lost": w["lost"],
            "p99": w["p99_ms_worst"], "routers": cpu["routers"], "haproxy": cpu["haproxy"],
            "icebox": cpu["backbone (icebox)"], "infra": cpu["infrastructure"], "load": cpu["load generators"],
            "rss": statistics.median(rss) if rss else None}


def main(paths):
    rows, failed = {}, []
    for path in paths:
        with open(path) as f:
            res = json.load(f)
        if res["config"].get("failover") or "window" not in res:
            continue
        if not res.get("ok"):
            failed.append(path)
        rows.setdefault(row_key(res), []).append(figures(res))
    print("| front | routers | runs | sessions / router | events/s | lost | p99 ms | CPU µs/event: routers "
          "| HAProxy | icebox | infrastructure | load generators | router RSS / session |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (front, n), fs in sorted(rows.items()):
        col = lambda k, spec="%.2f": spread([f[k] for f in fs], spec)  # noqa: E731
        print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s B |" % (
            front, n, len(fs), col("sessions", "%.0f"), col("events_per_s", "%.0f"), col("lost", "%d"),
            col("p99", "%.0f"), col("routers"), col("haproxy"), col("icebox"), col("infra"), col("load"),
            col("rss", "%.0f")))
    if failed:
        print("\nchecks failed in: " + ", ".join(failed))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
