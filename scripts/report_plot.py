#!/usr/bin/env python3
"""Turns shardops --report JSON files into a table (markdown, on stdout) and a PNG.

For each report: the phases per rank as stacked bars (load imbalance shows as uneven bars),
and for a deck the time of each step (max over ranks, with the min as a tick). Several
reports (say one per rank count, or per run) go side by side.

Usage: python3 scripts/report_plot.py REPORT.json [REPORT.json ...] [--png OUT.png]
Needs matplotlib for the PNG (Debian: python3-matplotlib); the table needs nothing.
"""

import argparse
import json
import os
import sys

PHASES = ["read", "validate", "route", "apply", "write"]


def load(path):
    with open(path) as f:
        report = json.load(f)
    if "phases" not in report:
        raise SystemExit("%s: not a shardops report with per-rank phases (older shardops?)" % path)
    return report


def table(paths, reports):
    lines = ["| report | command | ranks | hosts | " + " | ".join("%s max s (rank)" % p for p in PHASES) +
             " | total s | imbalance (max/mean of busiest phase) |",
             "|---|---|---:|---:|" + "---:|" * len(PHASES) + "---:|---:|"]
    for path, r in zip(paths, reports):
        cells = []
        busiest, ratio = None, 1.0
        for p in PHASES:
            s = r["phases"][p]
            cells.append("%.4f (%d)" % (s["max"], s["max_rank"]))
            if busiest is None or s["max"] > r["phases"][busiest]["max"]:
                busiest = p
        b = r["phases"][busiest]
        if b["mean"] > 0:
            ratio = b["max"] / b["mean"]
        lines.append("| %s | %s | %d | %d | %s | %.4f | %.2f (%s) |" % (
            os.path.basename(path), r["command"], r["ranks"], len(r.get("hosts", [])), " | ".join(cells),
            r["phases"]["total"]["max"], ratio, busiest))
    for path, r in zip(paths, reports):
        if r.get("steps"):
            lines += ["", "Steps of %s (%s):" % (os.path.basename(path), r["command"]), "",
                      "| step | op | max s | min s | rank of max |", "|---|---|---:|---:|---:|"]
            for s in r["steps"]:
                lines.append("| %s | %s | %.4f | %.4f | %d |" % (s["where"], s["op"], s["seconds"]["max"],
                                                                s["seconds"]["min"], s["seconds"]["max_rank"]))
    return "\n".join(lines)


def plot(paths, reports, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_steps = [r for r in reports if r.get("steps")]
    rows = 1 + (1 if with_steps else 0)
    fig, axes = plt.subplots(rows, len(reports), figsize=(4.5 * len(reports), 3.6 * rows), squeeze=False)
    colors = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f"]
    for k, (path, r) in enumerate(zip(paths, reports)):
        ax = axes[0][k]
        ranks = list(range(r["ranks"]))
        bottom = [0.0] * len(ranks)
        for p, c in zip(PHASES, colors):
            values = r["phases"][p]["per_rank"]
            ax.bar(ranks, values, bottom=bottom, color=c, label=p)
            bottom = [b + v for b, v in zip(bottom, values)]
        ax.set_title("%s\n%s, %d rank(s)" % (os.path.basename(path), r["command"], r["ranks"]), fontsize=9)
        ax.set_xlabel("rank")
        ax.set_ylabel("seconds")
        ax.set_xticks(ranks)
        if k == 0:
            ax.legend(fontsize=8)
        if rows > 1:
            ax2 = axes[1][k]
            steps = r.get("steps", [])
            if steps:
                x = list(range(len(steps)))
                ax2.bar(x, [s["seconds"]["max"] for s in steps], color="#4e79a7", label="max over ranks")
                ax2.scatter(x, [s["seconds"]["min"] for s in steps], color="black", marker="_", s=200,
                            label="min over ranks")
                ax2.set_xticks(x)
                ax2.set_xticklabels([s["op"] for s in steps], rotation=45, ha="right", fontsize=7)
                ax2.set_ylabel("seconds")
                ax2.set_title("deck steps", fontsize=9)
                ax2.legend(fontsize=7)
            else:
                ax2.axis("off")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("reports", nargs="+")
    p.add_argument("--png", help="write the plot here")
    a = p.parse_args()
    reports = [load(path) for path in a.reports]
    print(table(a.reports, reports))
    if a.png:
        plot(a.reports, reports, a.png)
        print("\nwrote " + a.png, file=sys.stderr)


if __name__ == "__main__":
    main()
