#!/usr/bin/python3
"""plot_backbone.py: the timeline of perf/cluster.py --backbone replicated|federated --kill-backbone runs, as a PNG.

  /usr/bin/python3 perf/plot_backbone.py OUT.png RUN.json [RUN.json ...]

One column per run. Top: events per second the routers delivered (moraine_events_delivered_total,
polled every 0.1 s), against seconds since one IceStorm replica was killed (-2 s: the steady
state before it; with --kill-what, the node and replica, or the registry). Bottom: sessions the
routers held (moraine_sessions). Red line: the kill. Orange dotted line: its IceGrid node has
started it again (the registry, a federation's member: this script has). Green dashed line: the
replicas replicate 3/3 again (the registry: every node has registered with it again; a member:
every router has linked its topic from it again). Runs with --hold-down say so in their title.
Needs python3-matplotlib.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_timeline  # noqa: E402  (perf/plot_timeline.py: the figure, one column per run)


def marks(ax, bk):
    ax.axvline(0, color="red", linewidth=0.9, label="kill -9")
    registry = bk.get("killed") == "registry" or bk.get("relinked_s") is not None  # no node: started by the script
    if bk.get("restarted_s") is not None:
        ax.axvline(bk["restarted_s"], color="orange", linestyle=":", linewidth=1.2,
                   label="started again" if registry else "restarted by its node")
    if bk.get("replica_set_full_s") is not None:
        ax.axvline(bk["replica_set_full_s"], color="green", linestyle="--", linewidth=0.9, label="3/3 replicas again")
    if bk.get("relinked_s") is not None:
        ax.axvline(bk["relinked_s"], color="green", linestyle="--", linewidth=0.9, label="linked from every router again")
    if bk.get("nodes_back_s") is not None:
        ax.axvline(bk["nodes_back_s"], color="green", linestyle="--", linewidth=0.9, label="every node registered again")


def victim(bk, cfg):
    """What was killed, for the title: the registry, node k with its replica, replica k, or a
    federation's member k."""
    killed = bk.get("killed", "replica")
    if killed == "registry":
        return "the IceGrid registry"
    if cfg.get("backbone") == "federated":
        return "member %d (%s)" % (bk["replica"], " and ".join(bk["roles"]))
    return "%sreplica %d (%s)" % ("node and " if killed == "node" else "", bk["replica"], " and ".join(bk["roles"]))


def plot_run(top, bottom, res):
    bk = res.get("backbone_kill")
    if not bk or not bk.get("timeline"):
        raise SystemExit("no backbone-kill timeline in this result (run cluster.py --backbone replicated --kill-backbone)")
    tl = bk["timeline"]
    ts = [p["t"] for p in tl]
    top.step(ts, [p["events_per_s"] or 0 for p in tl], where="pre", linewidth=0.8, label="events/s delivered")
    marks(top, bk)
    top.set_ylabel("events/s (0.1 s bins)")
    top.set_ylim(bottom=0)
    cfg = res["config"]
    held = ", restart held %d s" % bk["hold_down_s"] if bk.get("hold_down_s") else ""
    top.set_title("%d routers, %d sessions, %.0f tick/s, front %s:\n%s%s killed; clock stopped %s ms, lost %d"
                  % (cfg["routers"], cfg["sessions"], cfg.get("rate", 1), cfg.get("front", "haproxy"), victim(bk, cfg), held,
                     "%.0f" % bk["clock_stop_ms"] if bk.get("clock_stop_ms") is not None else "?", bk["lost"]),
                  fontsize=9)
    top.legend(fontsize=7, loc="lower right")
    names = sorted({n for p in tl for n in p["per_router"]})
    for n in names:
        bottom.step(ts, [p["per_router"].get(n) or 0 for p in tl], where="post", label=n)
    bottom.step(ts, [p["sessions"] for p in tl], "k--", where="post", label="all routers")
    marks(bottom, bk)
    bottom.set_ylabel("sessions up")
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("seconds since the kill")
    handles, labels = bottom.get_legend_handles_labels()
    keep = [(h, l) for h, l in zip(handles, labels) if l in names or l == "all routers"]
    bottom.legend([h for h, _ in keep], [l for _, l in keep], fontsize=7, loc="lower right")



if __name__ == "__main__":
    sys.exit(plot_timeline.main(__doc__, sys.argv[1:], plot_run, column_width=5.4))
