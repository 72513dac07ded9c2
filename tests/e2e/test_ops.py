#!/usr/bin/python3
"""End-to-end: the shardops command against a NumPy reference (ctest e2e_ops_np_N).

Inputs are written with h5py, the real binary runs under mpiexec -n N, outputs are read
back with h5py and compared byte for byte (dtype, shape, bits) with npref.py. Covered:
every op x every dtype TensorFlow has a kernel for (gen.supported) x both index dtypes, the TensorFlow
documentation examples, --bad-indices ignore, large random inputs (10^5 rows, many
duplicates), empty and scalar tensors, big-endian/chunked/compressed inputs, provenance
attributes, --overwrite, adding to an existing file, and --report.

The op x dtype matrix (132 cases) is spread over the rank counts: at N ranks this runs the
cases whose number is congruent to N-1 mod 4, so e2e_ops_np_1..4 together run all of it
(--full runs the whole matrix at any N). Everything else runs at every N.
"""

import json
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py  # noqa: E402
import numpy as np  # noqa: E402

import gen  # noqa: E402
import npref  # noqa: E402
from e2e_common import (ALL_DTYPES, OPS, Shardops, Suite, expect_success, file_state, parse_args,  # noqa: E402
                        read_attrs, read_h5, ref, same_array, work_dir, write_h5, error_lines)

PHASES = ["read", "validate", "route", "apply", "write"]


class Ctx:
    def __init__(self, suite, sh, d):
        self.suite, self.sh, self.d = suite, sh, d

    def path(self, name):
        return os.path.join(self.d, name)


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def run_case(t, case, env=None):
    """Writes case's inputs, runs it, compares every output with the reference."""
    in_file, out_file = t.path(case.name + ".in.h5"), t.path(case.name + ".out.h5")
    write_h5(in_file, {"/" + k: v for k, v in case.arrays.items()}, mode="w")
    res = t.sh.run(case.argv(in_file, out_file), env=env)
    expect_success(t.suite, res, case.name)
    for name, expected in zip(case.output_names(), case.expected()):
        same_array(t.suite, "%s %s" % (case.name, name), read_h5(out_file, name), expected, res)
    return res, in_file, out_file


def check_values(t, what, out_file, dataset, expected, res):
    same_array(t.suite, what, read_h5(out_file, dataset), expected, res)


# ---------------------------------------------------------------------------------------------
# The op x dtype x index dtype matrix


def matrix_cases():
    cases = []
    for op in OPS:
        for j, dtype in enumerate(ALL_DTYPES):
            if not gen.supported(op, dtype):
                continue
            itype = "int32" if j % 2 == 0 else "int64"
            name = "matrix_%s_%s_%s" % (op, dtype, itype)
            cases.append((name, op, dtype, itype))
    return cases


def matrix_case(t, name, op, dtype, itype):
    case = gen.random_case(name, rng_for(name), op, dtype, itype)
    run_case(t, case)


# ---------------------------------------------------------------------------------------------
# TensorFlow's documentation examples (ints stand in for the strings of the gather_nd ones)


def doc_stitch_mixed_rank(t, op):
    indices = [np.int32(6), np.array([4, 1], np.int32), np.array([[5, 2], [0, 3]], np.int32)]
    data = [np.array([61, 62], np.int32), np.array([[41, 42], [11, 12]], np.int32),
            np.array([[[51, 52], [21, 22]], [[1, 2], [31, 32]]], np.int32)]
    expected = np.array([[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]], np.int32)
    arrays = {"i%d" % j: v for j, v in enumerate(indices)}
    arrays.update({"d%d" % j: v for j, v in enumerate(data)})
    case = gen.Case("doc_" + op + "_mixed_rank", op, arrays)
    same_array(t.suite, "reference of the doc example", case.expected()[0], expected)
    res, _, out = run_case(t, case)
    check_values(t, "doc example", out, "/out", expected, res)


