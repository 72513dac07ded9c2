#!/usr/bin/env python3
"""One of the standard workloads (docs/performance.md) as the h5py script a user would write:
read the inputs with h5py, run the op with NumPy, PyTorch or TensorFlow, write the output
with h5py and fsync it (file and folder, as shardops makes its output durable).

Prints one JSON line: the seconds of the job (timed after the imports) and of its read,
op and write parts. scripts/bench/job_bench.py runs it; the input file is the one that
job_bench.py writes (datasets idx, upd, base, parts, pos/K, piece/K).

Usage: job_peer.py {numpy,torch,tensorflow} {w1,w2,w3,w4,w5} INPUT.h5 OUTPUT.h5 [--threads T]
"""

import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("lib", choices=["numpy", "torch", "tensorflow"])
p.add_argument("workload", choices=["w1", "w2", "w3", "w4", "w5"])
p.add_argument("input")
p.add_argument("output")
p.add_argument("--threads", type=int, default=1, help="threads the library may use (the job's rank count)")
args = p.parse_args()

import h5py  # noqa: E402
import numpy as np  # noqa: E402

if args.lib == "torch":
    import torch

    torch.set_num_threads(args.threads)
elif args.lib == "tensorflow":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)

# The datasets each workload reads.
INPUTS = {"w1": ["idx", "upd"], "w2": ["base", "idx", "upd"], "w3": ["base", "idx"], "w4": ["base", "parts"],
          "w5": ["pos", "piece"]}


def read_inputs(f, names):
    out = {}
    for name in names:
        obj = f[name]
        if isinstance(obj, h5py.Group):  # pos/0.. and piece/0..: a list in partition order
            out[name] = [obj[str(k)][()] for k in range(len(obj))]
        else:
            out[name] = obj[()]
    return out


def partitions(f):
    return int(f.attrs["partitions"]), int(f.attrs["rows"])


# ------------------------------------------------------------------ the ops: {output name: array}


def numpy_op(w, x, n, parts):
    if w == "w1":
        out = np.zeros((n, x["upd"].shape[1]), x["upd"].dtype)
        np.add.at(out, x["idx"][:, 0], x["upd"])
        return {"out": out}
    if w == "w2":  # in place: the script owns the array it read
        x["base"][x["idx"][:, 0]] = x["upd"]
        return {"out": x["base"]}
    if w == "w3":
        return {"out": np.take(x["base"], x["idx"][:, 0], axis=0)}
    if w == "w4":
        order = np.argsort(x["parts"], kind="stable")
        counts = np.bincount(x["parts"], minlength=parts)
        pieces = np.split(x["base"][order], np.cumsum(counts)[:-1])
        return {"out/%d" % k: piece for k, piece in enumerate(pieces)}
    out = np.empty((n,) + x["piece"][0].shape[1:], x["piece"][0].dtype)
    for pos, piece in zip(x["pos"], x["piece"]):
        out[pos] = piece
    return {"out": out}


def torch_op(w, x, n, parts):
    if w == "w1":
        upd = torch.from_numpy(x["upd"])
        out = torch.zeros((n, upd.shape[1]), dtype=upd.dtype).index_add_(0, torch.from_numpy(x["idx"][:, 0]), upd)
        return {"out": out.numpy()}
    if w == "w2":  # in place, as NumPy
        base = torch.from_numpy(x["base"])
        base.index_copy_(0, torch.from_numpy(x["idx"][:, 0]), torch.from_numpy(x["upd"]))
        return {"out": x["base"]}
    if w == "w3":
        return {"out": torch.index_select(torch.from_numpy(x["base"]), 0, torch.from_numpy(x["idx"][:, 0])).numpy()}
    if w == "w4":
        ids = torch.from_numpy(x["parts"])
        order = torch.argsort(ids, stable=True)
        pieces = torch.split(torch.from_numpy(x["base"])[order], torch.bincount(ids, minlength=parts).tolist())
        return {"out/%d" % k: piece.numpy() for k, piece in enumerate(pieces)}
    first = torch.from_numpy(x["piece"][0])
    out = torch.empty((n,) + tuple(first.shape[1:]), dtype=first.dtype)
    for pos, piece in zip(x["pos"], x["piece"]):
        out.index_copy_(0, torch.from_numpy(pos.astype(np.int64)), torch.from_numpy(piece))
    return {"out": out.numpy()}


def tensorflow_op(w, x, n, parts):
    if w == "w1":
        return {"out": tf.scatter_nd(x["idx"], x["upd"], [n, x["upd"].shape[1]]).numpy()}
    if w == "w2":
        return {"out": tf.tensor_scatter_nd_update(x["base"], x["idx"], x["upd"]).numpy()}
    if w == "w3":
        return {"out": tf.gather_nd(x["base"], x["idx"]).numpy()}
    if w == "w4":
        pieces = tf.dynamic_partition(x["base"], x["parts"], parts)
        return {"out/%d" % k: piece.numpy() for k, piece in enumerate(pieces)}
    return {"out": tf.dynamic_stitch(x["pos"], x["piece"]).numpy()}


OPS = {"numpy": numpy_op, "torch": torch_op, "tensorflow": tensorflow_op}


def fsync_path(path, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def main():
    t0 = time.perf_counter()
    with h5py.File(args.input, "r") as f:
        parts, rows = partitions(f)
        x = read_inputs(f, INPUTS[args.workload])
    t1 = time.perf_counter()
    outputs = OPS[args.lib](args.workload, x, rows, parts)
    t2 = time.perf_counter()
    with h5py.File(args.output, "w") as f:
        for name, arr in outputs.items():
            f.create_dataset(name, data=arr)
    fsync_path(args.output)
    fsync_path(os.path.dirname(os.path.abspath(args.output)), os.O_RDONLY | os.O_DIRECTORY)
    t3 = time.perf_counter()
    print(json.dumps({"seconds": t3 - t0, "read": t1 - t0, "op": t2 - t1, "write": t3 - t2}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
