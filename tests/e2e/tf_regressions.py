"""The regression cases of the TensorFlow comparison: every case a differential run against
tf.raw_ops once failed, kept in tf_regressions.json and run by test_tf_oracle.py.

A case is stored as {"name", "op", "why", "num_partitions", "shape", "bad_indices", "vlen",
"arrays": {key: {"dtype", "shape", "hex"}}} ("hex": the array's bytes; for variable-length
strings "strings": a list of hex strings), so every bit (NaN payloads, subnormals) survives.
"""

import json
import os

import numpy as np

import gen


def _encode(a):
    a = np.asarray(a)
    if a.dtype == object:
        return {"dtype": "vlen", "shape": list(a.shape), "strings": [bytes(s).hex() for s in a.reshape(-1)]}
    return {"dtype": a.dtype.str, "shape": list(a.shape), "hex": np.ascontiguousarray(a).tobytes().hex()}


def _decode(e):
    if e["dtype"] == "vlen":
        return np.array([bytes.fromhex(s) for s in e["strings"]] or [], dtype=object).reshape(e["shape"])
    return np.frombuffer(bytes.fromhex(e["hex"]), dtype=np.dtype(e["dtype"])).reshape(e["shape"]).copy()


def encode_case(case, why=""):
    return {"name": case.name, "op": case.op, "why": why, "num_partitions": case.num_partitions,
            "shape": list(case.shape) if case.shape is not None else None, "bad_indices": case.bad_indices,
            "vlen": bool(case.vlen), "arrays": {k: _encode(v) for k, v in case.arrays.items()}}


def decode_case(d):
    c = gen.Case("regression_" + d["name"], d["op"], {k: _decode(v) for k, v in d["arrays"].items()},
                 num_partitions=d["num_partitions"], shape=tuple(d["shape"]) if d["shape"] is not None else None,
                 bad_indices=d["bad_indices"])
    c.vlen = d["vlen"]
    return c


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [decode_case(d) for d in json.load(f)]


def append(path, cases, why="found by tf_fuzz.py"):
    """Adds cases (by name: one already there is replaced) to the file."""
    old = []
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    names = {c.name for c in cases}
    entries = [d for d in old if d["name"] not in names] + [encode_case(c, why) for c in cases]
    with open(path, "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")
