#!/usr/bin/python3
"""End-to-end: string datasets through the shardops command (ctest e2e_strings_np_N).

Inputs written by h5py as variable-length UTF-8 (h5py.string_dtype()) and fixed-length
(numpy S<n>) strings; every string-capable op (dynamic-partition, dynamic-stitch,
parallel-dynamic-stitch, scatter-nd, tensor-scatter-update, gather-nd) runs under
mpiexec -n N and its output is read back with h5py and compared with a pure-Python
reference of TF's semantics: same string type as the input, same strings byte for byte.
Covered: empty strings, long strings (> 64 KiB), non-ASCII UTF-8, embedded NULs in
fixed-length data, mixed lengths, ScatterNd's concatenation in index order, a deck with
inline strings, and TF's error for the ops that take no strings (exit 2, nothing written).
"""

import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from e2e_common import (Shardops, Suite, error_lines, expect_success, file_state, parse_args, ref,  # noqa: E402
                        work_dir)

LONG = "L" * 70000 + "end"
UTF8 = ["gr\u00f6\u00dfe", "\u65e5\u672c\u8a9e", "\U0001F600", "caf\u00e9"]


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def random_texts(rng, n, fixed):
    """n strings of mixed lengths: empty, short, UTF-8 (vlen), NUL inside (fixed), long."""
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 10))
        if k == 0:
            out.append(b"")
        elif k == 1:
            out.append((LONG if not fixed else "L" * 300).encode())
        elif k == 2 and not fixed:
            out.append(UTF8[int(rng.integers(0, len(UTF8)))].encode())
        elif k == 3 and fixed:
            out.append(b"a\x00b" + bytes([65 + int(rng.integers(0, 26))]))
        else:
            out.append(("s%d" % int(rng.integers(0, 1000))).encode())
    return out


class StringData:
    """A nested list of byte strings and how to store it."""

    def __init__(self, values, shape, fixed):
        self.values, self.shape, self.fixed = list(values), tuple(shape), fixed

    def rows(self):
        per = int(np.prod(self.shape[1:])) if len(self.shape) > 1 else 1
        return [self.values[i * per:(i + 1) * per] for i in range(self.shape[0])]

    def to_h5(self):
        if self.fixed:
            width = max([len(v) for v in self.values] + [1])
            return np.array(self.values, dtype="S%d" % width).reshape(self.shape)
        arr = np.array([v.decode("utf-8") for v in self.values] or [], dtype=object).reshape(self.shape)
        return arr


def write(path, datasets):
    with h5py.File(path, "w") as f:
        for name, arr in datasets.items():
            if isinstance(arr, StringData):
                data = arr.to_h5()
                if arr.fixed:
                    f.create_dataset(name, data=data)
                else:
                    f.create_dataset(name, data=data, dtype=h5py.string_dtype())
            else:
                f.create_dataset(name, data=np.asarray(arr))


def read_strings(suite, path, name, fixed, res):
    """The output's strings (bytes, row-major) after checking its HDF5 string type."""
    with h5py.File(path, "r") as f:
        ds = f[name]
        info = h5py.check_string_dtype(ds.dtype)
        suite.require(info is not None, "%s: not a string dataset (%s)" % (name, ds.dtype), res)
        if fixed:
            suite.check(info.length is not None, "%s: fixed-length input, variable-length output" % name, res)
            data = ds[()]
            flat = [bytes(x) for x in np.asarray(data).reshape(-1)]
        else:
            suite.check(info.length is None and info.encoding == "utf-8",
                        "%s: expected variable-length UTF-8, got %r" % (name, info), res)
            data = ds.asstr()[()] if ds.shape != () else ds.asstr()[()]
            flat = [x.encode("utf-8") for x in np.asarray(data, dtype=object).reshape(-1)]
        return list(ds.shape), flat


def compare(suite, what, path, name, fixed, shape, expected, res):
    got_shape, got = read_strings(suite, path, name, fixed, res)
    if not suite.check(got_shape == list(shape), "%s: shape %s, expected %s" % (what, got_shape, list(shape)), res):
        return
    if fixed:  # numpy reads fixed-length strings with trailing NULs stripped
        expected = [e.rstrip(b"\x00") for e in expected]
    for i, (g, e) in enumerate(zip(got, expected)):
        if not suite.check(g == e, "%s: element %d is %r (%d bytes), expected %r (%d bytes)" %
                           (what, i, g[:40], len(g), e[:40], len(e)), res):
            return


# ------------------------------------------------------------------ TF's semantics on lists


def ref_partition(rows, parts, n):
    return [[r for r, p in zip(rows, parts) if p == k] for k in range(n)]


