#!/usr/bin/python3
"""End-to-end: TensorFlow as the oracle of the shardops command (ctest e2e_tf_oracle_np_2).

Random inputs for every op and every dtype (duplicates,
slices, empty tensors, bad indices, --bad-indices ignore, shape errors) go through
tf.raw_ops.* (tf_worker.py, run once by a Python with TensorFlow) and through shardops
under mpiexec. Where TF succeeds, shardops must succeed with the same dtype, shape and
bytes; where TF raises InvalidArgument, shardops must exit 2 and print TF's message
(without TF's "{{function_node ...}}" prefix, " [Op:...]" suffix, ", node name: ..." and
NodeDef tails). Where TF has no kernel (TensorScatterAdd/Sub/Min/Max on bool, Min/Max on
complex, int16/uint16 indices except for GatherNd) shardops must fail with TF's "Could not
find device for node" text. The regression cases (tf_regressions.json: what differential
runs, tf_fuzz.py among them, once found) run here too.

TensorFlow is looked for in $SHARDOPS_TF_VENV, REPO/.venv-tf (scripts/setup.sh makes it),
then /opt/tfvenv; without it the test is skipped (exit 77).
"""

import json
import os
import re
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import gen  # noqa: E402
import tf_regressions  # noqa: E402
from e2e_common import (ALL_DTYPES, OPS, SKIP_RC, Shardops, Suite, error_lines, expect_success,  # noqa: E402
                        op_info, parse_args, read_h5, same_array, work_dir, write_h5)

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.path.join(HERE, "tf_regressions.json")  # cases a differential run once failed