def doc_partition_then_stitch(t):
    """tf.dynamic_stitch's example: partition, add 1 to one part, stitch back; -1 stays."""
    x = np.array([0.1, -1., 5.2, 4.3, -1., 7.4], np.float32)
    mask = (x != np.float32(-1.)).astype(np.int32)
    in_file, mid, out = t.path("doc_ps.in.h5"), t.path("doc_ps.mid.h5"), t.path("doc_ps.out.h5")
    write_h5(in_file, {"/x": x, "/mask": mask, "/range": np.arange(6, dtype=np.int32)}, mode="w")
    for what in ("x", "range"):
        res = t.sh.run(["dynamic-partition", "--data", ref(in_file, "/x" if what == "x" else "/range"),
                        "--partitions", ref(in_file, "/mask"), "--num-partitions", "2",
                        "--out", ref(mid, "/" + what), "-q"])
        expect_success(t.suite, res, "partition " + what)
    parts = [read_h5(mid, "/x/0"), read_h5(mid, "/x/1")]
    idx = [read_h5(mid, "/range/0"), read_h5(mid, "/range/1")]
    same_array(t.suite, "partition of x, part 0", parts[0], np.array([-1., -1.], np.float32))
    same_array(t.suite, "partition of x, part 1", parts[1], x[mask == 1])
    same_array(t.suite, "partition of range, part 0", idx[0], np.array([1, 4], np.int32))
    same_array(t.suite, "partition of range, part 1", idx[1], np.array([0, 2, 3, 5], np.int32))
    write_h5(mid, {"/x1_plus_1": parts[1] + np.float32(1.0)})
    res = t.sh.run(["dynamic-stitch", "--indices", ref(mid, "/range/0"), ref(mid, "/range/1"),
                    "--data", ref(mid, "/x/0"), ref(mid, "/x1_plus_1"), "--out", ref(out, "/x"), "-q"])
    expect_success(t.suite, res, "stitch back")
    expected = np.where(mask == 1, x + np.float32(1.0), x).astype(np.float32)  # [1.1, -1., 6.2, 5.3, -1., 8.4]
    check_values(t, "stitched", out, "/x", expected, res)