def ref_stitch(indices, datas, slice_len):
    size = max([max(i) for i in indices if len(i)] + [-1]) + 1
    out = [[b""] * slice_len for _ in range(size)]
    for idx, rows in zip(indices, datas):
        for i, r in zip(idx, rows):
            out[i] = r
    return out


def ref_scatter_nd(indices, rows, size, slice_len, tensor=None):
    out = [list(r) for r in tensor] if tensor is not None else [[b""] * slice_len for _ in range(size)]
    for i, r in zip(indices, rows):
        out[i] = list(r) if tensor is not None else [a + b for a, b in zip(out[i], r)]
    return out


def flat(rows):
    return [v for r in rows for v in r]


# ------------------------------------------------------------------ cases


def op_cases(suite, sh, d, fixed):
    kind = "fixed" if fixed else "vlen"
    rng = rng_for(kind)
    n, slice_len = 29, 2
    data = StringData(random_texts(rng, n * slice_len, fixed), (n, slice_len), fixed)
    rows = data.rows()

    def run(name, argv, outputs):
        src, out = os.path.join(d, name + ".in.h5"), os.path.join(d, name + ".out.h5")
        write(src, inputs)
        res = sh.run([a.replace("IN", src).replace("OUT", out) for a in argv])
        expect_success(suite, res, name)
        for dataset, shape, expected in outputs:
            compare(suite, "%s %s" % (name, dataset), out, dataset, fixed, shape, expected, res)

    # dynamic-partition into 4
    parts = [int(x) for x in rng.integers(0, 4, n)]
    inputs = {"/data": data, "/p": np.array(parts, dtype=np.int32)}
    expected = ref_partition(rows, parts, 4)
    suite.case("partition_" + kind, run, "partition_" + kind,
               ["dynamic-partition", "--data", "IN:/data", "--partitions", "IN:/p", "--num-partitions", "4",
                "--out", "OUT:/parts"],
               [("/parts/%d" % k, (len(expected[k]), slice_len), flat(expected[k])) for k in range(4)])

    # dynamic-stitch / parallel-dynamic-stitch of two inputs with duplicates and holes
    i0 = [int(x) for x in rng.integers(0, 40, n)]
    i1 = [int(x) for x in rng.integers(0, 45, 7)]
    d1 = StringData(random_texts(rng, 7 * slice_len, fixed), (7, slice_len), fixed)
    merged = ref_stitch([i0, i1], [rows, d1.rows()], slice_len)
    for op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        inputs = {"/i0": np.array(i0, np.int32), "/i1": np.array(i1, np.int32), "/d0": data, "/d1": d1}
        suite.case("%s_%s" % (op, kind), run, "%s_%s" % (op, kind),
                   [op, "--indices", "IN:/i0", "IN:/i1", "--data", "IN:/d0", "IN:/d1", "--out", "OUT:/m"],
                   [("/m", (len(merged), slice_len), flat(merged))])

    # scatter-nd: duplicates concatenate in index order (hot rows: long runs)
    for itype in ("int32", "int64"):
        idx = [int(x) for x in rng.integers(0, 5, n)]
        inputs = {"/i": np.array(idx, dtype=itype).reshape(n, 1), "/u": data}
        out_rows = ref_scatter_nd(idx, rows, 6, slice_len)
        suite.case("scatter_nd_%s_%s" % (kind, itype), run, "scatter_nd_%s_%s" % (kind, itype),
                   ["scatter-nd", "--indices", "IN:/i", "--updates", "IN:/u", "--shape", "6,%d" % slice_len,
                    "--out", "OUT:/o"],
                   [("/o", (6, slice_len), flat(out_rows))])

    # tensor-scatter-update: last duplicate wins
    t = StringData(random_texts(rng, 11 * slice_len, fixed), (11, slice_len), fixed)
    idx = [int(x) for x in rng.integers(0, 11, n)]
    inputs = {"/t": t, "/i": np.array(idx, np.int64).reshape(n, 1), "/u": data}
    suite.case("tensor_scatter_update_" + kind, run, "tensor_scatter_update_" + kind,
               ["tensor-scatter-update", "--tensor", "IN:/t", "--indices", "IN:/i", "--updates", "IN:/u",
                "--out", "OUT:/o"],
               [("/o", (11, slice_len), flat(ref_scatter_nd(idx, rows, 11, slice_len, tensor=t.rows())))])

    # gather-nd of rows and of single elements
    gi = [int(x) for x in rng.integers(0, n, 17)]
    inputs = {"/p": data, "/i": np.array(gi, np.int32).reshape(17, 1),
              "/e": np.array([[g, g % slice_len] for g in gi], np.int64)}
    suite.case("gather_rows_" + kind, run, "gather_rows_" + kind,
               ["gather-nd", "--params", "IN:/p", "--indices", "IN:/i", "--out", "OUT:/o"],
               [("/o", (17, slice_len), flat([rows[g] for g in gi]))])
    suite.case("gather_elements_" + kind, run, "gather_elements_" + kind,
               ["gather-nd", "--params", "IN:/p", "--indices", "IN:/e", "--out", "OUT:/o"],
               [("/o", (17,), [rows[g][g % slice_len] for g in gi])])


