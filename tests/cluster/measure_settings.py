#!/usr/bin/python3
"""Measures, on the namespace cluster, the effect of the settings docs/clusters.md recommends
that can be measured on one machine: TCP between hosts against shared memory on one host, and
the MPI-IO layer (OMPIO against ROMIO with one collective-buffering aggregator per node).

  bash tests/cluster/with_cluster.sh --hosts 3 --workdir /tmp/c -- \
      /usr/bin/python3 tests/cluster/measure_settings.py --shardops build/apps/shardops/shardops

Each configuration runs the same gather-nd job (REPEATS times; the table has the median of the
--report phase times, max over ranks) at 6 ranks.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NS_MPIRUN = os.path.join(HERE, "..", "..", "scripts", "cluster", "ns-mpirun.sh")
REPEATS = 3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shardops", required=True)
    ap.add_argument("--rows", type=int, default=262144)
    ap.add_argument("--indices", type=int, default=1048576)
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="shardops-settings-", dir=os.environ.get("SHARDOPS_CLUSTER_DIR"))
    src = os.path.join(d, "in.h5")
    rng = np.random.default_rng(3)
    with h5py.File(src, "w") as f:
        f["params"] = rng.standard_normal((args.rows, 16)).astype(np.float32)
        f["idx"] = rng.integers(0, args.rows, (args.indices, 1)).astype(np.int64)
    hints = os.path.join(d, "romio-hints")
    with open(hints, "w") as f:
        f.write("romio_cb_write enable\ncb_config_list *:1\ncb_nodes 3\n")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_pml="ob1",
               OMPI_MCA_mpi_yield_when_idle="1")
    local = ["mpirun", "-n", "6", "--oversubscribe", "--mca", "btl", "self,vader"]
    cluster = [NS_MPIRUN, "-n", "6"]
    configs = [
        ("one host, 6 ranks, shared memory (vader)", local),
        ("3 hosts x 2 ranks, TCP between hosts, OMPIO (default)", cluster),
        ("3 hosts x 2 ranks, ROMIO, one aggregator per node (cb_config_list *:1)",
         cluster + ["--mca", "io", "romio321", "-x", "ROMIO_HINTS=" + hints]),
    ]
    print("| configuration | read s | route s | write s | total s |\n|---|---:|---:|---:|---:|")
    try:
        for name, launcher in configs:
            measure(args, d, src, env, name, launcher)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 0


def measure(args, d, src, env, name, launcher):
    """Runs the job REPEATS times with launcher and prints the median phase times."""
    runs = []
    for k in range(REPEATS):
        report = os.path.join(d, "r.json")
        out = os.path.join(d, "out-%d.h5" % k)
        cmd = launcher + [args.shardops, "gather-nd", "--params", src + ":/params", "--indices", src + ":/idx",
                          "--out", out + ":/g", "--report", report, "-q"]
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=300)
        if p.returncode != 0:
            sys.stderr.write(p.stderr[-3000:])
            raise SystemExit("measure_settings: %s failed" % name)
        with open(report) as f:
            runs.append(json.load(f)["seconds"])
        os.unlink(out)
    med = {k: statistics.median(r[k] for r in runs) for k in ("read", "route", "write", "total")}
    print("| %s | %.2f | %.2f | %.2f | %.2f |" % (name, med["read"], med["route"], med["write"], med["total"]),
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
