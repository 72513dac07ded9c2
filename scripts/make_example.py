#!/usr/bin/python3
"""Writes the example inputs (the standard workloads' shapes, docs/performance.md, scaled by --rows) with h5py.

example.h5:/data        float32 [rows, 16]    the rows to move
example.h5:/positions   int32   [rows]        0..rows-1 (partitioned alongside data, they
                                              become the indices that stitch it back)
example.h5:/partition   int32   [rows]        random partition ids in [0, partitions)
example.h5:/indices     int64   [2*rows, 1]   random row indices (duplicates included)
example.h5:/updates     float32 [2*rows, 16]  one update row per index
"""
import argparse
import os
import signal
import sys
import tempfile

import h5py
import numpy as np

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("out", help="output HDF5 file")
parser.add_argument("--rows", type=int, default=1 << 20)
parser.add_argument("--partitions", type=int, default=16)
parser.add_argument("--seed", type=int, default=7)
args = parser.parse_args()

rng = np.random.default_rng(args.seed)
n = args.rows


def write(path):
    with h5py.File(path, "w") as f:
        f["data"] = rng.standard_normal((n, 16)).astype(np.float32)
        f["positions"] = np.arange(n, dtype=np.int32)
        f["partition"] = rng.integers(0, args.partitions, n).astype(np.int32)
        f["indices"] = rng.integers(0, n, (2 * n, 1)).astype(np.int64)
        f["updates"] = rng.standard_normal((2 * n, 16)).astype(np.float32)


# Written under a temporary name beside the target, then renamed: a job stopped while
# writing leaves no half-made file for the next job to take as its input.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # scancel: the temporary file goes too
directory = os.path.dirname(os.path.abspath(args.out))
fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(args.out) + ".", suffix=".tmp", dir=directory)
try:
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # as a file made by open()
    write(tmp)
    os.replace(tmp, args.out)
except BaseException:
    os.unlink(tmp)
    raise
print(f"wrote {args.out}: {n} rows x 16 float32, {2 * n} scatter/gather indices, {args.partitions} partitions")
