#!/usr/bin/python3
"""The standard workloads W1-W5 (docs/performance.md: float32 rows of D=16, N=2^20 rows, M=2^21
random index rows, P=16) called from Python, against NumPy, PyTorch and TensorFlow on the
same arrays in one process and against the C++ op (shardops_bench: the call overhead).

    mpirun -n R python3 scripts/bench/python_bench.py [--build build] [--repeats 7] [--ops w1,...] [--peers]
    python3 scripts/bench/python_bench.py --table   # runs R = 1 and 2 and prints docs/python.md's table

Times are medians over the repeats (after one warm-up) of the slowest rank's time per call;
--table alternates the Python and C++ runs --rounds times and gives the median of the rounds;
the C++ op runs on its default inputs (the library's memory: 64-byte aligned) and on inputs
placed as NumPy places arrays (`shardops_bench --inputs numpy`: malloc'ed, 16-byte aligned,
huge pages advised), so that each Python call is compared with the C++ op on the same layout.
It also prints each call on NumPy's arrays split, in the same process, into the library's
op (shardops._shardops._last_op_seconds()) and what the binding adds around it.
Each rank makes the same global arrays (one seed) and passes its balanced block. --peers
(rank 0, R = 1) also times NumPy and PyTorch here and TensorFlow in $SHARDOPS_TF_VENV (the
same formulations as run_all.sh's one-process peers).

Heat (distributed arrays over MPI) is the distributed peer for W3 (x[i]) and W2 (x[i] = u)
when $SHARDOPS_HEAT_VENV (default .venv-heat) has it; --table runs it at 1 and 2 ranks and
checks its answer against NumPy's. Heat 1.3.1 needs torch < 2.0.2, which PyPI's wheels for
Python 3.11 no longer meet, so it runs on Debian's torch:
    apt-get install python3-torch python3-torchvision
    python3 -m venv --system-site-packages .venv-heat && .venv-heat/bin/pip install --no-deps heat==1.3.1
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
N, M, D, P = 1 << 20, 1 << 21, 16, 16
NAMES = {"w1": "W1 scatter_nd(sum)", "w2": "W2 tensor_scatter_update", "w3": "W3 gather_nd",
         "w4": "W4 dynamic_partition", "w5": "W5 dynamic_stitch"}


def _mix(x):
    """splitmix64's finaliser on a uint64 array (bench/common/input_hash.h); NumPy's uint64
    arithmetic wraps as C's does."""
    x = x + np.uint64(0x9e3779b97f4a7c15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
    return x ^ (x >> np.uint64(31))


def bench_hash(stream, count, seed=7):
    """Values 0..count-1 of shardops_bench's input stream (input_hash.h's bench_hash): the
    same inputs as the C++ op is timed on, so the two times differ only by the call."""
    key = _mix(np.array([seed * 4 + stream], np.uint64))[0]
    return _mix(np.arange(count, dtype=np.uint64) ^ key)


def uniform(h):
    """shardops_bench's float in [-1, 1) from a hash (exact in float32)."""
    return (h >> np.uint64(40)).astype(np.float32) * np.float32(2.0 / 16777216.0) - np.float32(1.0)


def workload_arrays():
    """shardops_bench's inputs (its streams 1-4: index, update, base, partition; seed 7)."""
    idx = (bench_hash(1, M) % np.uint64(N)).astype(np.int64)
    upd = uniform(bench_hash(2, M * D)).reshape(M, D)
    base = uniform(bench_hash(3, N * D)).reshape(N, D)
    parts = (bench_hash(4, N) % np.uint64(P)).astype(np.int32)
    perm_idx = [np.nonzero(parts == p)[0].astype(np.int32) for p in range(P)]
    return idx, upd, base, parts, perm_idx, [base[i] for i in perm_idx]


def timed(fn, repeats, comm=None, library_seconds=None):
    """The median over the repeats of the slowest rank's time per call, the freeing of its
    output included (as shardops_bench counts it). With library_seconds (a shardops call:
    what the last call spent in the library's op, shardops._shardops._last_op_seconds), also
    the median of each call's (call - library), the call timed up to its return: the time
    the binding adds."""
    fn()
    whole, added = [], []
    for _ in range(repeats):
        if comm is not None:
            comm.Barrier()
        t0 = time.perf_counter()
        result = fn()
        t1 = time.perf_counter()
        del result
        t2 = time.perf_counter()
        lib = library_seconds() if library_seconds else 0.0
        if comm is not None:
            t2, t1, lib = (comm.allreduce(x, op=MPI_MAX) for x in (t2 - t0, t1 - t0, lib))
        else:
            t2, t1 = t2 - t0, t1 - t0
        whole.append(t2)
        added.append(t1 - lib)
    if library_seconds is None:
        return statistics.median(whole)
    return statistics.median(whole), statistics.median(added)


def shardops_times(repeats, align=False, overhead=None, ops=tuple(NAMES)):
    """align: the inputs copied to 64-byte-aligned arrays first (shardops.aligned), as the
    C++ op's buffers are; else NumPy's own arrays (16-byte-aligned). overhead: a dict that
    gets, per workload, the median time a call spends outside the library's op."""
    import shardops
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    global MPI_MAX
    MPI_MAX = MPI.MAX
    idx, upd, base, parts, _, _ = workload_arrays()
    mine = lambda a: a[slice(*shardops.row_block(a.shape[0], comm))]
    c = comm if comm.Get_size() > 1 else None
    i2, u, b, pt = mine(idx.reshape(-1, 1)), mine(upd), mine(base), mine(parts)
    if align:
        i2, u, b, pt = map(shardops.aligned, (i2, u, b, pt))
    # W5 is W4's inverse, as in shardops_bench: W4's outputs (where their rows were) stitched
    # back with the global positions they came from.
    pd = shardops.dynamic_partition(b, pt, P, comm=c)
    start = shardops.row_block(N, comm)[0]
    pi = [(start + np.nonzero(pt == p)[0]).astype(np.int32) for p in range(P)]
    calls = {
        "w1": lambda: shardops.scatter_nd(i2, u, (N, D), comm=c),
        "w2": lambda: shardops.tensor_scatter_nd_update(b, i2, u, comm=c),
        "w3": lambda: shardops.gather_nd(b, i2, comm=c),
        "w4": lambda: shardops.dynamic_partition(b, pt, P, comm=c),
        "w5": lambda: shardops.dynamic_stitch(pi, pd, comm=c),
    }
    calls = {w: f for w, f in calls.items() if w in ops}
    if overhead is None:
        return {w: timed(f, repeats, comm) for w, f in calls.items()}
    out = {}
    for w, f in calls.items():
        out[w], overhead[w] = timed(f, repeats, comm, shardops._shardops._last_op_seconds)
    return out


def peer_times(repeats):
    """NumPy and PyTorch (Debian) here; Heat if it imports."""
    idx, upd, base, parts, perm_idx, perm_dat = workload_arrays()
    out = {}

    def np_part():
        order = np.argsort(parts, kind="stable")
        return np.split(base[order], np.cumsum(np.bincount(parts, minlength=P))[:-1])

    def np_stitch():
        o = np.empty_like(base)
        for i, d in zip(perm_idx, perm_dat):
            o[i] = d
        return o
    cases = {"w1": ("numpy add.at", lambda: np.add.at(np.zeros((N, D), np.float32), idx, upd)),
             "w2": ("numpy fancy assign", lambda: np.copy(base).__setitem__(idx, upd)),
             "w3": ("numpy take", lambda: np.take(base, idx, axis=0)),
             "w4": ("numpy argsort+split", np_part), "w5": ("numpy fancy assign", np_stitch)}
    for w, (name, f) in cases.items():
        out.setdefault(w, {})[name] = timed(f, repeats)
    try:
        import torch
        torch.set_num_threads(1)
        ti, tu, tb, tp = map(torch.from_numpy, (idx, upd, base, parts))
        tpi = [torch.from_numpy(i.astype(np.int64)) for i in perm_idx]
        tpd = [torch.from_numpy(d) for d in perm_dat]

        def t_stitch():
            o = torch.empty_like(tb)
            for i, d in zip(tpi, tpd):
                o.index_copy_(0, i, d)
            return o
        tcases = {"w1": ("torch index_put_(acc)", lambda: torch.zeros(N, D).index_put_((ti,), tu, accumulate=True)),
                  "w2": ("torch index_copy_", lambda: tb.clone().index_copy_(0, ti, tu)),
                  "w3": ("torch index_select", lambda: torch.index_select(tb, 0, ti)),
                  "w4": ("torch argsort+split", lambda: torch.split(tb[torch.argsort(tp, stable=True)],
                                                                    torch.bincount(tp, minlength=P).tolist())),
                  "w5": ("torch index_copy_", t_stitch)}
        for w, (name, f) in tcases.items():
            out[w][name] = timed(f, repeats)
    except ImportError:
        pass
    return out


def tf_times(repeats):
    """Run by the TensorFlow venv's python (--tf-peer)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    idx, upd, base, parts, perm_idx, perm_dat = workload_arrays()
    i2 = tf.constant(idx.reshape(-1, 1))
    u, b, pt = tf.constant(upd), tf.constant(base), tf.constant(parts)
    pi, pd = [tf.constant(a) for a in perm_idx], [tf.constant(a) for a in perm_dat]
    cases = {"w1": lambda: tf.scatter_nd(i2, u, (N, D)), "w2": lambda: tf.tensor_scatter_nd_update(b, i2, u),
             "w3": lambda: tf.gather_nd(b, i2), "w4": lambda: tf.dynamic_partition(b, pt, P),
             "w5": lambda: tf.dynamic_stitch(pi, pd)}
    return {w: {"tf " + n: timed(f, repeats)} for w, f, n in
            [(w, f, {"w1": "scatter_nd", "w2": "tensor_scatter_nd_update", "w3": "gather_nd",
                     "w4": "dynamic_partition", "w5": "dynamic_stitch"}[w]) for w, f in cases.items()]}


def heat_times(repeats, out_path):
    """Run under mpirun by the Heat venv's python (--heat-peer): W3 and W2 with Heat, the
    index and updates replicated (split=None) and the tensor split by rows, as Heat's
    indexing takes them; each checked against NumPy (a wrong answer or an error is reported
    instead of a time)."""
    import heat as ht
    from mpi4py import MPI
    global MPI_MAX
    MPI_MAX = MPI.MAX
    comm = MPI.COMM_WORLD
    idx, upd, base, _, _, _ = workload_arrays()
    x, i, u = ht.array(base, split=0), ht.array(idx, split=None), ht.array(upd, split=None)
    result = {}

    def case(w, name, call, expected):
        try:
            t = timed(call, repeats, comm)
            got = call().numpy()
            result[w] = {name: t if np.array_equal(got, expected) else "wrong answer"}
        except Exception as e:  # Heat's failure is the result here, reported with its type
            result[w] = {name: "fails (%s)" % type(e).__name__}

    def update():
        z = x.copy()
        z[i] = u
        return z
    expected = base.copy()
    expected[idx] = upd  # NumPy: the last of duplicate indices wins, as TensorScatterUpdate's CPU kernel
    case("w3", "heat x[i]", lambda: x[i], base[idx])
    case("w2", "heat x[i] = u", update, expected)
    if comm.Get_rank() == 0:
        with open(out_path, "w") as f:
            json.dump(result, f)


def heat_table(repeats, d):
    """{ranks: {workload: {name: seconds or what went wrong}}} for 1 and 2 ranks, or {}."""
    venv = os.environ.get("SHARDOPS_HEAT_VENV", os.path.join(REPO, ".venv-heat"))
    python = os.path.join(venv, "bin", "python")
    if not os.access(python, os.X_OK):
        return {}
    out = {}
    for np_ in (1, 2):
        path = os.path.join(d, "heat%d.json" % np_)
        mpirun(np_, [python, __file__, "--heat-peer", path, "--repeats", str(repeats)])
        with open(path) as f:
            out[np_] = json.load(f)
    return out


def mpirun(np_, args, env=None):
    cmd = ["mpirun", "-n", str(np_), "--oversubscribe", "--allow-run-as-root"] + args
    env = dict(os.environ, OMPI_MCA_pml="ob1", OMPI_MCA_btl="self,vader", OMP_NUM_THREADS="1", **(env or {}))
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True, env=env).stdout


def table(build, repeats, rounds):
    """Python and the C++ op alternate, rounds times; each gives the median of its rounds (one
    process each: a process's memory placement moves its times by several percent, which the
    rounds average out) with their range. The C++ op runs
    twice a round: on inputs in the library's memory (as the aligned Python call's) and on
    inputs placed as NumPy places arrays (shardops_bench --inputs numpy, as the call on
    NumPy's arrays): the call overhead is each Python call against the C++ op on the same
    layout."""
    rows = {np_: {"python": {}, "python_aligned": {}, "cpp": {}, "cpp_numpy": {}, "split": {}} for np_ in (1, 2)}
    # Every round's time, per workload: the table gives their median and range.
    def keep(into, times):
        for w, t in times.items():
            into.setdefault(w, []).append(t)

    bench = os.path.join(build, "bench", "shardops_bench")
    with tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            for np_ in (1, 2):
                out = os.path.join(d, "py%d.json" % np_)
                mpirun(np_, [sys.executable, __file__, "--json", out, "--repeats", str(repeats)] +
                       (["--peers"] if np_ == 1 and r == 0 else []),
                       env={"PYTHONPATH": os.path.join(build, "python")})
                with open(out) as f:
                    got = json.load(f)
                keep(rows[np_]["python"], got["python"])
                keep(rows[np_]["python_aligned"], got["python_aligned"])
                # The call and what the binding added to it, from the round of the fastest call.
                for w, t in got["python"].items():
                    if w not in rows[np_]["split"] or t < rows[np_]["split"][w][0]:
                        rows[np_]["split"][w] = (t, got["overhead"][w])
                if "peers" in got:
                    rows[np_]["peers"] = got["peers"]
                for key, inputs in (("cpp", "library"), ("cpp_numpy", "numpy")):
                    cpp = os.path.join(d, "cpp%d.json" % np_)
                    mpirun(np_, [bench, "--repeats", str(repeats), "--inputs", inputs, "--json", cpp])
                    with open(cpp) as f:
                        keep(rows[np_][key], {w["id"].lower(): w["time_s"] for w in json.load(f)["workloads"]})
        tf_python = os.path.join(os.environ.get("SHARDOPS_TF_VENV", os.path.join(REPO, ".venv-tf")), "bin", "python")
        peers = rows[1].get("peers", {})
        if os.access(tf_python, os.X_OK):
            tf_out = os.path.join(d, "tf.json")
            subprocess.run([tf_python, __file__, "--tf-peer", tf_out, "--repeats", str(repeats)], check=True,
                           env=dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3"))
            with open(tf_out) as f:
                for w, v in json.load(f).items():
                    peers.setdefault(w, {}).update(v)
        heat = heat_table(repeats, d)
    print("| workload | Python 1 rank (ms) | Python 2 ranks (ms) | best in-process peer (ms) |"
          " Python 1 / 2 ranks vs best peer |")
    print("|---|---|---|---|---|")
    for w, name in NAMES.items():
        best = min(peers.get(w, {}).items(), key=lambda kv: kv[1], default=(None, None))
        p1, p2 = statistics.median(rows[1]["python"][w]), statistics.median(rows[2]["python"][w])
        peer = "%.1f (%s)" % (best[1] * 1e3, best[0]) if best[0] else "-"
        speed = "%.2fx / %.2fx" % (best[1] / p1, best[1] / p2) if best[0] else "-"
        print("| %s | %.1f | %.1f | %s | %s |" % (name, p1 * 1e3, p2 * 1e3, peer, speed))
    print("\nThe Python call against the C++ op (shardops_bench) on inputs laid out alike: NumPy's"
          " arrays against the C++ op's inputs placed as NumPy places them (--inputs numpy), and"
          " 64-byte-aligned arrays in the library's memory (shardops.aligned) against its default"
          " inputs. Each entry is the median of the rounds' times, with the fastest and slowest"
          " round: the same program on the same inputs moves that much from one process to the"
          " next. *Added by the binding*: the call on NumPy's arrays up to its return less the"
          " library's op inside it, in the same process, the round of the fastest call.\n")
    print("| workload | ranks | Python, NumPy's arrays (ms) | C++, NumPy-like inputs (ms) | Python / C++ |"
          " Python, aligned (ms) | C++, library inputs (ms) | Python / C++ | added by the binding |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios, added_most, spreads = [], [], []
    med = statistics.median
    cell = lambda v: "%.1f (%.1f-%.1f)" % (med(v) * 1e3, min(v) * 1e3, max(v) * 1e3)
    for w, name in NAMES.items():
        for np_ in (1, 2):
            rw = rows[np_]
            p, cn, a, c = rw["python"][w], rw["cpp_numpy"][w], rw["python_aligned"][w], rw["cpp"][w]
            t, added = rw["split"][w]
            ratios += [med(p) / med(cn), med(a) / med(c)]
            spreads += [max(v) / min(v) for v in (cn, c)]
            added_most.append((added / t, "%s at %d rank(s)" % (name, np_)))
            print("| %s | %d | %s | %s | %+.1f%% | %s | %s | %+.1f%% | %.2f ms (%.1f%%) |" % (
                name, np_, cell(p), cell(cn), 100 * (med(p) / med(cn) - 1), cell(a), cell(c),
                100 * (med(a) / med(c) - 1), added * 1e3, 100 * added / t))
    share, at = max(added_most)
    print("\nThe most the binding adds to a call: %.1f%% (%s); target: the Python call within 5%% of the"
          " C++ op. Between processes, on like layouts: Python / C++ from %+.1f%% to %+.1f%%, %+.1f%% on"
          " average over the %d entries, while the C++ op's own rounds spread by up to %.0f%%"
          " (slowest over fastest)." % (
              100 * share, at, 100 * (min(ratios) - 1), 100 * (max(ratios) - 1),
              100 * (statistics.mean(ratios) - 1), len(ratios), 100 * (max(spreads) - 1)))
    print("\nAll peers (ms, one process, one thread): " + "; ".join(
        "%s: %s" % (w, ", ".join("%s %.1f" % (n, t * 1e3) for n, t in sorted(v.items())))
        for w, v in sorted(peers.items())))
    if heat:
        fmt = lambda v: "%.1f ms" % (v * 1e3) if isinstance(v, float) else v
        print("\nHeat (distributed peer): " + "; ".join(
            "%d rank(s) %s: %s" % (np_, w, ", ".join("%s %s" % (n, fmt(v)) for n, v in sorted(per.items())))
            for np_, byw in sorted(heat.items()) for w, per in sorted(byw.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--ops", default=",".join(NAMES), help="(under mpirun) the workloads to time, e.g. w3")
    ap.add_argument("--json", help="(under mpirun) write the times here")
    ap.add_argument("--peers", action="store_true")
    ap.add_argument("--tf-peer", help="(TensorFlow's python) write TensorFlow's times here")
    ap.add_argument("--heat-peer", help="(Heat's python, under mpirun) write Heat's times here")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--rounds", type=int, default=2, help="(--table) alternations of Python and C++")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    a = ap.parse_args()
    if a.tf_peer:
        with open(a.tf_peer, "w") as f:
            json.dump(tf_times(a.repeats), f)
        return
    if a.heat_peer:
        heat_times(a.repeats, a.heat_peer)
        return
    if a.table:
        table(os.path.abspath(a.build), a.repeats, a.rounds)
        return
    overhead = {}
    ops = a.ops.split(",")
    unknown = [w for w in ops if w not in NAMES]
    if unknown:
        ap.error("unknown workload(s) %s: choose from %s" % (", ".join(unknown), ",".join(NAMES)))
    result = {"python": shardops_times(a.repeats, overhead=overhead, ops=ops),
              "python_aligned": shardops_times(a.repeats, align=True, ops=ops), "overhead": overhead}
    from mpi4py import MPI
    if MPI.COMM_WORLD.Get_rank() == 0:
        if a.peers:
            result["peers"] = peer_times(a.repeats)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(result, f)
        else:
            print(json.dumps(result, indent=1))


MPI_MAX = None
if __name__ == "__main__":
    main()
