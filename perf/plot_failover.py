#!/usr/bin/python3
"""plot_failover.py: the failover timeline of perf/cluster.py --failover runs, as a PNG.

  /usr/bin/python3 perf/plot_failover.py OUT.png RUN.json [RUN.json ...]

One column per run. Top: sessions held by each router (moraine_sessions, polled every ~0.2 s),
by all of them, and the subscribers of all of them (moraine_subscribers), against seconds since
the kill (-2 s: the steady state before it). Bottom: ticks the subscribers received per second,
and their sessions reconnecting, from their 1 s status lines. Needs python3-matplotlib.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_timeline  # noqa: E402  (perf/plot_timeline.py: the figure, one column per run)


def plot_run(top, bottom, res):
    fo = res["failover"]
    tl = fo.get("timeline")
    if not tl:
        raise SystemExit("no failover timeline in this result (cluster.py before the timeline was recorded)")
    ts = [g["t"] for g in tl["routers"]]
    names = sorted({n for g in tl["routers"] for n in g["sessions"]})
    for n in names:
        top.plot(ts, [g["sessions"].get(n) or 0 for g in tl["routers"]], label=n, drawstyle="steps-post")
    top.plot(ts, [sum(v or 0 for v in g["sessions"].values()) for g in tl["routers"]], "k--", label="all routers",
             drawstyle="steps-post")
    # Subscribed again: the topic service's subscribers, all routers (a session is back for its
    # user only once its subscription is).
    top.plot(ts, [sum(v or 0 for v in g.get("subscribers", {}).values()) for g in tl["routers"]], "g:",
             label="subscribers, all routers", drawstyle="steps-post")
    top.axvline(0, color="red", linewidth=0.8)
    top.set_ylabel("sessions held")
    cfg = res["config"]
    top.set_title("%d routers, %d sessions, front %s, auth %s:\nrouter-1 killed holding %d"
                  % (cfg["routers"], cfg["sessions"], cfg.get("front", "haproxy"), cfg.get("auth", "crypt"),
                     fo["sessions_on_killed_router"]), fontsize=9)
    top.legend(fontsize=7)
    subs = tl["subscribers"]
    st = [x["t"] for x in subs]
    bottom.step(st, [x["ticks"] for x in subs], where="post", label="ticks received / s")
    bottom.step(st, [x["reconnecting"] for x in subs], where="post", label="sessions reconnecting")
    bottom.axvline(0, color="red", linewidth=0.8)
    bottom.set_xlabel("seconds since the kill")
    bottom.legend(fontsize=7)



if __name__ == "__main__":
    sys.exit(plot_timeline.main(__doc__, sys.argv[1:], plot_run, column_width=4.5))
