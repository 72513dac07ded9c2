#!/usr/bin/python3
"""End-to-end: chunked datasets that h5py wrote only in part (ctest e2e_partial_chunks_np_N).

h5py allocates a chunk only when something is written into it; the chunks never written
read as the dataset's fill value. shardops must read such inputs exactly as h5py does, at
any rank count and with any split of the rows over the ranks (rank blocks that hold only
missing chunks, only written ones, or both), never hang, and fail cleanly (exit 3 on every
rank, the dataset named) when one rank's chunk cannot be decoded.

Each case writes one dataset with h5py (chunk shapes across rows and columns, gzip,
shuffle, fletcher32, scale-offset, non-zero fill values, all chunks missing, strings),
checks that the file really lacks some chunks, runs `gather-nd` with the identity indices
(the output is the input, read through shardops' read path), and compares the output with
h5py's own read of the input byte for byte. Row counts that no rank count divides and
chunk edges that are not block edges give uneven splits.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from e2e_common import (Shardops, Suite, error_lines, expect_success, parse_args, read_h5, ref,  # noqa: E402
                        same_array, work_dir)


class Layout:
    """A dataset made by h5py: its creation arguments and the row ranges written into it."""

    def __init__(self, name, shape, dtype, written, **create):
        self.name, self.shape, self.dtype, self.written = name, tuple(shape), dtype, written
        self.create = create


LAYOUTS = [
    Layout("rows_chunks_some_written", (100, 4), "float32", [(0, 10), (50, 60)], chunks=(10, 4)),
    Layout("first_chunk_only", (100, 4), "float32", [(0, 10)], chunks=(10, 4)),
    Layout("last_chunk_only", (100, 4), "float32", [(95, 100)], chunks=(10, 4)),
    Layout("half_in_one_chunk", (100, 4), "float32", [(0, 50)], chunks=(50, 4)),
    Layout("big_chunks_partly_filled", (200, 4), "float32", [(3, 5)], chunks=(100, 4)),
    Layout("column_chunks_uneven", (101, 6), "float64", [(13, 17), (60, 101)], chunks=(8, 4)),
    Layout("gzip", (100, 4), "float32", [(0, 10), (50, 60)], chunks=(10, 4), compression="gzip"),
    Layout("gzip_shuffle_3d", (40, 3, 5), "int16", [(7, 20)], chunks=(7, 2, 5), compression="gzip", shuffle=True),
    Layout("fillvalue", (100, 4), "float32", [(20, 30)], chunks=(10, 4), fillvalue=-7.5),
    Layout("fillvalue_gzip_fletcher32", (90, 3), "int32", [(0, 4), (44, 46)], chunks=(9, 3), fillvalue=42,
           compression="gzip", fletcher32=True),
    Layout("scaleoffset_int", (64, 2), "int32", [(16, 40)], chunks=(8, 2), scaleoffset=0),
    Layout("all_chunks_missing", (100, 4), "float32", [], chunks=(10, 4)),
    Layout("all_chunks_missing_gzip_fillvalue", (77, 5), "float32", [], chunks=(16, 5), compression="gzip",
           fillvalue=3.25),
    Layout("resizable_edge_chunk_past_the_rows", (130, 4), "float32", [(0, 2), (128, 130)], chunks=(64, 4),
           maxshape=(None, 4)),
    Layout("tiny_some_ranks_empty", (3, 4), "float32", [(2, 3)], chunks=(2, 4)),
    Layout("uneven_rows_gzip", (101, 4), "float32", [(40, 50)], chunks=(10, 4), compression="gzip"),
    Layout("last_blocks_missing_fillvalue", (100, 4), "float32", [(0, 63)], chunks=(10, 4), fillvalue=1.5),
    Layout("vlen_strings_gzip", (50,), h5py.string_dtype(), [(10, 20)], chunks=(8,), compression="gzip"),
    Layout("fixed_strings_fillvalue", (50,), "S6", [(0, 5)], chunks=(8,), fillvalue=b"none"),
]


def chunks_in(shape, chunks):
    return int(np.prod([(n + c - 1) // c for n, c in zip(shape, chunks)]))


def values_for(layout, rows):
    """Data for rows [a, b) of the layout (never the fill value)."""
    shape = (rows,) + layout.shape[1:]
    n = int(np.prod(shape))
    base = np.arange(1, n + 1)
    if layout.dtype == h5py.string_dtype():
        return np.array(["s%d\u00e9" % v for v in base], dtype=object).reshape(shape)
    if isinstance(layout.dtype, str) and layout.dtype.startswith("S"):
        return np.array([b"v%d" % (v % 1000) for v in base], dtype=layout.dtype).reshape(shape)
    return (base % 1000 + 100).astype(layout.dtype).reshape(shape)


def write_layout(suite, path, layout):
    """Writes the layout's dataset with h5py and checks that its chunks are really missing."""
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("d", shape=layout.shape, dtype=layout.dtype, **layout.create)
        for a, b in layout.written:
            ds[a:b] = values_for(layout, b - a)
        stored, total = ds.id.get_num_chunks(), chunks_in(ds.shape, ds.chunks)
        suite.require(stored < total, "the fixture has %d of %d chunks: none is missing" % (stored, total))
        if not layout.written:
            suite.require(stored == 0, "the fixture has %d chunks, expected none" % stored)


