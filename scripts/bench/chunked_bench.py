#!/usr/bin/python3
"""Chunked datasets as whole jobs: the layouts detectors and h5py's chunked writes give.

Inputs (made once in --work, with h5py):
  - stack: F frames of 256 x 256 uint16, one frame per chunk (a detector's image stack), and a
    partition id per frame; stack_gzip: the same frames compressed (gzip level 1);
  - fine: 2^18 rows of shape [2,2,2,2,2,2,2,2] int8 in chunks of 1024 rows (many dimensions,
    short innermost runs);
  - columns: 2^20 rows of 16 float32 in chunks of 4096 rows x 1 column (chunks across rows).
Jobs, each timed as the whole `mpirun -n R shardops ...` process and as an h5py + NumPy
script doing the same (read, op, write with fsync; timed after its imports, which favours the
script), interleaved over
--reps repetitions, medians printed as a markdown table with shardops' read and write phases
from its --report:
  - partition_stack: dynamic-partition of the stack into 4 partitions, written in frame chunks
    (--chunk-rows 1, as h5py writes a stack);
  - gather_stack, gather_gzip_stack: gather-nd of 10 frames of the stack (of stack_gzip);
  - partition_fine, partition_columns: dynamic-partition into 4 partitions, written contiguous.
The outputs of the first repetition are compared with the script's.

Usage: chunked_bench.py [--frames 1000] [--ranks 1,2] [--reps 3] [--jobs a,b] [--work DIR] [--markdown FILE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARTS = 4

# The job each script runs: read with h5py, the op with NumPy, write with h5py and fsync.
SCRIPT = r"""
import os, sys, time
import h5py, numpy as np
job, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
with h5py.File(src, "r") as f:
    if job.startswith("gather"):
        idx = f["idx"][()]
        rows = f["data"][np.sort(np.unique(idx[:, 0]))]
        result = {"out": rows[np.searchsorted(np.sort(np.unique(idx[:, 0])), idx[:, 0])]}
        chunks = None
    else:
        data, parts = f["data"][()], f["parts"][()]
        order = np.argsort(parts, kind="stable")
        counts = np.bincount(parts, minlength=%d)
        pieces = np.split(data[order], np.cumsum(counts)[:-1])
        result = {"out/%%d" %% k: p for k, p in enumerate(pieces)}
        chunks = job == "partition_stack"
with h5py.File(out, "w") as g:
    for name, value in result.items():
        if chunks and len(value):
            g.create_dataset(name, data=value, chunks=(1,) + value.shape[1:])
        else:
            g[name] = value
