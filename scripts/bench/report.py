#!/usr/bin/env python3
"""Turns the raw outputs of scripts/bench/run_all.sh (one results folder) into
results.md (tables, targets met or missed) and plots (*.png, if matplotlib is there).

Usage: report.py RESULTS_DIR

Reads peers-{debian,tf}-t{1,2}.txt (the peers script run_all.sh runs, $PEERS_PY), shardops-np{1,2,4}.json
(shardops_bench), petsc-np{1,2,4}.json (petsc_sf_bench), tpetra-np{1,2,4}.json
(tpetra_bench), scaling-n*-np*.json and env.txt.
The part of results.md between the readme-table markers is what
scripts/bench/update_readme.py pastes into docs/performance.md.
"""
import glob
import json
import os
import re
import sys

OPS = [  # (workload id, op name used by peers.py and shardops_bench)
    ("W1", "scatter_nd(sum)"),
    ("W2", "tensor_scatter_update"),
    ("W3", "gather_nd"),
    ("W4", "dynamic_partition"),
    ("W5", "dynamic_stitch"),
]
SPEEDUP_TARGET = {"W1": 2.0, "W2": 1.2, "W3": 1.2, "W4": 2.0, "W5": 1.2}
LOCAL_TARGET = {"W1": 0.25, "W2": 0.40, "W3": 0.40, "W4": 0.40, "W5": 0.40}
EXCHANGE_TARGET = 1.25
RSS_TARGET = 2.5
BEGIN, END = "<!-- readme-table:begin -->", "<!-- readme-table:end -->"


def family(peer):
    return {"numpy": "NumPy", "torch": "PyTorch", "tf": "TensorFlow"}.get(peer.split()[0], peer.split()[0])


def read_peers(path, python):
    """peers.py prints `op peer median_s GB/s` rows after a memcpy line."""
    rows, memcpy = [], None
    if not os.path.exists(path):
        return rows, memcpy
    for line in open(path):
        m = re.match(r"memcpy .*: ([0-9.]+) GB/s", line)
        if m:
            memcpy = float(m.group(1))
            continue
        # Not by column: a peer name can be longer than its 24-character column.
        m = re.match(r"^(\S+)\s+(.+?)\s+([0-9.]+)\s+([0-9.]+)\s*$", line)
        if m and m.group(1) in [o for _, o in OPS]:
            rows.append({"op": m.group(1), "peer": m.group(2), "family": family(m.group(2)), "python": python,
                         "s": float(m.group(3)), "gbs": float(m.group(4))})
    return rows, memcpy


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ms(s):
    return "-" if s is None else f"{s * 1e3:.1f}"


