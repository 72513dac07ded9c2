#!/usr/bin/env python3
"""Merges a GPU run into one markdown report (run-gpu-checks.sh calls it).

  gpu_report.py --bench bench-np1.json [--bench bench-np2.json ...] [--peers peers.json]
                [--env env.txt] [--ctest ctest-summary.txt] [--title TEXT] > results.md

For each workload W1-W5: shardops (from shardops_bench --json) with its device-to-device
copy floor measured in the same run (the bench's memcpy floor: Kokkos::deep_copy between
two Views in the default memory space, which is device memory on a CUDA build), then each
GPU peer (gpu_peers.py --json) with its own framework's device copy. "vs device copy" is
the copy's time for the op's effective bytes divided by the op's time: 100% means the op
ran at copy speed.
"""
import argparse
import json
import sys

ORDER = ["W1", "W2", "W3", "W4", "W5"]


def load(path):
    with open(path) as f:
        return json.load(f)


def fmt_ms(s):
    return f"{s * 1e3:.2f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", action="append", default=[], help="shardops_bench --json output (one per rank count)")
    ap.add_argument("--peers", help="gpu_peers.py --json output")
    ap.add_argument("--env", help="a text file quoted as the environment")
    ap.add_argument("--ctest", help="a text file quoted as the test-suite summary")
    ap.add_argument("--title", default="GPU run")
    a = ap.parse_args(argv)

    out = [f"# {a.title}", ""]
    benches = []
    for path in a.bench:
        try:
            benches.append(load(path))
        except (OSError, ValueError) as e:
            out.append(f"- shardops_bench result {path} unreadable: {e}")
    peers = None
    if a.peers:
        try:
            peers = load(a.peers)
        except (OSError, ValueError) as e:
            out.append(f"- peers result {a.peers} unreadable: {e}")

    if benches:
        b0 = benches[0]
        out.append(
            f"Sizes: N={b0['rows']} rows, M={b0['updates']} updates, D={b0['cols']} float32 cols, "
            f"P={b0['partitions']} partitions; median of {b0['repeats']} after {b0['warmup']} warm-up.")
        out.append("")
    out += [
        "| workload | op | implementation | time ms | GB/s | device copy GB/s | vs device copy | notes |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    rows = {w: [] for w in ORDER}
    for b in benches:
        for w in b["workloads"]:
            # The bench's floor: each rank deep_copies its share of the op's bytes, all
            # ranks at once, so bytes_moved / memcpy_s is the aggregate copy bandwidth.
            copy_gbs = w["bytes_moved"] / w["memcpy_s"] / 1e9 if w["memcpy_s"] > 0 else 0.0
            pct = 100.0 * w["memcpy_s"] / w["time_s"] if w["time_s"] > 0 else 0.0
            notes = (f"local {fmt_ms(w['local_s'])} ms, exchange {fmt_ms(w['route_s'])} ms, "
                     f"{w['bytes_exchanged'] / 1e6:.1f} MB between ranks")
            rows.setdefault(w["id"], []).append(
                f"| {w['id']} | {w['op']} | shardops, {b['ranks']} rank(s), schedule {b['schedule']} | "
                f"{fmt_ms(w['time_s'])} | {w['gb_per_s']:.1f} | {copy_gbs:.1f} | {pct:.0f}% | {notes} |")
    skipped = []
    if peers:
        same = not benches or all(
            peers["args"][k] == benches[0][k2] for k, k2 in
            (("rows", "rows"), ("updates", "updates"), ("cols", "cols"), ("partitions", "partitions")))
        if not same:
            skipped.append("- note: the peers ran at other sizes than shardops_bench (see peers.json)")
        for rec in peers["peers"]:
            if "skipped" in rec:
                skipped.append(f"- {rec['peer']}: skipped ({rec['skipped']})")
                continue
            for r in rec["rows"]:
                if "error" in r:
                    rows.setdefault(r["id"], []).append(
                        f"| {r['id']} | {r['op']} | {r['peer']} | failed | - | - | - | {r['error'][:80]} |")
                    continue
                pct = 100.0 * r["gb_per_s"] / rec["copy_gb_per_s"] if rec["copy_gb_per_s"] > 0 else 0.0
                rows.setdefault(r["id"], []).append(
                    f"| {r['id']} | {r['op']} | {r['peer']} | {fmt_ms(r['time_s'])} | {r['gb_per_s']:.1f} | "
                    f"{rec['copy_gb_per_s']:.1f} | {pct:.0f}% | {rec['device']} |")
    for w in ORDER + sorted(k for k in rows if k not in ORDER):
        out += rows.get(w, [])
    out.append("")
    out.append(
        "GB/s = effective bytes (each input read once, each output written once; docs/performance.md) / time. "
        "shardops' device copy is the bench's memcpy floor (Kokkos::deep_copy in the default memory space, "
        "timed in the same run); each peer's is its own framework copying a buffer of N x D float32 in the same "
        "process. Atomic peers (index_add_, scatter_add) do not fix the order of float sums; shardops does.")
    out += [""] + skipped if skipped else []
    for label, path in (("Test suite", a.ctest), ("Environment", a.env)):
        if not path:
            continue
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError as e:
            text = f"({e})"
        out += ["", f"## {label}", "", "```", text, "```"]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