fd = os.open(out, os.O_RDONLY)
os.fsync(fd)
os.close(fd)
print(time.perf_counter() - t0)
""" % PARTS


def write_once(path, data, chunks, parts, extra=None, **storage):
    """An input of `data` stored in `chunks` (with h5py's `storage` options) with a partition
    id per row (and `extra` datasets), written once: under another name first, so a run cut
    short leaves none."""
    if not os.path.exists(path):
        rng = np.random.default_rng(12)
        with h5py.File(path + ".tmp", "w") as f:
            f.create_dataset("data", data=data, chunks=chunks, **storage)
            f["parts"] = rng.integers(0, parts, len(data)).astype(np.int32)
            for name, value in (extra or {}).items():
                f[name] = value
        os.replace(path + ".tmp", path)
    return path


def make_inputs(work, frames):
    """The four inputs (made anew only where missing)."""
    rng = np.random.default_rng(11)
    paths = {}
    stack = os.path.join(work, "stack-%d.h5" % frames)
    stack_gzip = os.path.join(work, "stack-gzip-%d.h5" % frames)
    if not os.path.exists(stack) or not os.path.exists(stack_gzip):
        frames_data = rng.integers(0, 4000, (frames, 256, 256), dtype=np.uint16)
        idx = {"idx": rng.integers(0, frames, (10, 1)).astype(np.int64)}
        write_once(stack, frames_data, (1, 256, 256), PARTS, idx)
        write_once(stack_gzip, frames_data, (1, 256, 256), PARTS, idx, compression="gzip", compression_opts=1)
    paths["stack"] = stack
    paths["stack_gzip"] = stack_gzip
    fine = os.path.join(work, "fine.h5")
    if not os.path.exists(fine):
        write_once(fine, rng.integers(-128, 127, (1 << 18,) + (2,) * 8, dtype=np.int8), (1024,) + (2,) * 8, PARTS)
    paths["fine"] = fine
    columns = os.path.join(work, "columns.h5")
    if not os.path.exists(columns):
        write_once(columns, rng.standard_normal((1 << 20, 16), dtype=np.float32), (4096, 1), PARTS)
    paths["columns"] = columns
    return paths


def shardops_argv(job, src, out):
    if job.startswith("gather"):
        return ["gather-nd", "--params", src + ":/data", "--indices", src + ":/idx", "--out", out + ":/out"]
    argv = ["dynamic-partition", "--data", src + ":/data", "--partitions", src + ":/parts", "--num-partitions",
            str(PARTS), "--out", out + ":/out"]
    return argv + (["--chunk-rows", "1"] if job == "partition_stack" else [])


def same_outputs(a, b):
    with h5py.File(a, "r") as x, h5py.File(b, "r") as y:
        names = []
        x.visit(lambda n: names.append(n) if isinstance(x[n], h5py.Dataset) else None)
        return all(n in y and np.array_equal(x[n][()], y[n][()]) for n in names) and len(names) > 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=1000)
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--jobs", default=None, help="only these jobs, comma-separated")
    p.add_argument("--work", default=None)
    p.add_argument("--markdown", default=None)
    p.add_argument("--shardops", default=os.path.join(REPO, "build", "apps", "shardops", "shardops"))
    args = p.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="shardops-chunked-")
    os.makedirs(work, exist_ok=True)
    paths = make_inputs(work, args.frames)
    jobs = [("partition_stack", "stack"), ("gather_stack", "stack"), ("gather_gzip_stack", "stack_gzip"),
            ("partition_fine", "fine"), ("partition_columns", "columns")]
    if args.jobs:
        jobs = [(job, data) for job, data in jobs if job in args.jobs.split(",")]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_pml="ob1",
               OMPI_MCA_btl="self,vader")
    ranks = [int(r) for r in args.ranks.split(",")]
    times = {}
    checked = {}
    for rep in range(args.reps):
        for job, data in jobs:
            src = paths[data]
            script_out = os.path.join(work, "script-%s.h5" % job)
            r = subprocess.run([sys.executable, "-c", SCRIPT, job, src, script_out], capture_output=True, text=True,
                               check=True)
            times.setdefault((job, "script"), []).append(float(r.stdout.strip()))
            for n in ranks:
                out = os.path.join(work, "shardops-%s-%d.h5" % (job, n))
                report = out + ".json"
                for stale in (out, report):
                    if os.path.exists(stale):
                        os.remove(stale)
                cmd = (["mpirun", "-n", str(n), "--oversubscribe", args.shardops] + shardops_argv(job, src, out) +
                       ["-q", "--report", report])
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, env=env)
                wall = time.perf_counter() - t0
                with open(report) as f:
                    phases = json.load(f)["seconds"]
                times.setdefault((job, n), []).append((wall, phases["read"], phases["write"]))
                if rep == 0:
                    checked[(job, n)] = same_outputs(script_out, out)
    lines = ["| job | ranks | shardops s | read s | write s | h5py + NumPy s | script / shardops | output |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for job, _ in jobs:
        script = statistics.median(times[(job, "script")])
        for n in ranks:
            runs = times[(job, n)]
            wall = statistics.median(r[0] for r in runs)
            lines.append("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.2fx | %s |" %
                         (job, n, wall, statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs),
                          script, script / wall, "equal" if checked[(job, n)] else "DIFFERENT"))
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    return 0 if all(checked.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