def expected_rows(path):
    """h5py's own read of the input, the reference."""
    with h5py.File(path, "r") as f:
        ds = f["d"]
        info = h5py.check_string_dtype(ds.dtype)
        return ds.asstr()[()] if info is not None and info.length is None else ds[()]


def read_output(path):
    with h5py.File(path, "r") as f:
        ds = f["o"]
        info = h5py.check_string_dtype(ds.dtype)
        return ds.asstr()[()] if info is not None and info.length is None else read_h5(path, "o")


def gather_identity(t, in_file, out_file, layout, count):
    """gather-nd of the layout's rows with indices 0..count-1: the output is the input."""
    with h5py.File(in_file, "a") as f:
        if "iota_%d" % count not in f:
            f.create_dataset("iota_%d" % count, data=np.arange(count, dtype=np.int64).reshape(count, 1))
    return t.sh.run(["gather-nd", "--params", ref(in_file, "/d"), "--indices",
                     ref(in_file, "/iota_%d" % count), "--out", ref(out_file, "/o"), "-q"])


class Ctx:
    def __init__(self, suite, sh, d):
        self.suite, self.sh, self.d = suite, sh, d

    def path(self, name):
        return os.path.join(self.d, name)


def layout_case(t, layout):
    in_file, out_file = t.path(layout.name + ".in.h5"), t.path(layout.name + ".out.h5")
    write_layout(t.suite, in_file, layout)
    expected = expected_rows(in_file)
    res = gather_identity(t, in_file, out_file, layout, expected.shape[0])
    expect_success(t.suite, res, layout.name)
    got = read_output(out_file)
    if expected.dtype == object:
        t.suite.check(got.shape == expected.shape and list(got.reshape(-1)) == list(expected.reshape(-1)),
                      "strings differ: got %r..., expected %r..." % (list(got.reshape(-1))[:12],
                                                                       list(expected.reshape(-1))[:12]), res)
    else:
        same_array(t.suite, layout.name, got, expected, res)


def partial_indices_case(t):
    """The partly written dataset is the index input: missing chunks give the fill value 3."""
    in_file, out_file = t.path("indices.in.h5"), t.path("indices.out.h5")
    params = np.arange(40, dtype=np.float32).reshape(10, 4)
    with h5py.File(in_file, "w") as f:
        f.create_dataset("params", data=params)
        idx = f.create_dataset("idx", shape=(70, 1), dtype="int64", chunks=(16, 1), fillvalue=3, compression="gzip")
        idx[20:30] = np.arange(10, dtype=np.int64).reshape(10, 1)
        t.suite.require(idx.id.get_num_chunks() < 5, "the index fixture has all its chunks")
        indices = idx[()]
    res = t.sh.run(["gather-nd", "--params", ref(in_file, "/params"), "--indices", ref(in_file, "/idx"), "--out",
                    ref(out_file, "/o"), "-q"])
    expect_success(t.suite, res, "gather-nd with partly written indices")
    same_array(t.suite, "gather-nd output", read_h5(out_file, "o"), params[indices[:, 0]], res)


def corrupt_chunk_case(t, which):
    """One chunk's compressed bytes zeroed: the rank reading it fails, every rank exits 3, nobody waits.

    With the chunk at the first or the last rows only rank 0 or the last rank reads it.
    """
    in_file, out_file = t.path("corrupt_%s.in.h5" % which), t.path("corrupt_%s.out.h5" % which)
    layout = Layout("corrupt", (100, 4), "float32", [(0, 100)], chunks=(10, 4), compression="gzip")
    with h5py.File(in_file, "w") as f:
        ds = f.create_dataset("d", shape=layout.shape, dtype=layout.dtype, **layout.create)
        ds[:] = values_for(layout, 100)
        info = ds.id.get_chunk_info(0 if which == "first" else ds.id.get_num_chunks() - 1)
        offset, size = info.byte_offset, info.size
    with open(in_file, "r+b") as f:
        f.seek(offset)
        f.write(b"\0" * size)
    res = gather_identity(t, in_file, out_file, layout, 100)
    t.suite.require(not res.timed_out, "shardops hung on a corrupt chunk", res)
    t.suite.check(res.rc == 3, "exit %s, expected 3 (I/O failure)" % res.rc, res)
    lines = error_lines(res.stderr)
    t.suite.check(len(lines) == 1 and ref(in_file, "/d") in lines[0],
                  "expected one error line naming %s, got %r" % (ref(in_file, "/d"), lines), res)
    t.suite.check(not os.path.exists(out_file), "the output file exists after the failed read", res)


def main():
    args = parse_args(__doc__.splitlines()[0], default_np=2)
    suite = Suite("e2e_partial_chunks_np_%d" % args.np, args)
    sh = Shardops(args)
    with work_dir(args, "partial") as d:
        t = Ctx(suite, sh, d)
        for layout in LAYOUTS:
            suite.case(layout.name, layout_case, t, layout)
        suite.case("partial_indices", partial_indices_case, t)
        for which in ("first", "last"):
            suite.case("corrupt_%s_chunk" % which, corrupt_chunk_case, t, which)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
