"""plot_timeline.py: what perf/plot_failover.py and perf/plot_backbone.py share: one column per
run of perf/cluster.py (its --json result), two stacked panels per column, written as a PNG.

Not run by itself: each plot script passes its own panel drawer and column width to main().
Needs python3-matplotlib.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(doc, argv, plot_run, column_width):
    """Plots RUN.json files into OUT.png: argv is [OUT.png, RUN.json, ...]; plot_run(top, bottom,
    result) draws one run's two panels; column_width is in inches. Prints `doc` and returns 2
    when the arguments are missing, else 0."""
    if len(argv) < 2:
        print(doc, file=sys.stderr)
        return 2
    out, paths = argv[0], argv[1:]
    runs = []
    for p in paths:
        with open(p) as f:
            runs.append(json.load(f))
    fig, axes = plt.subplots(2, len(runs), figsize=(column_width * len(runs), 6), squeeze=False, sharex="col")
    for i, res in enumerate(runs):
        plot_run(axes[0][i], axes[1][i], res)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote %s" % out)
    return 0