def find_tf_python(repo):
    candidates = []
    if os.environ.get("SHARDOPS_TF_VENV"):
        candidates.append(os.path.join(os.environ["SHARDOPS_TF_VENV"], "bin", "python"))
    candidates += [os.path.join(repo, ".venv-tf", "bin", "python"), "/opt/tfvenv/bin/python"]
    tried = []
    for c in candidates:
        if not os.access(c, os.X_OK):
            tried.append("%s (absent)" % c)
            continue
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        try:
            p = subprocess.run([c, "-c", "import tensorflow, numpy"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env, timeout=120, universal_newlines=True)
        except subprocess.TimeoutExpired:
            tried.append("%s (import timed out)" % c)
            continue
        if p.returncode == 0:
            return c, tried
        tried.append("%s (cannot import tensorflow: %s)" % (c, (p.stderr.strip().splitlines() or ["?"])[-1]))
    return None, tried


def strip_tf_message(msg):
    """TF's eager error text without what TF adds around its kernel's message."""
    msg = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", msg)
    msg = msg.split("\n\t; NodeDef:")[0]
    msg = re.sub(r"\s*\[Op:[^\]]*\].*$", "", msg, flags=re.S)
    msg = re.sub(r", node name: \S+$", "", msg)
    return msg.strip()


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


# ---------------------------------------------------------------------------------------------
# The cases


def dtype_cases():
    cases = []
    for op in OPS:
        for j, dtype in enumerate(ALL_DTYPES):
            itype = "int64" if j % 2 == 0 else "int32"  # the other way round from test_ops.py
            name = "%s_%s_%s" % (op, dtype, itype)
            r = rng_for(name)
            if op == "parallel-dynamic-stitch":
                cases.append(gen.stitch_case(name, r, dtype, op=op, disjoint=True))
            else:
                cases.append(gen.random_case(name, r, op, dtype, itype))
    return cases


def string_cases():
    # TF's string kernels (the registry's): the movement ops and ScatterNd (TensorScatterAdd/
    # Sub/Min/Max have none: the fuzz, tf_fuzz.py, checks their "Could not find device" texts).
    cases = []
    for op in [op for op in OPS if op_info(op)["strings"]]:
        for itype in ("int32", "int64"):
            name = "%s_string_%s" % (op, itype)
            r = rng_for(name)
            if op == "parallel-dynamic-stitch":
                cases.append(gen.stitch_case(name, r, "S", op=op, disjoint=True))
            else:
                cases.append(gen.random_case(name, r, op, "S", itype))
    # Long runs of duplicates: ScatterNd concatenates them in index order.
    r = rng_for("scatter-nd_string_hot")
    cases.append(gen.scatter_nd_case("scatter-nd_string_hot", r, "S", "int64", rows=60, out_rows=3))
    # A bad index with strings: the same message as for numbers.
    c = gen.gather_nd_case("gather-nd_string_bad", rng_for("gather-nd_string_bad"), "S", "int32", rows=9,
                           params_rows=4)
    c.arrays["indices"].reshape(-1)[5] = 7
    cases.append(c)
    return cases


def _spoil_index_rows(r, idx, prefix, count):
    """Makes count random index rows out of range (too big or negative)."""
    flat = idx.reshape(-1, idx.shape[-1])
    rows = r.choice(flat.shape[0], size=min(count, flat.shape[0]), replace=False)
    for row in rows:
        d = int(r.integers(0, flat.shape[1]))
        flat[row, d] = prefix[d] + int(r.integers(0, 3)) if r.random() < 0.5 else -1 - int(r.integers(0, 3))


def bad_index_cases():
    cases = []
    for k, (op, dtype, itype) in enumerate([("scatter-nd", "float32", "int32"), ("scatter-nd", "int64", "int64"),
                                            ("tensor-scatter-update", "uint8", "int64"),
                                            ("tensor-scatter-add", "complex64", "int32"),
                                            ("tensor-scatter-max", "float16", "int64"),
                                            ("gather-nd", "float64", "int32"), ("gather-nd", "bool", "int64")]):
        name = "bad_%s_%s" % (op, dtype)
        r = rng_for(name)
        if op == "scatter-nd":
            c = gen.scatter_nd_case(name, r, dtype, itype, rows=24)
            prefix = c.shape[:c.arrays["indices"].shape[-1]]
        elif op.startswith("tensor-scatter-"):
            c = gen.tensor_scatter_case(name, r, op, dtype, itype, rows=24)
            prefix = c.arrays["tensor"].shape[:c.arrays["indices"].shape[-1]]
        else:
            c = gen.gather_nd_case(name, r, dtype, itype, rows=24, params_rows=int(r.integers(2, 9)))
            prefix = c.arrays["params"].shape[:c.arrays["indices"].shape[-1]]
        _spoil_index_rows(r, c.arrays["indices"], prefix, 3)
        cases.append(c)
        if k % 2 == 0:  # the same inputs with --bad-indices ignore
            cases.append(gen.Case(name + "_ignore", c.op, c.arrays, shape=c.shape, bad_indices="ignore"))
    for dtype in ("int16", "complex128"):
        name = "bad_dynamic-partition_%s" % dtype
        r = rng_for(name)
        c = gen.partition_case(name, r, dtype, rows=30)
        p = c.arrays["partitions"].reshape(-1)
        p[r.choice(p.size, 3, replace=False)] = [c.num_partitions + 2, -1, 70]
        cases.append(c)
    for op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        name = "bad_%s" % op
        r = rng_for(name)
        c = gen.stitch_case(name, r, "float32", op=op, rows=30, inputs=3)
        big = max(c.arrays, key=lambda k: c.arrays[k].size if k.startswith("i") else -1)
        flat = c.arrays[big].reshape(-1)
        flat[r.choice(flat.size, min(2, flat.size), replace=False)] = -3
        cases.append(c)
    cases.append(gen.Case("bad_partition_scalar", "dynamic-partition",
                          {"data": np.float32(3), "partitions": np.int32(17)}, num_partitions=4))
    return cases


def empty_and_shape_cases():
    f32, i32, i64 = np.float32, np.int32, np.int64
    z = np.zeros
    C = gen.Case
    return [
        C("empty_partition", "dynamic-partition", {"data": z((0, 3), np.uint32), "partitions": z((0,), i32)},
          num_partitions=2),
        C("empty_partition_2d", "dynamic-partition", {"data": z((3, 0), f32), "partitions": z((3, 0), i32)},
          num_partitions=2),
        C("empty_stitch", "dynamic-stitch", {"i0": z((0,), i32), "d0": z((0, 2), np.int8)}),
        C("empty_scatter_nd", "scatter-nd", {"indices": z((0, 2), i64), "updates": z((0,), np.float16)},
          shape=(3, 4)),
        C("empty_tensor_scatter", "tensor-scatter-sub", {"tensor": np.arange(6, dtype=np.int64).reshape(3, 2),
                                                         "indices": z((0, 1), i32), "updates": z((0, 2), i64)}),
        C("empty_gather", "gather-nd", {"params": np.arange(4, dtype=f32), "indices": z((0, 1), i64)}),
        C("empty_params_empty_indices", "gather-nd", {"params": z((0, 2), f32), "indices": z((0, 1), i32)}),
        C("empty_params_some_indices", "gather-nd", {"params": z((0, 2), f32), "indices": z((2, 1), i32)}),
        C("gather_depth0", "gather-nd", {"params": np.arange(6, dtype=np.uint16).reshape(2, 3),
                                         "indices": z((3, 0), i32)}),
        C("scatter_nd_depth0", "scatter-nd", {"indices": z((2, 0), i32), "updates": np.ones((2, 3), f32)},
          shape=(3,)),
        C("tensor_scatter_depth0", "tensor-scatter-update", {"tensor": z((3,), f32), "indices": z((2, 0), i32),
                                                             "updates": np.ones((2, 3), f32)}),
        C("scatter_nd_empty_output", "scatter-nd", {"indices": z((2, 1), i32), "updates": z((2, 0), f32)},
          shape=(4, 0)),
        C("scatter_nd_updates_mismatch", "scatter-nd", {"indices": z((5, 1), i32), "updates": z((4, 3), f32)},
          shape=(6, 3)),
        C("scatter_nd_inner_mismatch", "scatter-nd", {"indices": z((5, 1), i32), "updates": z((5, 2), f32)},
          shape=(6, 3)),
        C("tensor_scatter_inner_mismatch", "tensor-scatter-add",
          {"tensor": z((6, 3), f32), "indices": z((5, 1), i64), "updates": z((5, 4), f32)}),
        C("gather_depth_too_big", "gather-nd", {"params": z((4, 2), f32), "indices": z((3, 3), i32)}),
        C("partition_shape_mismatch", "dynamic-partition", {"data": z((5, 2), f32), "partitions": z((4,), i32)},
          num_partitions=3),
        C("stitch_prefix_mismatch", "dynamic-stitch", {"i0": z((2, 3), i32), "d0": z((3, 2), f32)}),
        C("one_row_gather_scalar", "gather-nd", {"params": np.arange(12, dtype=np.int8).reshape(4, 3),
                                                 "indices": np.array([2, 1], i64)}),
        C("one_row_gather_slice", "gather-nd", {"params": np.arange(12, dtype=f32).reshape(4, 3),
                                                "indices": np.array([3], i32)}),
        C("one_row_gather_bad", "gather-nd", {"params": np.arange(12, dtype=f32).reshape(4, 3),
                                              "indices": np.array([3, 5], i32)}),
        C("one_row_scatter_nd", "scatter-nd", {"indices": np.array([2], i32), "updates": np.ones(2, f32)},
          shape=(4, 2)),
        C("one_row_scatter_nd_scalar_update", "scatter-nd", {"indices": np.array([2, 1], i32),
                                                             "updates": f32(3)}, shape=(4, 2)),
        C("one_row_tensor_scatter", "tensor-scatter-add", {"tensor": z((3, 2), np.uint64), "indices": np.array([2], i64),
                                                           "updates": np.array([7, 8], np.uint64)}),
        C("tensor_scatter_scalar_update", "tensor-scatter-update",
          {"tensor": z((3, 2), f32), "indices": np.array([2, 1], i64), "updates": f32(7)}),
        C("stitch_scalars", "dynamic-stitch", {"i0": np.int32(3), "i1": np.int32(0), "i2": np.int32(3),
                                               "d0": np.float64(1), "d1": np.float64(2), "d2": np.float64(4)}),
        C("stitch_inner_mismatch", "dynamic-stitch", {"i0": np.arange(2, dtype=i32), "i1": np.arange(3, dtype=i32),
                                                      "d0": z((2, 4), f32), "d1": z((3, 5), f32)}),
        # TF's kernels index with the index dtype: int16 indices reach 32767 elements at most.
        C("gather_int16_params_too_large", "gather-nd", {"params": np.arange(32768, dtype=f32),
                                                         "indices": np.array([[0], [1]], np.int16)}),
        C("gather_int16_params_at_limit", "gather-nd", {"params": np.arange(32767, dtype=f32),
                                                        "indices": np.array([[0], [32766]], np.int16)}),
        C("gather_int16_slice_too_large", "gather-nd", {"params": z((0, 40000), f32), "indices": z((0, 1), np.int16)}),
        C("parallel_stitch_uint16_indices", "parallel-dynamic-stitch",
          {"i0": np.array([1, 0], np.uint16), "d0": np.array([7, 9], np.uint8)}),
        C("parallel_stitch_mixed_data", "parallel-dynamic-stitch",
          {"i0": np.array([0], i32), "i1": np.array([1], i32), "d0": np.ones(1, f32), "d1": np.ones(1, np.float64)}),
        C("stitch_index_int32_max", "dynamic-stitch", {"i0": np.array([2147483647, 0], i32),
                                                       "d0": np.array([7, 9], np.uint8)}),
        C("gather_int16_depth0_too_large", "gather-nd", {"params": z((200, 200), np.int8),
                                                         "indices": z((3, 0), np.int16)}),
    ]


# ---------------------------------------------------------------------------------------------


def run_tf(tf_python, d, cases, timeout=600):
    manifest, arrays = [], {}
    for c in cases:
        manifest.append({"name": c.name, "op": c.op, "tf_op": op_info(c.op)["tf_name"],
                         "num_partitions": c.num_partitions,
                         "shape": list(c.shape) if c.shape is not None else None, "bad_indices": c.bad_indices,
                         "batch_dims": c.batch_dims,
                         "keys": list(c.arrays)})
        for k, v in c.arrays.items():
            v = np.asarray(v)
            if v.dtype == object:  # variable-length strings: TF gets the same bytes
                v = np.array(v.tolist(), dtype="S%d" % max([len(s) for s in v.reshape(-1)] + [1])).reshape(v.shape)
            arrays["%s/%s" % (c.name, k)] = v
    with open(os.path.join(d, "cases.json"), "w") as f:
        json.dump(manifest, f)
    np.savez(os.path.join(d, "inputs.npz"), **arrays)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([tf_python, os.path.join(HERE, "tf_worker.py"), d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=timeout, universal_newlines=True)
    if p.returncode != 0:
        raise SystemExit("e2e: the TensorFlow worker failed (exit %d):\n%s" % (p.returncode, p.stderr[-4000:]))
    print(p.stdout.strip())
    with open(os.path.join(d, "results.json")) as f:
        results = json.load(f)
    return results, np.load(os.path.join(d, "outputs.npz"))


def as_byte_strings(a):
    """Fixed- or variable-length strings as a list of bytes (h5py gives vlen ones as objects)."""
    return [s if isinstance(s, bytes) else str(s).encode() for s in np.asarray(a).reshape(-1).tolist()]


def compare(suite, sh, d, case, tf_result, tf_outputs, np=None):
    """Runs case through shardops (on np ranks, default --np) and compares with TF's result."""
    if tf_result["status"] == "refused":
        suite.skip(case.name, "TensorFlow's Python layer refused the call: " + tf_result["message"])
        return
    in_file, out_file = os.path.join(d, case.name + ".in.h5"), os.path.join(d, case.name + ".out.h5")
    write_h5(in_file, {"/" + k: v for k, v in case.arrays.items()}, mode="w")
    res = sh.run(case.argv(in_file, out_file), np=np)
    if tf_result["status"] == "ok":
        expect_success(suite, res, "shardops (TensorFlow succeeded)")
        for k, name in enumerate(case.output_names()):
            expected = tf_outputs["%s/%d" % (case.name, k)]
            if expected.dtype.kind == "S":
                # Strings: the same values, of the input's kind (a fixed-length width may differ
                # from NumPy's choice).
                actual = read_h5(out_file, name)
                suite.check(actual.dtype.kind == ("O" if case.vlen else "S"),
                            "%s %s: dtype %s, expected %s strings" % (case.name, name, actual.dtype,
                                                                      "variable-length" if case.vlen else "fixed"),
                            res)
                got, want = as_byte_strings(actual), as_byte_strings(expected)
                suite.check(actual.shape == expected.shape and got == want,
                            "%s %s: strings differ from TensorFlow's: %r vs %r" % (case.name, name, got[:6], want[:6]),
                            res)
                continue
            same_array(suite, "%s %s vs TensorFlow" % (case.name, name), read_h5(out_file, name), expected, res)
        return
    expected = strip_tf_message(tf_result["message"])
    suite.require(not res.timed_out, "hung", res)
    suite.check(res.rc == 2, "TensorFlow raised %s; shardops exit %s, expected 2" %
                (tf_result.get("error_class", "NotFoundError (no kernel)"), res.rc), res)
    suite.check(expected in res.stderr, "stderr lacks TensorFlow's message %r" % expected, res)
    suite.check(len(error_lines(res.stderr)) == 1, "expected one error line", res)
    suite.check(not os.path.exists(out_file), "an output file was written although the op failed")


def main():
    args = parse_args(__doc__.splitlines()[0], default_np=2, extra=lambda p: p.add_argument(
        "--repo", default=os.path.dirname(os.path.dirname(HERE)), help="source tree (for .venv-tf)"))
    tf_python, tried = find_tf_python(args.repo)
    if not tf_python:
        print("SKIP: no Python with TensorFlow (tried: %s). scripts/setup.sh makes %s/.venv-tf (SHARDOPS_WITH_TF=1)."
              % ("; ".join(tried), args.repo))
        return SKIP_RC
    print("TensorFlow from " + tf_python)
    suite = Suite("e2e_tf_oracle_np_%d" % args.np, args)
    sh = Shardops(args)
    cases = (dtype_cases() + bad_index_cases() + empty_and_shape_cases() + string_cases() +
             tf_regressions.load(REGRESSIONS))
    cases = [c for c in cases if suite.wanted(c.name)]
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    with work_dir(args, "tf") as d:
        results, outputs = run_tf(tf_python, d, cases)
        counts = {}
        for c in cases:
            r = results[c.name]
            counts[r["status"]] = counts.get(r["status"], 0) + 1
            suite.case(c.name, compare, suite, sh, d, c, r, outputs)
        print("TensorFlow outcomes: %s" % ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
