#!/usr/bin/env python3
"""What the output layer costs (docs/output-safety.md): prints a markdown table.

- Adding a small dataset to a large existing file against writing it to a new file (whole
  `mpirun` process; the target is to be within 0.1 s).
- The write phase of a large output (its --report time) with the default durability
  (fsync before the commit) and with --no-fsync, against plain POSIX writes of the same
  bytes (dd, with and without conv=fsync) in the same run.
- The write phase of an output replacing its dataset in an existing file (`--overwrite`)
  with other rows (every row differs: the new file, the undo journal of the replaced bytes,
  then the bytes in place), and with the same rows (a job run again: the rows compared,
  none written).
- A few rows scattered into a large tensor written back over it (`tensor-scatter-update
  --tensor F:/t ... --out F:/t --overwrite`, whole process): the rows that differ are
  written into the dataset, journaled; against an h5py script writing the same rows into the
  dataset and an fsync (timed after its imports).
- A dynamic-partition of 2000 partitions of 64 KB each into an existing file against the
  same into a new file (whole process): the rows go straight into the existing file, and
  how often they are flushed decides what a busy disk costs.
- 200,000 variable-length strings into 2000 partitions in a new file (whole process), against
  an h5py script doing the same (stable argsort and split, a dataset per partition, fsync;
  timed after its imports): parallel HDF5 writes such strings only with its serial driver.

Usage: python3 scripts/bench/output_costs.py [--shardops build/apps/shardops/shardops] [--np 1]
       [--big-mb 512] [--out-mb 256] [--reps 5] [--dir DIR]
Runs with Debian's python3 (numpy, h5py).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_pml="ob1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def timed(cmd):
    # Every step starts with nothing dirty in the page cache: one step's writeback (or a
    # deleted file's) never lands in the next one's time.
    os.sync()
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--shardops", default=os.path.join(here, "..", "..", "build", "apps", "shardops", "shardops"))
    p.add_argument("--np", type=int, default=1)
    p.add_argument("--big-mb", type=int, default=512, help="size of the existing file")
    p.add_argument("--out-mb", type=int, default=256, help="size of the large output")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--dir", default=None, help="where the files go (default: a temporary folder in /tmp)")
    a = p.parse_args()
    d = tempfile.mkdtemp(prefix="shardops-output-costs-", dir=a.dir)
    mpirun = ["mpirun", "-n", str(a.np), a.shardops]
    try:
        # Inputs: a small gather (4 KB out) and a large one (out-mb out).
        rng = np.random.default_rng(0)
        inp = os.path.join(d, "in.h5")
        rows = a.out_mb * (1 << 20) // 64
        with h5py.File(inp, "w") as f:
            f["params"] = rng.standard_normal((rows, 16)).astype(np.float32)
            f["small_idx"] = rng.integers(0, rows, size=(64, 1)).astype(np.int32)
            f["big_idx"] = np.arange(rows, dtype=np.int32).reshape(-1, 1)[::-1].copy()
            f["big_idx_forward"] = np.arange(rows, dtype=np.int32).reshape(-1, 1)
        big = os.path.join(d, "big.h5")
        with h5py.File(big, "w") as f:
            f["bulk"] = np.ones((a.big_mb * (1 << 20) // 64, 16), np.float32)

        def gather(idx, out, *extra):
            return mpirun + ["gather-nd", "--params", inp + ":/params", "--indices", inp + ":/" + idx, "--out", out,
                             "-q"] + list(extra)

        parts = 2000
        with h5py.File(inp, "a") as f:
            f["part_data"] = rng.standard_normal((parts * 1024, 16)).astype(np.float32)
            f["part_ids"] = rng.integers(0, parts, size=parts * 1024).astype(np.int32)
        small = os.path.join(d, "small.h5")
        with h5py.File(small, "w") as f:
            f["keep"] = np.arange(10)

        def partition(out, data="part_data", ids="part_ids"):
            return mpirun + ["dynamic-partition", "--data", inp + ":/" + data, "--partitions", inp + ":/" + ids,
                             "--num-partitions", str(parts), "--out", out + ":/g", "-q"]

        strings = 200000
        with h5py.File(inp, "a") as f:
            f.create_dataset("part_strings", dtype=h5py.string_dtype(),
                             data=np.array(["item-%d-%s" % (i, "x" * (i % 23)) for i in range(strings)], dtype=object))
            f["string_ids"] = rng.integers(0, parts, size=strings).astype(np.int32)

        def strings_h5py(out):
            script = ("import os, time, h5py, numpy as np\nt0 = time.monotonic()\n"
                      "with h5py.File(%r, 'r') as f:\n    s, p = f['part_strings'][...], f['string_ids'][...]\n"
                      "order = np.argsort(p, kind='stable')\n"
                      "pieces = np.split(s[order], np.cumsum(np.bincount(p, minlength=%d))[:-1])\n"
                      "with h5py.File(%r, 'w') as f:\n    g = f.create_group('g', track_order=True)\n"
                      "    for k, piece in enumerate(pieces):\n"
                      "        g.create_dataset(str(k), data=piece, dtype=h5py.string_dtype())\n"
                      "fd = os.open(%r, os.O_RDONLY)\nos.fsync(fd)\nos.close(fd)\nprint(time.monotonic() - t0)\n"
                      % (inp, parts, out, out))
            os.sync()
            done = subprocess.run([sys.executable, "-c", script], check=True, env=ENV, capture_output=True, text=True)
            return float(done.stdout)

        append, fresh, parts_existing, parts_new, strings_ours, strings_script = [], [], [], [], [], []
        for k in range(a.reps):  # interleaved
            append.append(timed(gather("small_idx", big + ":/added%d" % k)))
            new = os.path.join(d, "new%d.h5" % k)
            fresh.append(timed(gather("small_idx", new + ":/added")))
            os.remove(new)
            existing = os.path.join(d, "existing.h5")
            shutil.copyfile(small, existing)
            parts_existing.append(timed(partition(existing)))
            os.remove(existing)
            parts_new.append(timed(partition(new)))
            os.remove(new)
            strings_ours.append(timed(partition(new, "part_strings", "string_ids")))
            os.remove(new)
            strings_script.append(strings_h5py(new))
            os.remove(new)

        def write_phase(*extra):
            out = os.path.join(d, "large.h5")
            report = os.path.join(d, "r.json")
            os.sync()
            subprocess.run(gather("big_idx", out + ":/g", "--report", report, *extra), check=True, env=ENV,
                           stdout=subprocess.DEVNULL)
            with open(report) as f:
                seconds = json.load(f)["seconds"]["write"]
            os.remove(out)
            return seconds

        rerun = os.path.join(d, "rerun.h5")
        subprocess.run(gather("big_idx", rerun + ":/g"), check=True, env=ENV, stdout=subprocess.DEVNULL)

        def overwrite_phase(idx):
            report = os.path.join(d, "r.json")
            os.sync()
            subprocess.run(gather(idx, rerun + ":/g", "--overwrite", "--report", report), check=True, env=ENV,
                           stdout=subprocess.DEVNULL)
            with open(report) as f:
                return json.load(f)["seconds"]["write"]

        # A few rows into a tensor of out-mb: one copy of it for shardops, one for h5py.
        few = 100
        tensors = {who: os.path.join(d, "tensor_%s.h5" % who) for who in ("shardops", "h5py")}
        for path in tensors.values():
            shutil.copyfile(inp, path)
        few_rows = np.sort(rng.choice(rows, few, replace=False)).reshape(-1, 1).astype(np.int64)

        def few_rows_inputs(k):
            upd = os.path.join(d, "few.h5")
            with h5py.File(upd, "w") as f:
                f["idx"] = few_rows
                f["upd"] = np.full((few, 16), k + 1, np.float32)
            return upd

        def few_rows_shardops(k):
            upd = few_rows_inputs(k)
            t = tensors["shardops"] + ":/params"
            return timed(mpirun + ["tensor-scatter-update", "--tensor", t, "--indices", upd + ":/idx", "--updates",
                                   upd + ":/upd", "--out", t, "--overwrite", "-q"])

        def few_rows_h5py(k):
            upd = few_rows_inputs(k)
            script = ("import os, time, h5py\nt0 = time.monotonic()\n"
                      "with h5py.File(%r, 'r') as u:\n    idx, val = u['idx'][:, 0], u['upd'][...]\n"
                      "with h5py.File(%r, 'r+') as f:\n    f['params'][idx] = val\n"
                      "fd = os.open(%r, os.O_RDONLY)\nos.fsync(fd)\nos.close(fd)\nprint(time.monotonic() - t0)\n"
                      % (upd, tensors["h5py"], tensors["h5py"]))
            os.sync()
            t0 = time.monotonic()
            done = subprocess.run([sys.executable, "-c", script], check=True, env=ENV, capture_output=True, text=True)
            return float(done.stdout), time.monotonic() - t0

        out_bytes = rows * 64
        dd_file = os.path.join(d, "dd.bin")

        def dd(*flags):
            t = timed(["dd", "if=/dev/zero", "of=" + dd_file, "bs=1M", "count=%d" % (out_bytes >> 20)] + list(flags))
            os.remove(dd_file)
            return t

        durable, fast, dd_sync, dd_plain, replaced, rerun_same, few_ours, few_h5py = [], [], [], [], [], [], [], []
        for k in range(a.reps):
            durable.append(write_phase())
            replaced.append(overwrite_phase("big_idx_forward" if k % 2 == 0 else "big_idx"))
            rerun_same.append(overwrite_phase("big_idx_forward" if k % 2 == 0 else "big_idx"))
            few_ours.append(few_rows_shardops(k))
            few_h5py.append(few_rows_h5py(k))
            fast.append(write_phase("--no-fsync"))
            dd_sync.append(dd("conv=fsync", "status=none"))
            dd_plain.append(dd("status=none"))
        med = statistics.median
        print("Output costs, %d rank(s), median of %d interleaved runs, in %s" % (a.np, a.reps, d))
        print()
        print("| what | seconds |")
        print("|---|---:|")
        print("| add a 4 KB dataset to a %d MB file (whole process) | %.3f |" % (a.big_mb, med(append)))
        print("| write the same 4 KB to a new file (whole process) | %.3f |" % med(fresh))
        print("| difference (target <= 0.1 s) | %.3f |" % (med(append) - med(fresh)))
        print("| %d partitions of 64 KB into an existing file (whole process) | %.3f |" % (parts, med(parts_existing)))
        print("| the same into a new file (whole process) | %.3f |" % med(parts_new))
        print("| %d strings into %d partitions, new file (whole process) | %.3f |" % (strings, parts, med(strings_ours)))
        print("| h5py doing the same (after its imports) | %.3f |" % med(strings_script))
        print("| write phase, %d MB output, default (fsync at commit) | %.3f |" % (out_bytes >> 20, med(durable)))
        print("| dd of the same bytes with conv=fsync | %.3f |" % med(dd_sync))
        print("| ratio (target <= 1.2) | %.2f |" % (med(durable) / med(dd_sync)))
        print("| write phase with --no-fsync | %.3f |" % med(fast))
        print("| dd of the same bytes, no fsync | %.3f |" % med(dd_plain))
        print("| ratio (target <= 1.2) | %.2f |" % (med(fast) / med(dd_plain)))
        print("| write phase, an output replacing its dataset, every row other (--overwrite) | %.3f |" % med(replaced))
        print("| ratio to the new file's write phase | %.2f |" % (med(replaced) / med(durable)))
        print("| write phase, the same job run again (--overwrite, no row differs) | %.3f |" % med(rerun_same))
        print("| %d rows scattered into a %d MB tensor, written back over it (whole process) | %.3f |"
              % (few, out_bytes >> 20, med(few_ours)))
        print("| h5py writing the same rows into the dataset, fsync (after its imports) | %.3f |"
              % med([t[0] for t in few_h5py]))
        print("| the same h5py script, whole process | %.3f |" % med([t[1] for t in few_h5py]))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
