#!/usr/bin/python3
"""Differential fuzz: seeded random cases through the shardops command and tf.raw_ops, bit for bit.

Every op x dtype (strings too) x index dtype (int16, uint16 and TF's refused ones as well
as int32/int64) x rank x shape edge (0-size, scalar, index depth 0..rank, duplicates,
negative and out-of-range indices under both policies, spelled as TF spells them), with
NaN (quiet and signalling, with payloads), +-inf, -0.0, subnormals and sums whose result
depends on their order, strings fixed-length and variable-length. Each case runs once in
TensorFlow (tf_worker.py, one process for all) and once through shardops under mpiexec at
a rank count taken in turn from --np-list. Where TF succeeds, shardops must write the same
dtype, shape and bytes; where TF fails (InvalidArgument, NotFound: no kernel), shardops must
exit 2 with TF's message.

    tf_fuzz.py --shardops BIN --seed 7 --cases 2000 --np-list 1,2,3,4     (scripts/tf_fuzz.sh)

The suite runs a short seeded run (ctest e2e_tf_fuzz). --record FILE appends every failing
case to FILE (tests/e2e/tf_regressions.json holds the ones found so far; test_tf_oracle.py
runs them all). Exit 77 without TensorFlow.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import gen  # noqa: E402
import tf_regressions  # noqa: E402
from e2e_common import ALL_DTYPES, OPS, SKIP_RC, Shardops, Suite, parse_args, work_dir  # noqa: E402
from test_tf_oracle import compare, find_tf_python, run_tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Index dtypes, weighted: TF's kernels' two, the ones its op definitions allow without a
# kernel (int16 has GatherNd kernels), and ones no definition allows.
INDEX_DTYPES = ["int32"] * 8 + ["int64"] * 8 + ["int16"] * 3 + ["uint16"] * 2 + ["int8", "uint8", "uint32",
                                                                                 "uint64"]
# --bad-indices as a user may spell it (none: the default).
POLICIES = [None] * 6 + ["error", "ignore"] * 2 + ["DEFAULT", "ERROR", "IGNORE", "Ignore"]
STRING_PIECES_UTF8 = [b"a", b"bc", b"xyz", "\u00f6".encode(), "\u65e5".encode(), b" "]


def _subnormals(dtype):
    """Subnormal and near-subnormal values of a real float dtype (bit patterns)."""
    if dtype == np.float16:
        u, bits = np.uint16, [0x0001, 0x8001, 0x03ff, 0x0200, 0x0400, 0x8400]
    elif dtype == np.float32:
        u, bits = np.uint32, [0x00000001, 0x80000001, 0x007fffff, 0x00400000, 0x00800000, 0x80c00000]
    else:
        u, bits = np.uint64, [1, 0x8000000000000001, 0x000fffffffffffff, 0x0010000000000000,
                              0x8018000000000000]
    return np.array(bits, u).view(dtype)


def _nans(dtype):
    """NaNs with payloads, quiet and signalling, of both signs."""
    if dtype == np.float16:
        u, bits = np.uint16, [0x7e01, 0xfe02, 0x7c03, 0x7d00]
    elif dtype == np.float32:
        u, bits = np.uint32, [0x7fc00001, 0xffc00002, 0x7f800003, 0x7fa00000]
    else:
        u, bits = np.uint64, [0x7ff8000000000001, 0xfff8000000000002, 0x7ff0000000000003]
    return np.array(bits, u).view(dtype)


def _real_values(rng, dtype, shape):
    style = rng.integers(0, 4)
    if style == 0:  # plain
        x = (rng.standard_normal(shape) * 8).astype(dtype)
    elif style == 1:  # magnitudes far apart: sums that depend on their order (float16 overflows: inf)
        with np.errstate(over="ignore"):
            x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 8, size=shape)).astype(dtype)
    else:  # mostly tiny: subnormal operands and results
        tiny = np.finfo(dtype).tiny
        x = (rng.standard_normal(shape) * tiny * rng.choice([0.3, 1, 3], size=shape)).astype(dtype)
    flat = x.reshape(-1)
    if flat.size and rng.random() < 0.8:
        specials = np.concatenate([_subnormals(dtype), _nans(dtype),
                                   np.array([np.inf, -np.inf, -0.0, 0.0], dtype)])
        n = int(rng.integers(1, max(2, flat.size // 3) + 1))
        flat[rng.integers(0, flat.size, n)] = rng.choice(specials, n)
    return x


def values(rng, dtype, shape):
    shape = tuple(shape)
    if dtype == "S":
        return gen.strings(rng, shape)
    d = np.dtype(dtype)
    if d.kind == "f":
        return _real_values(rng, d.type, shape)
    if d.kind == "c":
        part = np.float32 if d == np.complex64 else np.float64
        out = np.empty(shape, d)
        out.real, out.imag = _real_values(rng, part, shape), _real_values(rng, part, shape)
        return out
    return gen.values(rng, dtype, shape)


def _shape(rng, rank, zero_dim=0.08, hi=5):
    return tuple(0 if rng.random() < zero_dim else int(rng.integers(1, hi + 1)) for _ in range(rank))


def _index_rows(rng, batch, prefix, itype, bad):
    """Index rows (batch..., K) into prefix, duplicates likely, some out of range if bad."""
    k = len(prefix)
    idx = np.zeros(tuple(batch) + (k,), np.int64)
    hot = rng.random() < 0.4  # a few rows take most updates
    for d in range(k):
        top = prefix[d] if not hot else min(prefix[d], 2)
        idx[..., d] = rng.integers(0, max(top, 1), size=batch)
    if bad and idx.size:
        flat = idx.reshape(-1, k)
        for row in rng.integers(0, flat.shape[0], int(rng.integers(1, 3))):
            d = int(rng.integers(0, k))
            flat[row, d] = prefix[d] + int(rng.integers(0, 3)) if rng.random() < 0.5 else -1 - int(rng.integers(0, 3))
    info = np.iinfo(itype)
    return np.clip(idx, info.min, info.max).astype(itype)


def _batch(rng, n):
    if rng.random() < 0.3 and n > 3:
        for a in (2, 3):
            if n % a == 0:
                return (a, n // a)
    return (n,)


def scatter_family(rng, name, op, dtype, itype, policy):
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank)
    depth = int(rng.integers(0 if rng.random() < 0.1 else 1, rank + 1))
    n = 0 if rng.random() < 0.08 else int(rng.integers(1, 40))
    one_row = rng.random() < 0.08 and depth > 0  # rank-1 indices: one index row
    batch = () if one_row else _batch(rng, n)
    bad = rng.random() < 0.2
    idx = _index_rows(rng, batch, shape[:depth], itype, bad)
    upd_shape = tuple(batch) + shape[depth:]
    if rng.random() < 0.05:  # a wrong updates shape: TF's shape error (or its missing kernel first)
        upd_shape = upd_shape + (2,)
    upd = values(rng, dtype, upd_shape)
    if op == "scatter-nd":
        return gen.Case(name, op, {"indices": idx, "updates": upd}, shape=shape, bad_indices=policy)
    return gen.Case(name, op, {"tensor": values(rng, dtype, shape), "indices": idx, "updates": upd},
                    bad_indices=policy)


def gather(rng, name, dtype, itype, policy):
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank)
    depth = int(rng.integers(0, rank + 1))
    n = 0 if rng.random() < 0.08 else int(rng.integers(1, 30))
    batch = () if rng.random() < 0.08 else _batch(rng, n)
    idx = _index_rows(rng, batch, shape[:depth], itype, rng.random() < 0.2)
    return gen.Case(name, "gather-nd", {"params": values(rng, dtype, shape), "indices": idx}, bad_indices=policy)


def partition(rng, name, dtype):
    prank = int(rng.integers(0, 3))
    pshape = _shape(rng, prank, hi=6)
    data_shape = pshape + _shape(rng, int(rng.integers(0, 3)), zero_dim=0.05, hi=3)
    nparts = int(rng.integers(1, 5))
    parts = rng.integers(0, nparts, size=pshape)
    if parts.size and rng.random() < 0.15:
        parts.reshape(-1)[int(rng.integers(0, parts.size))] = rng.choice([-1, nparts, nparts + 5])
    ptype = np.int32 if rng.random() < 0.95 else np.int64
    return gen.Case(name, "dynamic-partition", {"data": values(rng, dtype, data_shape),
                                                "partitions": np.asarray(parts, ptype)}, num_partitions=nparts)


def stitch(rng, name, op, dtype):
    m = int(rng.integers(1, 4))
    inner = _shape(rng, int(rng.integers(0, 3)), zero_dim=0.05, hi=3)
    out_rows = int(rng.integers(1, 12))
    arrays = {}
    for j in range(m):
        ishape = _shape(rng, int(rng.integers(0, 3)), zero_dim=0.1, hi=5)
        ids = rng.integers(0, out_rows, size=ishape)
        if op == "parallel-dynamic-stitch":  # TF leaves duplicates across inputs undefined there
            ids = ids * m + j
        if ids.size and rng.random() < 0.1:
            ids.reshape(-1)[int(rng.integers(0, ids.size))] = -1 - int(rng.integers(0, 2))
        arrays["i%d" % j] = np.asarray(ids, np.int32)
    for j in range(m):
        arrays["d%d" % j] = values(rng, dtype, arrays["i%d" % j].shape + inner)
    return gen.Case(name, op, arrays)


def fuzz_case(rng, name):
    op = OPS[int(rng.integers(0, len(OPS)))]
    dtype = (ALL_DTYPES + ["S", "S"])[int(rng.integers(0, len(ALL_DTYPES) + 2))]
    itype = INDEX_DTYPES[int(rng.integers(0, len(INDEX_DTYPES)))]
    policy = POLICIES[int(rng.integers(0, len(POLICIES)))]
    if op == "dynamic-partition":
        case = partition(rng, name, dtype)
    elif op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        case = stitch(rng, name, op, dtype)
    elif op == "gather-nd":
        case = gather(rng, name, dtype, itype, policy)
    else:
        case = scatter_family(rng, name, op, dtype, itype, policy)
    if dtype == "S" and rng.random() < 0.5:  # variable-length strings (valid UTF-8, as h5py wants them)
        case.vlen = True
        for k, v in case.arrays.items():
            if v.dtype.kind == "S":
                pieces = rng.integers(0, len(STRING_PIECES_UTF8), size=v.shape + (3,))
                case.arrays[k] = np.array([b"".join(STRING_PIECES_UTF8[int(i)] for i in p[:int(rng.integers(0, 4))])
                                           for p in pieces.reshape(-1, 3)], dtype=object).reshape(v.shape)
    return case


def main():
    def extra(p):
        p.add_argument("--repo", default=os.path.dirname(os.path.dirname(HERE)), help="source tree (for .venv-tf)")
        p.add_argument("--seed", type=int, default=1, help="seed of the cases")
        p.add_argument("--cases", type=int, default=100, help="number of random cases")
        p.add_argument("--np-list", default="1,2,3,4", help="rank counts, used in turn")
        p.add_argument("--record", default="", help="append failing cases to this regression file (JSON)")

    args = parse_args(__doc__.splitlines()[0], default_np=1, extra=extra)
    tf_python, tried = find_tf_python(args.repo)
    if not tf_python:
        print("SKIP: no Python with TensorFlow (tried: %s)" % "; ".join(tried))
        return SKIP_RC
    nps = [int(x) for x in args.np_list.split(",")]
    suite = Suite("tf_fuzz seed %d" % args.seed, args)
    sh = Shardops(args)
    rng = np.random.default_rng(args.seed)
    cases = [fuzz_case(rng, "fuzz_s%d_%05d" % (args.seed, i)) for i in range(args.cases)]
    cases = [c for c in cases if suite.wanted(c.name)]
    t0 = time.monotonic()
    failed = []
    with work_dir(args, "fuzz") as d:
        results, outputs = run_tf(tf_python, d, cases, timeout=max(600, args.cases))
        counts = {}
        for i, c in enumerate(cases):
            r = results[c.name]
            counts[r["status"]] = counts.get(r["status"], 0) + 1
            np_ = nps[i % len(nps)]
            before = len(suite.failures)
            suite.case("%s (%s %s, np %d)" % (c.name, c.op, describe(c), np_), compare, suite, sh, d, c, r, outputs,
                       np_)
            if len(suite.failures) > before:
                failed.append(c)
        print("TensorFlow outcomes: %s; %.1f s" % (", ".join("%s %d" % kv for kv in sorted(counts.items())),
                                                  time.monotonic() - t0))
    if args.record and failed:
        tf_regressions.append(args.record, failed)
        print("recorded %d failing cases in %s" % (len(failed), args.record))
    return suite.finish(sh)


def describe(case):
    return ", ".join("%s %s%s" % (k, v.dtype if v.dtype != object else "vlen", list(v.shape))
                     for k, v in case.arrays.items()) + (", bad-indices %s" % case.bad_indices if case.bad_indices
                                                          else "")


if __name__ == "__main__":
    sys.exit(main())
