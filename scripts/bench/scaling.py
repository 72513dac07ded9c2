#!/usr/bin/python3
"""Measures shardops' per-rank bytes, messages and memory at several rank counts and checks
the scaling model of docs/scaling.md against them.

  python3 scripts/bench/scaling.py --shardops build/apps/shardops/shardops \
      --bench build/bench/shardops_bench [--ranks 1,2,4,8,16] [--rows N] [--updates M] [--markdown FILE]

For each rank count R it runs, on the same global tensors (float32 rows of 16, int64 indices
spread uniformly over the rows):
  * `shardops gather-nd` and `shardops scatter-nd` with --report (bytes sent between ranks),
    with scripts/bench/exchange_counter.c preloaded (all-to-all calls and the messages they
    stand for, per rank);
  * `shardops_bench --ops w1,w3` at the same sizes (peak resident memory per rank, and the
    resident memory before any work, "base").
It prints the measured and predicted figures side by side, and exits 1 when a prediction is
off by more than --tolerance (default 25%). The model's formulas are model_* below; docs/scaling.md
says where each term comes from.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROW = 16 * 4  # bytes of one float32 row of 16
INDEX = 8  # one int64 coordinate
ROUTED = INDEX + ROW  # an index row and its data row, the unit both ops route
STAGE = 8 << 20  # kStreamStageBytes (src/shardops/route/ExchangePlan.cpp): scatter's rows go in rounds


def stream_rounds(m, r):
    """Rounds of the streamed row exchange: the stage holds STAGE / ROW / (R-1) rows per peer;
    a rank sends about m / R^2 rows to each peer, the largest of them about 3 standard
    deviations more."""
    per_peer = m / r / r
    cap = STAGE // ROW // (r - 1)
    return int(-(-(per_peer + 3 * per_peer ** 0.5) // cap))


def remote_fraction(r):
    """Rows whose target is on another rank, for targets spread uniformly over R equal blocks."""
    return (r - 1) / r


def gather_replicates(n, m, r):
    """shardops' Auto rule (src/shardops/ops/DistGather.cpp): params go to every rank when
    params_rows * R <= index rows."""
    return r > 1 and n * r <= m


def model_bytes(op, n, m, r):
    """Bytes sent between ranks, all ranks together."""
    if r == 1:
        return 0
    if op == "gather-nd" and gather_replicates(n, m, r):
        return n * ROW * (r - 1)  # every rank receives the params blocks it lacks
    return m * ROUTED * remote_fraction(r)  # gather: request + reply; scatter: index + update


def model_messages(op, n, m, r):
    """Point-to-point messages one rank sends per op: one per peer in each dense exchange."""
    if r == 1:
        return 0
    if op == "gather-nd":
        # replicate: one all-to-all of params blocks; route: counts, requests, replies
        return (r - 1) * (1 if gather_replicates(n, m, r) else 3)
    # counts, the routed indices, then the routed rows in rounds
    return (r - 1) * (2 + stream_rounds(m, r))


def model_peak_rss(op, n, m, r, base):
    """Peak resident bytes of one rank: base + its share of inputs and outputs + the op's plan
    and staging buffers, per index row of this rank (k = M/R of them): its target (8 B), owner
    (4 B) and plan slot (8 B), and for a remote one the routed index and row twice (the packed
    send buffer and the received one are alive together; scatter packs its rows into a stage
    of at most STAGE bytes)."""
    k, f = m / r, remote_fraction(r)
    if op == "gather-nd":
        io = (n * ROW + m * INDEX + m * ROW) / r
        if gather_replicates(n, m, r):
            return base + io + n * ROW * f  # the params blocks received
    else:
        io = (m * INDEX + m * ROW + n * ROW) / r
    if r == 1:
        return base + io  # nothing routed: the op runs where the rows are
    if op == "gather-nd":
        return base + io + 20 * k + 2 * ROUTED * k * f
    # scatter's rows are packed into a stage of at most STAGE bytes, one round at a time
    return base + io + 20 * k + 2 * INDEX * k * f + ROW * k * f + min(STAGE, ROW * k * f)


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=600)
    if p.returncode != 0:
        sys.stderr.write("$ %s\nexit %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
        raise SystemExit("scaling: a run failed")
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shardops", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--mpicc", default="mpicc")
    ap.add_argument("--ranks", default="1,2,4,8,16")
    ap.add_argument("--rows", type=int, default=262144, help="N: rows of params / of the scatter output")
    ap.add_argument("--updates", type=int, default=524288, help="M: index rows")
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    n, m = args.rows, args.updates
    ranks = [int(x) for x in args.ranks.split(",")]
    d = tempfile.mkdtemp(prefix="shardops-scaling-")
    env = dict(os.environ)
    for k, v in {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_pml": "ob1",
                 "OMPI_MCA_btl": "self,vader", "OMPI_MCA_mpi_yield_when_idle": "1", "OMP_NUM_THREADS": "1",
                 "OMP_PROC_BIND": "false"}.items():
        env.setdefault(k, v)
    try:
        counter = os.path.join(d, "exchange_counter.so")
        run([args.mpicc, "-shared", "-fPIC", "-O2", "-o", counter,
             os.path.join(os.path.dirname(os.path.abspath(__file__)), "exchange_counter.c")], env)
        rng = np.random.default_rng(1)
        src = os.path.join(d, "in.h5")
        with h5py.File(src, "w") as f:
            f["params"] = rng.standard_normal((n, 16)).astype(np.float32)
            f["idx"] = rng.integers(0, n, (m, 1)).astype(np.int64)
            f["upd"] = rng.standard_normal((m, 16)).astype(np.float32)
        rows = []
        for r in ranks:
            bench_json = os.path.join(d, "bench-%d.json" % r)
            run([args.mpiexec, "-n", str(r), "--oversubscribe", args.bench, "--rows", str(n), "--updates", str(m),
                 "--repeats", "1", "--warmup", "0", "--ops", "w1,w3", "--json", bench_json], env)
            with open(bench_json) as f:
                bench = {w["id"]: w for w in json.load(f)["workloads"]}
            for op, wid, argv in (
                    ("gather-nd", "W3", ["--params", src + ":/params", "--indices", src + ":/idx"]),
                    ("scatter-nd", "W1", ["--indices", src + ":/idx", "--updates", src + ":/upd",
                                          "--shape", "%d,16" % n])):
                counts = os.path.join(d, "counts-%s-%d" % (op, r))
                os.makedirs(counts)
                report = os.path.join(d, "report-%s-%d.json" % (op, r))
                # Inputs read, not mapped: a mapped params of a replicating gather would be
                # mapped whole on every rank and send nothing (docs/scaling.md); the model is
                # of the exchange, as across nodes.
                run([args.mpiexec, "-n", str(r), "--oversubscribe", "-x", "LD_PRELOAD=" + counter,
                     "-x", "EXCHANGE_COUNTER_DIR=" + counts, "-x", "SHARDOPS_MAP_INPUTS=0", args.shardops, op] + argv +
                    ["--out", os.path.join(d, "out-%s-%d.h5:/o" % (op, r)), "--report", report, "-q"], env)
                with open(report) as f:
                    sent = json.load(f)["bytes"]["sent_between_ranks"]
                per_rank = []
                for name in os.listdir(counts):
                    with open(os.path.join(counts, name)) as f:
                        c = json.load(f)
                    per_rank.append(c["alltoall_messages"] + c["alltoallv_messages"])
                if not per_rank and r == 1:
                    per_rank = [0]  # a job of one rank starts no MPI, so no counts: it sends nothing
                w = bench[wid]
                base = w["peak_rss_bytes"] - w["rss_op_ratio"] * w["rss_share_bytes"]
                rows.append({"ranks": r, "op": op,
                             "bytes": (sent, model_bytes(op, n, m, r)),
                             "messages": (max(per_rank), model_messages(op, n, m, r)),
                             "peak_rss": (w["peak_rss_bytes"], model_peak_rss(op, n, m, r, base)),
                             "base": base})
        bad = []
        lines = ["| ranks | op | bytes sent (MB) measured / model | messages per rank measured / model "
                 "| peak RSS per rank (MB) measured / model | base (MB) |",
                 "|---:|---|---:|---:|---:|---:|"]

        def cell(row, key, scale):
            got, want = row[key]
            if want == 0 and got == 0:
                return "0 / 0"
            err = (want - got) / got if got else float("inf")
            if abs(err) > args.tolerance:
                bad.append("%s at %d ranks: %s measured %s, model %s (%+.0f%%)" % (
                    row["op"], row["ranks"], key, got, round(want), 100 * err))
            return "%s / %s (%+.0f%%)" % (fmt(got / scale), fmt(want / scale), 100 * err)

        for row in rows:
            lines.append("| %d | %s | %s | %s | %s | %.1f |" % (
                row["ranks"], row["op"], cell(row, "bytes", 1e6), cell(row, "messages", 1),
                cell(row, "peak_rss", 2**20), row["base"] / 2**20))
        table = "\n".join(lines)
        print("N=%d rows, M=%d index rows, rows of 16 float32, int64 indices\n" % (n, m) + table)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(table + "\n")
        if bad:
            print("off by more than %.0f%%:\n  %s" % (100 * args.tolerance, "\n  ".join(bad)))
            return 1
        print("every prediction within %.0f%% of the measurement" % (100 * args.tolerance))
        return 0
    finally:
        if args.keep:
            print("kept " + d)
        else:
            shutil.rmtree(d, ignore_errors=True)


def fmt(x):
    return ("%.1f" % x) if x != int(x) else str(int(x))


if __name__ == "__main__":
    sys.exit(main())