def best(peers, op):
    cands = [p for p in peers if p["op"] == op]
    return min(cands, key=lambda p: p["s"]) if cands else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    peers = {}
    peer_memcpy = {}
    for t in (1, 2):
        peers[t] = []
        for py in ("debian", "tf"):
            rows, mc = read_peers(os.path.join(out, f"peers-{py}-t{t}.txt"), py)
            peers[t] += rows
            if mc:
                peer_memcpy[(py, t)] = mc
    sh = {np: load_json(os.path.join(out, f"shardops-np{np}.json")) for np in (1, 2, 4)}
    pe = {np: load_json(os.path.join(out, f"petsc-np{np}.json")) for np in (1, 2, 4)}
    wl = {np: ({w["id"]: w for w in d["workloads"]} if d else {}) for np, d in sh.items()}
    pw = {np: ({w["id"]: w for w in d["workloads"]} if d else {}) for np, d in pe.items()}
    tp = {np: load_json(os.path.join(out, f"tpetra-np{np}.json")) for np in (1, 2, 4)}
    tw = {np: ({w["id"]: w for w in d["workloads"]} if d else {}) for np, d in tp.items()}
    env = open(os.path.join(out, "env.txt")).read() if os.path.exists(os.path.join(out, "env.txt")) else ""
    loads = [float(x) for x in re.findall(r"load ([0-9.]+),", env)]
    quick = "mode quick" in env

    md = []
    add = md.append
    add(f"# shardops benchmarks: {os.path.basename(os.path.abspath(out))}\n")
    if quick:
        add("**Quick mode: small sizes, few repeats. These numbers check the pipeline only.**\n")
    cpu = re.search(r"Model name:\s*(.*)", env)
    add(f"Machine: {cpu.group(1).strip() if cpu else '?'}, {os.cpu_count()} cores. "
        f"1-minute load average before the steps: max {max(loads) if loads else '?'}, "
        f"min {min(loads) if loads else '?'} (see env.txt; above 1 means other work shared the cores).\n")
    if sh.get(1):
        d = sh[1]
        add(f"Workloads (docs/performance.md): N = {d['rows']} rows, M = {d['updates']} index rows, D = {d['cols']} float32, "
            f"P = {d['partitions']}; median of {d['repeats']} after {d['warmup']} warm-up; "
            f"shardops time = max over ranks. Peers: run_all.sh's PEERS_PY (median of 5).\n")

    # ---- README table: single process / one node summary
    add(BEGIN)
    add("| workload | shardops 1 rank ms | best peer, 1 thread | speedup | shardops 2 ranks ms | best peer, 2 threads | speedup | memcpy ceiling ms (1 rank) | first call ms, 1 / 2 ranks |")
    add("|---|---:|---|---:|---:|---|---:|---:|---:|")
    for w, op in OPS:
        s1 = wl[1].get(w)
        s2 = wl[2].get(w)
        b1, b2 = best(peers[1], op), best(peers[2], op)
        sp1 = f"{b1['s'] / s1['time_s']:.2f}x" if (s1 and b1) else "-"
        sp2 = f"{b2['s'] / s2['time_s']:.2f}x" if (s2 and b2) else "-"
        add(f"| {w} {op} | {ms(s1 and s1['time_s'])} | {ms(b1 and b1['s'])} ({b1['peer'] if b1 else '-'}) | {sp1} | "
            f"{ms(s2 and s2['time_s'])} | {ms(b2 and b2['s'])} ({b2['peer'] if b2 else '-'}) | {sp2} | "
            f"{ms(s1 and s1['memcpy_s'])} | {ms(s1 and s1.get('cold_s'))} / {ms(s2 and s2.get('cold_s'))} |")
    add("")
    add("| workload | ranks | shardops ms | its exchange ms | of it in MPI calls ms | raw Alltoallv ms | grouped + Alltoallv ms "
        "| PetscSF set-up + op ms | PetscSF op only ms | Tpetra set-up + op ms | Tpetra op only ms |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w, op in OPS[:1] + OPS[2:3]:
        for np in (1, 2, 4):
            s, p, t = wl[np].get(w), pw[np].get(w), tw[np].get(w)
            if not s and not p and not t:
                continue
            add(f"| {w} {op} | {np} | {ms(s and s['time_s'])} | {ms(s and s['route_s'])} | {ms(s and s.get('mpi_s'))} | "
                f"{ms(s and s['alltoallv_s']) if s and s['alltoallv_s'] > 0 else '-'} | "
                f"{ms(s and s.get('grouped_s')) if s and s.get('grouped_s', 0) > 0 else '-'} | "
                f"{ms(p and p['time_s'])} | {ms(p and p['op_s'])} | {ms(t and t['time_s'])} | {ms(t and t['op_s'])} |")
    add(END)
    add("")
    add("grouped + Alltoallv: the raw Alltoallv after copying the same bytes from 64-byte rows whose peers (the "
        "rank's own too) alternate at random into per-peer order, which row goes where worked out before the clock "
        "starts: the copy alone, the least an op whose rows go to random ranks must add (the raw Alltoallv starts "
        "from bytes already grouped).\n")
    add("PetscSF and Tpetra rows are 8 doubles (64 B: PETSc reduces only on PetscScalar, Debian's Tpetra is built for "
        "double only); shardops rows are 16 float32 (64 B). Tpetra's op includes summing (W1) or expanding (W3) the "
        "rank's duplicate indices locally (a Tpetra Map lists a row once per rank). "
        "4 ranks run on 2 cores (oversubscribed). shardops times are repeated calls, which reuse the memory earlier "
        "calls freed (core/HostMemory.hpp; TensorFlow's allocator does the same for its peer times); 'first call' "
        "starts with nothing kept, as the one op of a `shardops run` process does.\n")

    # ---- per-op tables
    add("## Per op: shardops vs TensorFlow / NumPy / PyTorch vs memcpy ceiling\n")
    for w, op in OPS:
        add(f"### {w} {op}\n")
        add("| who | 1 thread / rank ms | GB/s | 2 threads / ranks ms | GB/s |")
        add("|---|---:|---:|---:|---:|")
        s1, s2 = wl[1].get(w), wl[2].get(w)
        if s1 or s2:
            add(f"| **shardops** (dist op) | {ms(s1 and s1['time_s'])} | {s1['gb_per_s'] if s1 else 0:.2f} | "
                f"{ms(s2 and s2['time_s'])} | {s2['gb_per_s'] if s2 else 0:.2f} |")
        names = sorted({(p["peer"], p["python"]) for t in (1, 2) for p in peers[t] if p["op"] == op})
        for name, py in names:
            r = [next((p for p in peers[t] if p["op"] == op and p["peer"] == name and p["python"] == py), None) for t in (1, 2)]
            add(f"| {name} [{py} python] | {ms(r[0] and r[0]['s'])} | {r[0]['gbs'] if r[0] else 0:.2f} | "
                f"{ms(r[1] and r[1]['s'])} | {r[1]['gbs'] if r[1] else 0:.2f} |")
        if s1:
            add(f"| memcpy ceiling (Kokkos deep_copy of the same bytes) | {ms(s1['memcpy_s'])} | "
                f"{s1['bytes_moved'] / s1['memcpy_s'] / 1e9:.2f} | {ms(s2 and s2['memcpy_s'])} | "
                f"{(s2['bytes_moved'] / s2['memcpy_s'] / 1e9) if s2 else 0:.2f} |")
        add("")
    if peer_memcpy:
        add("peers.py's own copy figure (NumPy copying a fresh 512 MiB array, page faults included): " +
            ", ".join(f"{py} python {t} thread(s) {v:.1f} GB/s" for (py, t), v in sorted(peer_memcpy.items())) + ".\n")

    # ---- shardops detail
    add("## shardops detail (shardops_bench)\n")
    for np in (1, 2, 4):
        path = os.path.join(out, f"shardops-np{np}.md")
        if os.path.exists(path):
            add(f"### {np} rank(s)\n")
            add("".join(l for l in open(path) if l.startswith("|")))
    for np in (1, 2, 4):
        path = os.path.join(out, f"petsc-np{np}.md")
        if os.path.exists(path):
            add(f"### PetscSF, {np} rank(s)\n")
            add("".join(l for l in open(path) if l.startswith("|")))
    for np in (1, 2, 4):
        path = os.path.join(out, f"tpetra-np{np}.md")
        if os.path.exists(path):
            add(f"### Tpetra, {np} rank(s)\n")
            lines = open(path).readlines()
            add("".join(l for l in lines if l.startswith("|")))
            add("".join(l for l in lines if l.startswith("set-up parts")))  # where its set-up time goes

    # ---- targets
    add("## Targets (issue 6)\n")
    add("| target | measured | met |")
    add("|---|---|---|")

    def target(text, value, ok):
        add(f"| {text} | {value} | {'yes' if ok else '**no**'} |")

    for w, op in OPS:
        s1, b1 = wl[1].get(w), best(peers[1], op)
        if s1 and b1:
            sp = b1["s"] / s1["time_s"]
            target(f"{w} 1 rank >= {SPEEDUP_TARGET[w]}x best 1-thread peer", f"{sp:.2f}x ({b1['peer']})", sp >= SPEEDUP_TARGET[w])
    for w, op in OPS:
        s2, b2 = wl[2].get(w), best(peers[2], op)
        if s2 and b2:
            sp = b2["s"] / s2["time_s"]
            target(f"{w} 2 ranks >= best 2-thread peer", f"{sp:.2f}x ({b2['peer']})", sp >= 1.0)
    for np in (1, 2):
        for w, op in OPS:
            s = wl[np].get(w)
            if s and s["local_s"] > 0:
                frac = s["memcpy_s"] / s["local_s"]
                target(f"{w} {np} rank(s): local work >= {LOCAL_TARGET[w]:.0%} of memcpy bandwidth",
                       f"{frac:.0%} (local {ms(s['local_s'])} ms, memcpy {ms(s['memcpy_s'])} ms)", frac >= LOCAL_TARGET[w])
    for np in (2, 4):
        for w, op in OPS:
            s = wl[np].get(w)
            if s and s["alltoallv_s"] > 0:
                r = s["route_s"] / s["alltoallv_s"]
                g = s.get("grouped_s", 0)
                grouped = (f"; {s['route_s'] / g:.2f}x the grouped floor, {ms(g)} ms" if g > 0 else "")
                target(f"{w} {np} ranks: exchange <= {EXCHANGE_TARGET}x raw Alltoallv",
                       f"{r:.2f}x (route {ms(s['route_s'])} ms, of it in MPI calls {ms(s.get('mpi_s'))} ms, "
                       f"Alltoallv {ms(s['alltoallv_s'])} ms{grouped})", r <= EXCHANGE_TARGET)
    for name, peer in (("PetscSF", pw), ("Tpetra", tw)):
        for np in (1, 2, 4):
            for w in ("W1", "W3"):
                s, p = wl[np].get(w), peer[np].get(w)
                if s and p:
                    target(f"{w} {np} rank(s): faster than {name} (set-up included)",
                           f"{ms(s['time_s'])} vs {ms(p['time_s'])} ms", s["time_s"] < p["time_s"])
    for np in (1, 2, 4):
        for w, op in OPS:
            s = wl[np].get(w)
            if s:
                target(f"{w} {np} rank(s): peak RSS <= {RSS_TARGET}x share of inputs+outputs",
                       f"{s['rss_ratio']:.2f}x ({s['peak_rss_bytes'] / 2**20:.0f} MB; less the process's resident "
                       f"memory before any workload: {s.get('rss_op_ratio', 0):.2f}x)", s["rss_ratio"] <= RSS_TARGET)
    add("")

    # ---- plots
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        add("(matplotlib not installed: no plots)\n")
        plt = None
    if plt is not None:
        plots = []
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
        for ax, t in zip(axes, (1, 2)):
            labels = [w for w, _ in OPS]
            series = {f"shardops ({t} rank{'s' if t > 1 else ''})": [wl[t].get(w, {}).get("time_s") for w, _ in OPS]}
            for fam in ("NumPy", "PyTorch", "TensorFlow"):
                series[fam] = [min([p["s"] for p in peers[t] if p["op"] == op and p["family"] == fam] or [None],
                                   key=lambda v: v if v is not None else 1e9) for _, op in OPS]
            series["memcpy ceiling"] = [wl[t].get(w, {}).get("memcpy_s") for w, _ in OPS]
            width = 0.8 / len(series)
            for k, (name, vals) in enumerate(series.items()):
                xs = [i + k * width for i in range(len(labels))]
                ax.bar(xs, [v * 1e3 if v else 0 for v in vals], width, label=name)
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
            ax.set_xticklabels([f"{w}\n{op}" for w, op in OPS], fontsize=8)
            ax.set_yscale("log")
            ax.set_title(f"{t} thread{'s' if t > 1 else ''} / rank{'s' if t > 1 else ''}")
            ax.set_ylabel("median time, ms (log)")
            ax.grid(axis="y", alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.suptitle("Standard workloads: time per op per peer (lower is better)")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "ops.png"), dpi=110)
        plots.append("ops.png")
        plt.close(fig)

        scaling = {}
        for path in glob.glob(os.path.join(out, "scaling-n*-np*.json")):
            m = re.search(r"scaling-n(\d+)-np(\d+)\.json", path)
            d = load_json(path)
            if m and d:
                for w in d["workloads"]:
                    scaling.setdefault((w["id"], int(m.group(2))), []).append((int(m.group(1)), w["time_s"], w["memcpy_s"]))
        if scaling:
            fig, axes = plt.subplots(1, len(OPS), figsize=(16, 3.8))
            for ax, (w, op) in zip(axes, OPS):
                for np_ in (1, 2):
                    pts = sorted(scaling.get((w, np_), []))
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] * 1e3 for p in pts], "o-", label=f"shardops {np_} rank(s)")
                        ax.plot([p[0] for p in pts], [p[2] * 1e3 for p in pts], "--", alpha=0.6, label=f"memcpy {np_} rank(s)")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_title(f"{w} {op}", fontsize=9)
                ax.set_xlabel("N rows (M = 2N)")
                ax.grid(alpha=0.3)
            axes[0].set_ylabel("time, ms")
            axes[0].legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(os.path.join(out, "scaling.png"), dpi=110)
            plots.append("scaling.png")
            plt.close(fig)

        if any(pw[np] for np in pw) or any(tw[np] for np in tw):
            fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
            for ax, w in zip(axes, ("W1", "W3")):
                nps = [np_ for np_ in (1, 2, 4) if wl[np_].get(w)]
                ax.plot(nps, [wl[n][w]["time_s"] * 1e3 for n in nps], "o-", label="shardops")
                pn = [np_ for np_ in (1, 2, 4) if pw[np_].get(w)]
                ax.plot(pn, [pw[n][w]["time_s"] * 1e3 for n in pn], "s-", label="PetscSF set-up + op")
                ax.plot(pn, [pw[n][w]["op_s"] * 1e3 for n in pn], "s--", label="PetscSF op only")
                tn = [np_ for np_ in (1, 2, 4) if tw[np_].get(w)]
                ax.plot(tn, [tw[n][w]["time_s"] * 1e3 for n in tn], "D-", label="Tpetra set-up + op")
                ax.plot(tn, [tw[n][w]["op_s"] * 1e3 for n in tn], "D--", label="Tpetra op only")
                an = [np_ for np_ in nps if wl[np_][w]["alltoallv_s"] > 0]
                ax.plot(an, [wl[n][w]["alltoallv_s"] * 1e3 for n in an], "^:", label="raw Alltoallv")
                ax.set_xticks([1, 2, 4])
                ax.set_xlabel("ranks (4 = oversubscribed)")
                ax.set_ylabel("time, ms")
                ax.set_title(dict(OPS)[w])
                ax.grid(alpha=0.3)
            axes[0].legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(os.path.join(out, "distributed.png"), dpi=110)
            plots.append("distributed.png")
            plt.close(fig)
        add("## Plots\n")
        for p in plots:
            add(f"![{p}]({p})\n")

    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"report.py: wrote {os.path.join(out, 'results.md')}")


if __name__ == "__main__":
    main()