def partition_groups_stitched_back(t):
    """A list input given as one group is its datasets 0, 1, …, N-1 (as dynamic-partition
    writes them; 12 parts, so "10" and "11" come after "9", not after "1"): partition the
    rows and their positions, stitch `--indices F:/pos --data F:/parts` back to the rows
    (or a group with the other list named dataset by dataset).
    Members of other names are not read; a gap, a group without 0, and two lists of
    different lengths are usage errors (exit 2) that name the group."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((1000, 3)).astype(np.float32)
    parts = rng.integers(0, 12, 1000).astype(np.int32)
    in_file, mid = t.path("groups.in.h5"), t.path("groups.mid.h5")
    write_h5(in_file, {"/x": x, "/parts": parts, "/range": np.arange(1000, dtype=np.int32)}, mode="w")
    for what in ("x", "range"):
        res = t.sh.run(["dynamic-partition", "--data", ref(in_file, "/" + what), "--partitions",
                        ref(in_file, "/parts"), "--num-partitions", "12", "--out", ref(mid, "/" + what), "-q"])
        expect_success(t.suite, res, "partition " + what)
    with h5py.File(mid, "a") as f:
        f["x/notes"] = np.zeros(4, np.float32)  # another name: not one of the parts
        f["x/07"] = np.zeros((2, 3), np.float32)
        for k in (0, 1, 3):  # a gap: no 2
            f["gap/%d" % k] = f["range/%d" % k][()]
        f["no_zero/1"] = f["range/1"][()]
        for k in range(11):
            f["eleven/%d" % k] = f["x/%d" % k][()]
    for op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        out = t.path("groups.%s.h5" % op)
        res = t.sh.run([op, "--indices", ref(mid, "/range"), "--data", ref(mid, "/x"), "--out", ref(out, "/x"), "-q"])
        expect_success(t.suite, res, op + " of two groups")
        check_values(t, op + " of two groups", out, "/x", x, res)
    # A group for one list and the datasets named one by one for the other.
    out = t.path("groups.mixed.h5")
    res = t.sh.run(["dynamic-stitch", "--indices", ref(mid, "/range"), "--data"] +
                   [ref(mid, "/x/%d" % k) for k in range(12)] + ["--out", ref(out, "/x"), "-q"])
    expect_success(t.suite, res, "dynamic-stitch of a group and a list")
    check_values(t, "dynamic-stitch of a group and a list", out, "/x", x, res)
    bad = t.path("groups.bad.h5")
    for indices, data, needle in (("/gap", "/x", "has a member named 3 but none named 2"),
                                  ("/no_zero", "/x", "is a group with no dataset named 0"),
                                  ("/range", "/eleven", "must name as many datasets")):
        res = t.sh.run(["dynamic-stitch", "--indices", ref(mid, indices), "--data", ref(mid, data),
                        "--out", ref(bad, "/x"), "-q"])
        t.suite.check(res.rc == 2, "stitch of %s and %s: exit %s, expected 2" % (indices, data, res.rc), res)
        t.suite.check(needle in res.stderr, "stitch of %s and %s: the message lacks %r" % (indices, data, needle), res)
        t.suite.check(not os.path.exists(bad), "stitch of %s and %s made %s" % (indices, data, bad), res)


def doc_simple(t, name, op, arrays, expected, shape=None):
    case = gen.Case(name, op, arrays, shape=shape)
    same_array(t.suite, "reference of the doc example", case.expected()[0], expected)
    res, _, out = run_case(t, case)
    check_values(t, "doc example", out, "/out", expected, res)


def doc_examples(suite, t):
    i32 = lambda v: np.array(v, np.int32)
    for op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        suite.case("doc_%s_mixed_rank" % op, doc_stitch_mixed_rank, t, op)
    suite.case("doc_partition_add_stitch", doc_partition_then_stitch, t)
    suite.case("partition_groups_stitched_back", partition_groups_stitched_back, t)
    suite.case("doc_scatter_nd_1", doc_simple, t, "doc_scatter_nd_1", "scatter-nd",
               {"indices": i32([[4], [3], [1], [7]]), "updates": i32([9, 10, 11, 12])},
               i32([0, 11, 0, 10, 9, 0, 0, 12]), shape=(8,))
    slab = [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]
    zero = [[0] * 4] * 4
    suite.case("doc_scatter_nd_2", doc_simple, t, "doc_scatter_nd_2", "scatter-nd",
               {"indices": i32([[1], [3]]), "updates": i32([slab, slab])}, i32([zero, slab, zero, slab]),
               shape=(4, 4, 4))
    suite.case("doc_tensor_scatter_update_1", doc_simple, t, "doc_tsu_1", "tensor-scatter-update",
               {"tensor": i32([0] * 8), "indices": i32([[1], [3], [4], [7]]), "updates": i32([9, 10, 11, 12])},
               i32([0, 9, 0, 10, 11, 0, 0, 12]))
    suite.case("doc_tensor_scatter_update_2", doc_simple, t, "doc_tsu_2", "tensor-scatter-update",
               {"tensor": i32([[1, 1], [1, 1], [1, 1]]), "indices": i32([[0, 1], [2, 0]]), "updates": i32([5, 10])},
               i32([[1, 5], [1, 1], [10, 1]]))
    suite.case("doc_tensor_scatter_add", doc_simple, t, "doc_tsa", "tensor-scatter-add",
               {"tensor": i32([1, 2, 3, 4, 5, 6, 7, 8]), "indices": i32([[4], [3], [1], [7]]),
                "updates": i32([9, 10, 11, 12])}, i32([1, 13, 3, 14, 14, 6, 7, 20]))
    suite.case("doc_tensor_scatter_max", doc_simple, t, "doc_tsmax", "tensor-scatter-max",
               {"tensor": i32([0] * 8), "indices": i32([[4], [3], [1], [7]]), "updates": i32([9, 10, 11, 12])},
               i32([0, 11, 0, 10, 9, 0, 0, 12]))
    suite.case("doc_tensor_scatter_min", doc_simple, t, "doc_tsmin", "tensor-scatter-min",
               {"tensor": i32([0] * 8), "indices": i32([[4], [3], [1], [7]]), "updates": i32([-9, -10, -11, -12])},
               i32([0, -11, 0, -10, -9, 0, 0, -12]))
    # gather_nd: params [['a','b'],['c','d']] -> a=1 b=2 c=3 d=4; 3-D: a0..d1 -> 10*(0/1) + 1..4
    p2 = i32([[1, 2], [3, 4]])
    p3 = i32([[[1, 2], [3, 4]], [[11, 12], [13, 14]]])
    suite.case("doc_gather_nd_1", doc_simple, t, "doc_gnd_1", "gather-nd",
               {"params": p2, "indices": i32([[0, 0], [1, 1]])}, i32([1, 4]))
    suite.case("doc_gather_nd_2", doc_simple, t, "doc_gnd_2", "gather-nd",
               {"params": p2, "indices": i32([[1], [0]])}, i32([[3, 4], [1, 2]]))
    suite.case("doc_gather_nd_3", doc_simple, t, "doc_gnd_3", "gather-nd",
               {"params": p3, "indices": i32([[0, 1], [1, 0]])}, i32([[3, 4], [11, 12]]))
    suite.case("doc_gather_nd_4", doc_simple, t, "doc_gnd_4", "gather-nd",
               {"params": p3, "indices": i32([[0, 0, 1], [1, 0, 1]])}, i32([2, 12]))
    suite.case("doc_gather_nd_batched", doc_simple, t, "doc_gnd_5", "gather-nd",
               {"params": p3, "indices": i32([[[0, 1]], [[1, 0]]])}, i32([[[3, 4]], [[11, 12]]]))


# ---------------------------------------------------------------------------------------------
# Larger random inputs: 10^5 rows, many duplicates


def large_cases(suite, t):
    n = 100_000

    def case(name, make, env=None):
        suite.case(name, lambda: run_case(t, make(rng_for(name)), env=env))

    case("large_scatter_nd_float32", lambda r: gen.Case(
        "large_scatter_nd_float32", "scatter-nd",
        {"indices": r.integers(0, 20_000, (n, 1)).astype(np.int64),
         "updates": gen.values(r, "float32", (n, 4))}, shape=(20_000, 4)))
    case("large_tensor_scatter_add_float16", lambda r: gen.Case(
        "large_tensor_scatter_add_float16", "tensor-scatter-add",
        {"tensor": gen.values(r, "float16", (3000, 2)), "indices": r.integers(0, 3000, (n, 1)).astype(np.int32),
         "updates": (r.standard_normal((n, 2)) * 3).astype(np.float16)}))
    for schedule in ("sequential", "parallel"):  # same bytes whichever way the kernels run
        name = "large_scatter_nd_float16_schedule_" + schedule
        case(name, lambda r, name=name, schedule=schedule: gen.Case(
            name, "scatter-nd", {"indices": r.integers(0, 2000, (n, 1)).astype(np.int32),
                                 "updates": (r.standard_normal((n, 2)) * 3).astype(np.float16)},
            shape=(2000, 2), extra=["--schedule", schedule]), env={"OMP_NUM_THREADS": "2"})
    case("large_tensor_scatter_update_int64", lambda r: gen.Case(
        "large_tensor_scatter_update_int64", "tensor-scatter-update",
        {"tensor": gen.values(r, "int64", (10_000, 3)), "indices": r.integers(0, 10_000, (n, 1)).astype(np.int32),
         "updates": gen.values(r, "int64", (n, 3))}))
    case("large_tensor_scatter_sub_int32_2d", lambda r: gen.Case(
        "large_tensor_scatter_sub_int32_2d", "tensor-scatter-sub",
        {"tensor": gen.values(r, "int32", (100, 50, 2)),
         "indices": np.stack([r.integers(0, 100, n), r.integers(0, 50, n)], -1).astype(np.int64),
         "updates": r.integers(-2**31, 2**31, (n, 2), dtype=np.int64).astype(np.int32)}))
    case("large_tensor_scatter_max_float64", lambda r: gen.Case(
        "large_tensor_scatter_max_float64", "tensor-scatter-max",
        {"tensor": gen.values(r, "float64", (20_000,), specials=True),
         "indices": r.integers(0, 20_000, (n, 1)).astype(np.int64),
         "updates": gen.values(r, "float64", (n,), specials=True)}))
    case("large_gather_nd_complex64", lambda r: gen.Case(
        "large_gather_nd_complex64", "gather-nd",
        {"params": gen.values(r, "complex64", (50_000, 4)), "indices": r.integers(0, 50_000, (n, 1)).astype(np.int32)}))
    case("large_dynamic_partition_uint16", lambda r: gen.Case(
        "large_dynamic_partition_uint16", "dynamic-partition",
        {"data": gen.values(r, "uint16", (n, 3)), "partitions": r.integers(0, 7, n).astype(np.int32)},
        num_partitions=7))
    case("large_dynamic_stitch_int8", lambda r: gen.Case(
        "large_dynamic_stitch_int8", "dynamic-stitch",
        {"i0": r.integers(0, 60_000, 40_000).astype(np.int32), "i1": r.integers(0, 60_000, 35_000).astype(np.int32),
         "i2": r.integers(0, 70_000, 25_000).astype(np.int32), "d0": gen.values(r, "int8", (40_000, 2)),
         "d1": gen.values(r, "int8", (35_000, 2)), "d2": gen.values(r, "int8", (25_000, 2))}))


# ---------------------------------------------------------------------------------------------
# --bad-indices ignore, empty and scalar tensors, file layouts


def ignore_cases(suite, t):
    def scatter(r):
        idx = r.integers(-3, 12, (40, 1)).astype(np.int32)  # some negative, some >= 10
        return gen.Case("ignore_scatter_nd", "scatter-nd", {"indices": idx, "updates": gen.values(r, "float64", (40, 2))},
                        shape=(10, 2), bad_indices="ignore")

    def tsub(r):
        idx = np.stack([r.integers(0, 7, 50), r.integers(-2, 5, 50)], -1).astype(np.int64)
        return gen.Case("ignore_tensor_scatter_sub", "tensor-scatter-sub",
                        {"tensor": gen.values(r, "int16", (6, 4)), "indices": idx, "updates": gen.values(r, "int16", (50,))},
                        bad_indices="ignore")

    def gather(r):
        idx = r.integers(-2, 9, (30, 1)).astype(np.int64)
        return gen.Case("ignore_gather_nd", "gather-nd", {"params": gen.values(r, "float32", (7, 3)), "indices": idx},
                        bad_indices="ignore")

    for name, make in (("ignore_scatter_nd", scatter), ("ignore_tensor_scatter_sub", tsub),
                       ("ignore_gather_nd", gather)):
        suite.case(name, lambda make=make, name=name: run_case(t, make(rng_for(name))))


def edge_cases(suite, t):
    f32 = np.float32
    suite.case("empty_scatter_nd", lambda: run_case(t, gen.Case(
        "empty_scatter_nd", "scatter-nd", {"indices": np.zeros((0, 1), np.int64), "updates": np.zeros((0, 3), f32)},
        shape=(5, 3))))
    suite.case("empty_gather_nd", lambda: run_case(t, gen.Case(
        "empty_gather_nd", "gather-nd",
        {"params": np.arange(12, dtype=np.uint8).reshape(4, 3), "indices": np.zeros((0, 1), np.int32)})))
    suite.case("empty_dynamic_partition", lambda: run_case(t, gen.Case(
        "empty_dynamic_partition", "dynamic-partition",
        {"data": np.zeros((0, 2), np.complex128), "partitions": np.zeros((0,), np.int32)}, num_partitions=3)))
    suite.case("empty_dynamic_stitch", lambda: run_case(t, gen.Case(
        "empty_dynamic_stitch", "dynamic-stitch",
        {"i0": np.zeros((0,), np.int32), "i1": np.zeros((0, 2), np.int32),
         "d0": np.zeros((0, 3), np.float64), "d1": np.zeros((0, 2, 3), np.float64)})))
    suite.case("scalar_dynamic_partition", lambda: run_case(t, gen.Case(
        "scalar_dynamic_partition", "dynamic-partition",
        {"data": np.float64(2.5), "partitions": np.int32(1)}, num_partitions=3)))
    suite.case("gather_nd_depth0", lambda: run_case(t, gen.Case(
        "gather_nd_depth0", "gather-nd",
        {"params": np.arange(6, dtype=np.int16).reshape(3, 2), "indices": np.zeros((4, 0), np.int32)})))
    # Rank-1 indices are ONE index row (output without the batch dim; a scalar lives on rank 0).
    # (TF refuses rank-1 indices for the scatter family; test_tf_oracle.py checks those texts.)
    one_row = [
        ("one_row_gather_nd_scalar_out", gen.Case("one_row_gather_nd_scalar_out", "gather-nd", {
            "params": np.arange(12, dtype=np.float64).reshape(4, 3), "indices": np.array([2, 1], np.int64)})),
        ("one_row_gather_nd_slice", gen.Case("one_row_gather_nd_slice", "gather-nd", {
            "params": np.arange(12, dtype=np.int32).reshape(4, 3), "indices": np.array([3], np.int32)})),
        ("scalar_stitch", gen.Case("scalar_stitch", "dynamic-stitch", {
            "i0": np.int32(2), "i1": np.int32(0), "d0": np.float32(5), "d1": np.float32(-1)})),
    ]
    for name, c in one_row:
        suite.case(name, lambda c=c: run_case(t, c))
    suite.case("big_endian_chunked_gzip_nested", io_layouts, t)


def io_layouts(t):
    """Big-endian, chunked + gzip inputs in nested groups; output into a nested group."""
    r = rng_for("io_layouts")
    n = 5000
    idx = r.integers(0, 700, (n, 1)).astype(">i8")
    upd = r.standard_normal((n, 3)).astype(">f8")
    tensor = r.standard_normal((700, 3)).astype(">f8")
    in_file, out = t.path("layouts.in.h5"), t.path("layouts.out.h5")
    write_h5(in_file, {"/a/b/idx": idx, "/a/b/upd": upd, "/t/tensor": tensor}, mode="w", chunks=True,
             compression="gzip")
    res = t.sh.run(["tensor-scatter-add", "--tensor", ref(in_file, "/t/tensor"), "--indices", ref(in_file, "/a/b/idx"),
                    "--updates", ref(in_file, "/a/b/upd"), "--out", ref(out, "/r/s/out"), "-q"])
    expect_success(t.suite, res)
    expected = npref.tensor_scatter("add", tensor.astype(np.float64), idx.astype(np.int64), upd.astype(np.float64))
    check_values(t, "little-endian result", out, "/r/s/out", expected, res)


# ---------------------------------------------------------------------------------------------
# Provenance, --overwrite, adding to an existing file, --report


def output_handling(t):
    r = rng_for("output_handling")
    params = gen.values(r, "float32", (50, 3))
    idx_a = r.integers(0, 50, (20, 1)).astype(np.int32)
    idx_b = r.integers(0, 50, (33, 1)).astype(np.int32)
    in_file, out, report = t.path("oh.in.h5"), t.path("oh.out.h5"), t.path("oh.report.json")
    write_h5(in_file, {"/params": params, "/idx_a": idx_a, "/idx_b": idx_b}, mode="w")
    base = ["gather-nd", "--params", ref(in_file, "/params"), "-q"]

    # 1. A first run with --report: output, attributes, report.
    res = t.sh.run(base + ["--indices", ref(in_file, "/idx_a"), "--out", ref(out, "/g"), "--report", report])
    expect_success(t.suite, res)
    check_values(t, "first output", out, "/g", npref.gather_nd(params, idx_a), res)
    attrs = read_attrs(out, "/g")
    t.suite.check(attrs.get("op") == "gather-nd", "attribute op = %r, expected 'gather-nd' (all: %r)"
                  % (attrs.get("op"), attrs))
    inputs = str(attrs.get("inputs", ""))
    t.suite.check(ref(in_file, "/params") in inputs and ref(in_file, "/idx_a") in inputs,
                  "attribute inputs = %r does not name both inputs" % inputs)
    t.suite.check(str(attrs.get("shardops_version", "")).strip() != "",
                  "no shardops_version attribute (all: %r)" % attrs)
    t.suite.check("options" in attrs, "no options attribute (all: %r)" % attrs)
    check_report(t, report, "gather-nd", params.nbytes + idx_a.nbytes, 20 * 3 * 4)

    # 2. The same output again without --overwrite: refused, file untouched.
    before = file_state(out)
    listing = sorted(os.listdir(t.d))
    res = t.sh.run(base + ["--indices", ref(in_file, "/idx_b"), "--out", ref(out, "/g")])
    t.suite.check(res.rc == 2, "existing output without --overwrite: exit %s, expected 2" % res.rc, res)
    lines = error_lines(res.stderr)
    t.suite.check(len(lines) == 1 and "--overwrite" in res.stderr and ref(out, "/g") in res.stderr,
                  "expected one error line naming %s and suggesting --overwrite" % ref(out, "/g"), res)
    t.suite.check(file_state(out) == before, "the output file changed although the run failed")
    t.suite.check(sorted(os.listdir(t.d)) == listing, "files appeared or vanished: %s -> %s"
                  % (listing, sorted(os.listdir(t.d))))

    # 3. --overwrite replaces it.
    res = t.sh.run(base + ["--indices", ref(in_file, "/idx_b"), "--out", ref(out, "/g"), "--overwrite"])
    expect_success(t.suite, res, "--overwrite")
    check_values(t, "overwritten output", out, "/g", npref.gather_nd(params, idx_b), res)

    # 4. A new dataset in the existing file keeps the others.
    res = t.sh.run(base + ["--indices", ref(in_file, "/idx_a"), "--out", ref(out, "/more/h")])
    expect_success(t.suite, res, "second dataset in the same file")
    check_values(t, "kept dataset", out, "/g", npref.gather_nd(params, idx_b), res)
    check_values(t, "added dataset", out, "/more/h", npref.gather_nd(params, idx_a), res)
    t.suite.check(not [f for f in os.listdir(t.d) if "shardops-tmp" in f],
                  "temporary files left behind: %s" % os.listdir(t.d))

    # 5. Numbered outputs list in the order written (h5py follows the tracked creation
    # order), in a new file and in new groups of an existing one.
    data = np.arange(240, dtype=np.float32).reshape(120, 2)
    parts = (np.arange(120) % 12).astype(np.int32)
    write_h5(in_file, {"/pd": data, "/pp": parts})
    for target in (t.path("oh.parts.h5"), out):
        res = t.sh.run(["dynamic-partition", "--data", ref(in_file, "/pd"), "--partitions", ref(in_file, "/pp"),
                        "--num-partitions", "12", "--out", ref(target, "/parts"), "-q"])
        expect_success(t.suite, res, "dynamic-partition into %s" % target)
        with h5py.File(target, "r") as f:
            names = list(f["parts"])
        t.suite.check(names == [str(p) for p in range(12)], "h5py lists %s/parts as %s" % (target, names), res)


def check_report(t, path, command, bytes_read, bytes_written):
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        t.suite.require(False, "--report %s: not readable JSON: %s" % (path, e))
    t.suite.check(rep.get("command") == command, "report command = %r" % rep.get("command"))
    t.suite.check(rep.get("ranks") == t.sh.np, "report ranks = %r, expected %d" % (rep.get("ranks"), t.sh.np))
    secs = rep.get("seconds", {})
    for p in PHASES:
        v = secs.get(p)
        t.suite.check(isinstance(v, (int, float)) and v >= 0, "report seconds[%r] = %r" % (p, v))
    t.suite.check(isinstance(secs.get("total"), (int, float)) and secs["total"] > 0,
                  "report seconds.total = %r" % secs.get("total"))
    b = rep.get("bytes", {})
    t.suite.check(b.get("read") == bytes_read, "report bytes.read = %r, expected %d" % (b.get("read"), bytes_read))
    t.suite.check(b.get("written") == bytes_written,
                  "report bytes.written = %r, expected %d" % (b.get("written"), bytes_written))


def main():
    args = parse_args(__doc__.splitlines()[0], default_np=2, extra=lambda p: p.add_argument(
        "--full", action="store_true", help="run the whole op x dtype matrix at this rank count"))
    full = args.full
    suite = Suite("e2e_ops_np_%d" % args.np, args)
    sh = Shardops(args)
    with work_dir(args, "ops") as d:
        t = Ctx(suite, sh, d)
        doc_examples(suite, t)
        edge_cases(suite, t)
        ignore_cases(suite, t)
        suite.case("output_handling", output_handling, t)
        large_cases(suite, t)
        for i, (name, op, dtype, itype) in enumerate(matrix_cases()):
            if full or i % 4 == (args.np - 1) % 4:
                suite.case(name, matrix_case, t, name, op, dtype, itype)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