def no_string_kernel(suite, sh, d):
    src, out = os.path.join(d, "add.in.h5"), os.path.join(d, "add.out.h5")
    write(src, {"/t": StringData([b"a", b"b"], (2,), False), "/i": np.array([[1]], np.int32),
                "/u": StringData([b"q"], (1,), False)})
    res = sh.run(["tensor-scatter-add", "--tensor", src + ":/t", "--indices", src + ":/i", "--updates", src + ":/u",
                  "--out", out + ":/o"])
    suite.check(res.rc == 2, "tensor-scatter-add on strings: exit %s, expected 2" % res.rc, res)
    suite.check(any("Could not find device for node: {{node TensorScatterAdd}}" in line
                    for line in error_lines(res.stderr)), "tensor-scatter-add on strings: TF's message", res)
    suite.check(file_state(out) is None, "tensor-scatter-add on strings: an output file was written", res)


def mixed_charsets(suite, sh, d):
    # ASCII and UTF-8 inputs of one op: the output is labelled UTF-8 (ASCII is its subset), so
    # that every string in it reads back as text. It kept the first input's ASCII before.
    src = os.path.join(d, "charsets.in.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("a", data=np.array([b"a", b"bb"], dtype=object), dtype=h5py.string_dtype("ascii"))
        f.create_dataset("u", data=np.array(["\u00e9"], dtype=object), dtype=h5py.string_dtype("utf-8"))
        f["i0"], f["i1"], f["t"] = np.array([0, 1], np.int32), np.array([2], np.int32), np.array([[1]], np.int32)
    for name, argv, expected in [
            ("stitch", ["dynamic-stitch", "--indices", src + ":/i0", src + ":/i1", "--data", src + ":/a", src + ":/u"],
             ["a", "bb", "\u00e9"]),
            ("update", ["tensor-scatter-update", "--tensor", src + ":/a", "--indices", src + ":/t", "--updates",
                        src + ":/u"], ["a", "\u00e9"])]:
        out = os.path.join(d, "charsets.%s.h5" % name)
        res = sh.run(argv + ["--out", out + ":/o"])
        expect_success(suite, res, "mixed charsets " + name)
        with h5py.File(out, "r") as f:
            info = h5py.check_string_dtype(f["o"].dtype)
            suite.check(info is not None and info.encoding == "utf-8", "%s: output labelled %r" % (name, info), res)
            suite.check(list(f["o"].asstr()[()]) == expected, "%s: %r" % (name, list(f["o"][()])), res)


def deck_with_inline_strings(suite, sh, d):
    deck = os.path.join(d, "strings.yaml")
    with open(deck, "w") as f:
        f.write("""tensors:
  words: {value: ["b", "c", "\u00e9t\u00e9", ""]}
  idx: {value: [[1], [1], [0], [1]], dtype: int64}
steps:
  - op: scatter_nd
    indices: idx
    updates: words
    shape: [3]
    out: joined
outputs:
  joined: out.h5:/joined
""")
    res = sh.run(["run", deck])
    expect_success(suite, res, "deck with inline strings")
    compare(suite, "deck joined", os.path.join(d, "out.h5"), "/joined", False, (3,),
            ["\u00e9t\u00e9".encode(), b"bc", b""], res)


def widened_fixed_length(suite, sh, d):
    """ScatterNd concatenates fixed-length strings into a fixed-length output as wide as the
    longest: where that pads every other element to far more than the strings hold (200,000
    S10 updates into one of 2,000 elements: 2 MB x 2,000 = 4 GB of padding, from 2 MB of
    updates), the output is variable-length instead, the same strings; a few concatenations
    stay fixed-length, widened."""
    src = os.path.join(d, "widen.h5")
    many = np.array([b"%09d;" % i for i in range(200000)], dtype="S10")
    few = np.array([b"ab", b"cde", b"f"], dtype="S3")
    with h5py.File(src, "w") as f:
        f["many_i"] = np.zeros((len(many), 1), np.int64)
        f["many_u"] = many
        f["few_i"] = np.zeros((3, 1), np.int64)
        f["few_u"] = few
    for name, shape, expected_first, fixed in (("many", 2000, b"".join(many), False), ("few", 5, b"abcdef", True)):
        out = os.path.join(d, "widen-%s.h5" % name)
        res = sh.run(["scatter-nd", "--indices", ref(src, "/%s_i" % name), "--updates", ref(src, "/%s_u" % name),
                      "--shape", str(shape), "--out", ref(out, "/s"), "-q"])
        suite.require(res.rc == 0, "%s: exit %s" % (name, res.rc), res)
        with h5py.File(out, "r") as f:
            ds = f["/s"]
            info = h5py.check_string_dtype(ds.dtype)
            suite.check(info is not None, "%s: not a string dataset: %s" % (name, ds.dtype), res)
            suite.check((info.length is not None) == fixed, "%s: %s-length, expected %s" % (
                name, "fixed" if info.length else "variable", "fixed" if fixed else "variable"), res)
            if fixed:
                suite.check(info.length == len(expected_first), "%s: width %s" % (name, info.length), res)
            values = [v if isinstance(v, bytes) else v.encode() for v in ds[()]]
        suite.check(values[0] == expected_first, "%s: element 0 is not the concatenation" % name, res)
        suite.check(all(v == b"" for v in values[1:]), "%s: other elements not empty" % name, res)
        suite.check(os.path.getsize(out) < 64 << 20, "%s: a file of %d bytes" % (name, os.path.getsize(out)), res)


def many_string_partitions(suite, sh, d):
    """Variable-length strings into 300 partitions (some empty) at once, with a number output
    of the same job beside them (a deck), into a new file and into an existing one (then run
    again with --overwrite): every rank writes its rows of every string dataset in one turn at
    the commit; each partition reads back as NumPy's, listed in order, beside the numbers."""
    rng = rng_for("many")
    n, parts = 3000, 300
    texts = random_texts(rng, n, False)
    p = [int(x) for x in rng.integers(0, parts - 20, n)]  # the last 20 partitions are empty
    nums = np.arange(n, dtype=np.int64)
    src = os.path.join(d, "many.in.h5")
    write(src, {"/data": StringData(texts, (n,), False), "/p": np.array(p, np.int32), "/n": nums})
    expected = ref_partition(texts, p, parts)
    expected_nums = ref_partition(list(nums), p, parts)
    deck = os.path.join(d, "many.yaml")
    for target, extra in (("many.new.h5", []), ("many.existing.h5", []), ("many.existing.h5", ["--overwrite"])):
        out = os.path.join(d, target)
        if target == "many.new.h5" and os.path.exists(out):
            os.remove(out)
        if target == "many.existing.h5" and not extra:
            write(out, {"/keep": np.arange(10, dtype=np.int32)})
        with open(deck, "w") as f:
            f.write("tensors:\n  s: %s:/data\n  p: %s:/p\n  n: %s:/n\nsteps:\n"
                    "  - {op: dynamic_partition, data: s, partitions: p, num_partitions: %d, out: sp}\n"
                    "  - {op: dynamic_partition, data: n, partitions: p, num_partitions: %d, out: np}\n"
                    "outputs:\n" % (src, src, src, parts, parts))
            for k in range(parts):
                f.write("  sp/%d: %s:/strings/%d\n  np/%d: %s:/numbers/%d\n" % (k, out, k, k, out, k))
        res = sh.run(["run", deck, "-q"] + extra)
        expect_success(suite, res, "%s %s" % (target, " ".join(extra)))
        with h5py.File(out, "r") as f:
            suite.check(list(f["strings"]) == [str(k) for k in range(parts)], "the partitions are not listed in order",
                        res)
            for k in range(parts):
                got = [bytes(v) for v in f["strings/%d" % k][()]]
                if not suite.check(got == expected[k], "%s: partition %d holds %r, expected %r" %
                                   (target, k, got[:3], expected[k][:3]), res):
                    break
                if not suite.check(list(f["numbers/%d" % k][()]) == expected_nums[k],
                                   "%s: number partition %d differs" % (target, k), res):
                    break
            if target == "many.existing.h5":
                suite.check(list(f["keep"][()]) == list(range(10)), "the existing file lost /keep", res)
        suite.check(not [x for x in os.listdir(d) if ".shardops-" in x], "left %s" % os.listdir(d), res)


def main():
    args = parse_args(__doc__.splitlines()[0], default_np=2)
    suite = Suite("e2e_strings_np_%d" % args.np, args)
    sh = Shardops(args)
    with work_dir(args, "strings") as d:
        for fixed in (False, True):
            op_cases(suite, sh, d, fixed)
        suite.case("no_string_kernel", no_string_kernel, suite, sh, d)
        suite.case("deck_inline_strings", deck_with_inline_strings, suite, sh, d)
        suite.case("mixed_charsets", mixed_charsets, suite, sh, d)
        suite.case("widened_fixed_length", widened_fixed_length, suite, sh, d)
        suite.case("many_string_partitions", many_string_partitions, suite, sh, d)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
