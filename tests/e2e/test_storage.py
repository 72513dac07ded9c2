"""Output storage options (--compression, --shuffle, --chunk-rows) and h5py's filtered inputs.

Every output must read back in plain h5py byte for byte, with the layout asked for; LZF
(h5py's own filter) must work out of the box, in and out; a filter that cannot be loaded is
named in the error.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as e2e  # noqa: E402

LAYOUTS = [  # (flags, expected compression, expected shuffle, chunk rows or None for h5py's choice)
    ([], None, False, "contiguous"),
    (["--compression", "gzip"], "gzip", False, None),
    (["--compression", "gzip=9", "--shuffle"], "gzip", True, None),
    (["--compression", "lzf"], "lzf", False, None),
    (["--compression", "lzf", "--shuffle", "--chunk-rows", "7"], "lzf", True, 7),
    (["--chunk-rows", "5"], None, False, 5),
    (["--compression", "none", "--shuffle"], None, True, None),
]


def inputs(d):
    return e2e.gather_inputs(d, 1000, 777, cols=6, index_dtype=np.int64, seed=3)


def layouts(t, sh):
    inp, expected = inputs(t.d)
    for k, (flags, compression, shuffle, chunk_rows) in enumerate(LAYOUTS):
        out = os.path.join(t.d, "out%d.h5" % k)
        r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"), "--out",
                    e2e.ref(out, "/g"), "-q"] + flags)
        e2e.expect_success(t.suite, r, " ".join(flags) or "contiguous")
        with e2e.h5py.File(out, "r") as f:
            d = f["/g"]
            what = " ".join(flags) or "no flags"
            t.suite.check(d.compression == compression, "%s: compression %r" % (what, d.compression), r)
            t.suite.check(bool(d.shuffle) == shuffle, "%s: shuffle %r" % (what, d.shuffle), r)
            if chunk_rows == "contiguous":
                t.suite.check(d.chunks is None, "%s: chunked %r" % (what, d.chunks), r)
            elif chunk_rows is not None:
                t.suite.check(d.chunks == (chunk_rows, 6), "%s: chunks %r" % (what, d.chunks), r)
            else:
                t.suite.check(d.chunks is not None, "%s: not chunked" % what, r)
            e2e.same_array(t.suite, what, np.asarray(d[()]), expected, r)


def edge_shapes(t, sh):
    """Empty, scalar-free 1-D and string outputs compressed; an existing file gets a compressed dataset."""
    d = t.d
    inp = os.path.join(d, "e.h5")
    strings = np.array([b"alpha", b"", b"gamma-delta", b"z"] * 10, dtype="S11")
    e2e.write_h5(inp, {"/x": np.arange(40, dtype=np.int16), "/p": (np.arange(40) % 3).astype(np.int32),
                       "/s": strings, "/none": np.zeros((0, 3), np.float64),
                       "/pn": np.zeros((0,), np.int32)}, mode="w")
    out = os.path.join(d, "e_out.h5")
    e2e.write_h5(out, {"/old": np.arange(5)}, mode="w")
    for data, name, compression in (("/x", "x", "gzip"), ("/s", "s", "lzf"), ("/s", "s2", "gzip")):
        r = sh.run(["dynamic-partition", "--data", e2e.ref(inp, data), "--partitions", e2e.ref(inp, "/p"),
                    "--num-partitions", "3", "--out", e2e.ref(out, "/" + name), "--compression", compression, "-q"])
        e2e.expect_success(t.suite, r, "partition of " + data)
        src = e2e.read_h5(inp, data)
        for p in range(3):
            got = e2e.read_h5(out, "/%s/%d" % (name, p))
            e2e.same_array(t.suite, "%s part %d" % (name, p), got, src[np.arange(40) % 3 == p], r)
    r = sh.run(["dynamic-partition", "--data", e2e.ref(inp, "/none"), "--partitions", e2e.ref(inp, "/pn"),
                "--num-partitions", "2", "--out", e2e.ref(out, "/empty"), "--compression", "lzf", "-q"])
    e2e.expect_success(t.suite, r, "empty partition")
    e2e.same_array(t.suite, "empty", e2e.read_h5(out, "/empty/0"), np.zeros((0, 3), np.float64), r)
    e2e.same_array(t.suite, "kept", e2e.read_h5(out, "/old"), np.arange(5), r)


def lzf_input(t, sh):
    """An input h5py compressed with LZF (and shuffle) reads without any setting."""
    path = os.path.join(t.d, "lzf.h5")
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1000, size=(300, 4)).astype(np.int32)
    p = rng.integers(0, 4, size=300).astype(np.int32)
    e2e.write_h5(path, {"/x": x}, mode="w", compression="lzf", shuffle=True, chunks=(17, 4))
    e2e.write_h5(path, {"/p": p})
    out = os.path.join(t.d, "lzf_out.h5")
    r = sh.run(["dynamic-partition", "--data", e2e.ref(path, "/x"), "--partitions", e2e.ref(path, "/p"),
                "--num-partitions", "4", "--out", e2e.ref(out, "/parts"), "-q"])
    e2e.expect_success(t.suite, r)
    for k in range(4):
        e2e.same_array(t.suite, "part %d" % k, e2e.read_h5(out, "/parts/%d" % k), x[p == k], r)


def missing_filter_named(t, sh):
    """With HDF5's plugin folder pointed elsewhere, LZF in and out: exit 2 naming the filter."""
    path = os.path.join(t.d, "lzf.h5")
    e2e.write_h5(path, {"/x": np.arange(100, dtype=np.float32).reshape(50, 2)}, mode="w", compression="lzf")
    e2e.write_h5(path, {"/i": np.array([[0], [1]], np.int32)})
    empty = os.path.join(t.d, "no-plugins")
    os.mkdir(empty)
    out = os.path.join(t.d, "o.h5")
    env = {"HDF5_PLUGIN_PATH": empty}
    r = sh.run(["gather-nd", "--params", e2e.ref(path, "/x"), "--indices", e2e.ref(path, "/i"), "--out",
                e2e.ref(out, "/g"), "-q"], env=env)
    t.suite.check(r.rc in (2, 3) and ("lzf" in r.stderr.lower() or "32000" in r.stderr),
                  "reading LZF without its plugin: exit %s, and the filter should be named" % r.rc, r)
    r = sh.run(["gather-nd", "--params", e2e.ref(path, "/i"), "--indices", e2e.ref(path, "/i"), "--out",
                e2e.ref(out, "/g"), "--compression", "lzf", "-q"], env=env)
    t.suite.check(r.rc == 2 and "LZF" in r.stderr, "writing LZF without its plugin: exit %s" % r.rc, r)
    t.suite.check(not os.path.exists(out), "an output was written")
    # What importing TensorFlow leaves a shardops started from that Python: the message says
    # that the environment is why HDF5 misses the plugin installed.
    for argv in (["--params", e2e.ref(path, "/x")], ["--params", e2e.ref(path, "/i"), "--compression", "lzf"]):
        r = sh.run(["gather-nd"] + argv + ["--indices", e2e.ref(path, "/i"), "--out", e2e.ref(out, "/g"), "-q"],
                   env={"HDF5_PLUGIN_PATH": "disable"})
        t.suite.check(r.rc in (2, 3) and "HDF5_PLUGIN_PATH is 'disable'" in r.stderr,
                      "LZF with HDF5_PLUGIN_PATH=disable: exit %s, the message should name the setting" % r.rc, r)
        t.suite.check(not os.path.exists(out), "an output was written")
    # An optional filter that no chunk went through (h5py's allow_unknown_filter: the writer
    # lacked it too) is read as h5py reads it: the chunks are stored as they are.
    h5 = e2e.h5py
    x = np.arange(12, dtype=np.float64).reshape(6, 2)
    with h5.File(path, "a") as f:
        dcpl = h5.h5p.create(h5.h5p.DATASET_CREATE)
        dcpl.set_chunk((3, 2))
        dcpl.set_filter(65000, h5.h5z.FLAG_OPTIONAL, ())  # no HDF5 has it: every chunk skips it
        h5.h5d.create(f.id, b"skipped", h5.h5t.NATIVE_DOUBLE, h5.h5s.create_simple(x.shape), dcpl=dcpl).write(
            h5.h5s.ALL, h5.h5s.ALL, x)
    r = sh.run(["gather-nd", "--params", e2e.ref(path, "/skipped"), "--indices", e2e.ref(path, "/i"), "--out",
                e2e.ref(out, "/s"), "-q"], env=env)
    e2e.expect_success(t.suite, r, "an optional filter no chunk went through")
    if r.rc == 0:
        e2e.same_array(t.suite, "/s", e2e.read_h5(out, "/s"), x[[0, 1]], r)


def damage_chunks(path, dataset, chunks):
    """Overwrites the middle of each of \p chunks (their indices in h5py's chunk order) with bytes
    that no zlib stream holds: reading one of those chunks fails."""
    with e2e.h5py.File(path, "r") as f:
        where = [f[dataset].id.get_chunk_info(k) for k in chunks]
    with open(path, "r+b") as raw:
        for info in where:
            raw.seek(info.byte_offset + info.size // 4)
            raw.write(b"\xff" * (info.size // 2))


def gather_reads_named_rows(t, sh):
    """GatherNd reads just the params rows its indices name from a compressed stack, as an h5py
    script would: frames it does not name are never read (here they are damaged), and a frame
    it names that is damaged fails the job naming the dataset."""
    d = t.d
    path = os.path.join(d, "stack.h5")
    frames = np.random.default_rng(11).integers(0, 60000, size=(200, 32, 32)).astype(np.uint16)
    e2e.write_h5(path, {"/stack": frames}, mode="w", compression="gzip", chunks=(1, 32, 32))
    cases = {"/i": np.array([[3], [150], [3], [0], [160], [170]], np.int32),  # frames
             "/one": np.array([150], np.int64),                    # a rank-1 index: one frame
             "/rc": np.array([[150, 5], [3, 31], [0, 0]], np.int64),  # rows of frames
             "/bad": np.array([[3], [500]], np.int32),
             "/hurt": np.array([[3], [80]], np.int32)}
    e2e.write_h5(path, cases)
    # Damaged frames among the named ones too, 161-169 between 160 and 170: near rows are read
    # one by one, not as one run through the frames between them.
    damage_chunks(path, "/stack", list(range(40, 140)) + list(range(161, 170)) + list(range(180, 200)))
    out = os.path.join(d, "frames.h5")
    frame_bytes = frames[0].nbytes
    for name, want, read in (("/i", frames[[3, 150, 3, 0, 160, 170]], 5), ("/one", frames[150], 1),
                             ("/rc", frames[[150, 3, 0], [5, 31, 0]], 3)):
        report = os.path.join(d, "report%s.json" % name.replace("/", "_"))
        r = sh.run(["gather-nd", "--params", e2e.ref(path, "/stack"), "--indices", e2e.ref(path, name), "--out",
                    e2e.ref(out, name), "-q", "--report", report])
        e2e.expect_success(t.suite, r, "gather of the frames " + name + " names")
        if r.rc == 0:
            e2e.same_array(t.suite, name, e2e.read_h5(out, name), want, r)
            with open(report) as f:
                got = json.load(f)["bytes"]["read"]
            # The frames read and the indices, not the whole stack.
            t.suite.check(got == read * frame_bytes + cases[name].nbytes, "%s: the report's bytes read %d" %
                          (name, got), r)
    r = sh.run(["gather-nd", "--params", e2e.ref(path, "/stack"), "--indices", e2e.ref(path, "/bad"), "--out",
                e2e.ref(out, "/bad"), "-q"])
    t.suite.check(r.rc == 2 and "indices[1] = [500] does not index into param shape [200,32,32]" in r.stderr,
                  "an index past the stack: exit %s, TensorFlow's message expected" % r.rc, r)
    r = sh.run(["gather-nd", "--params", e2e.ref(path, "/stack"), "--indices", e2e.ref(path, "/hurt"), "--out",
                e2e.ref(out, "/hurt"), "-q"])
    t.suite.check(r.rc == 3 and "stack.h5:/stack" in r.stderr,
                  "a damaged frame named: exit %s, the dataset should be named" % r.rc, r)
    with e2e.h5py.File(out, "r") as f:
        t.suite.check(sorted(f.keys()) == ["i", "one", "rc"], "outputs %r" % sorted(f.keys()))


def listing(t, sh):
    """shardops ls: every dataset with shape, dtype, chunks, filters; attributes with -a; errors."""
    path = os.path.join(t.d, "ls.h5")
    with e2e.h5py.File(path, "w") as f:
        f.create_dataset("/a/x", data=np.zeros((10, 3), np.float16), chunks=(5, 3), compression="gzip", shuffle=True)
        f.create_dataset("/b", data=np.array([b"a", b"bc"], dtype="S2"))
        f.create_dataset("/c", data=np.int64(7))
        f["/d"] = e2e.h5py.Empty("f4")  # a null dataspace: not a scalar
        f["/b"].attrs["note"] = "hello"
        f["/b"].attrs["n"] = np.arange(3)
    r = sh.run(["ls", path])
    e2e.expect_success(t.suite, r)
    lines = [line.split() for line in r.stdout.splitlines()]
    t.suite.check(lines == [["/a/x", "[10,3]", "float16", "chunks", "[5,3]", "filters", "shuffle,", "deflate"],
                            ["/b", "[2]", "string"], ["/c", "[]", "int64"],
                            "/d a null dataspace (no data at all), float32".split()], "ls printed %r" % r.stdout, r)
    r = sh.run(["ls", path + ":/b", "-a"])
    e2e.expect_success(t.suite, r)
    t.suite.check("@note = hello" in r.stdout and "@n = [0, 1, 2]" in r.stdout, "ls -a printed %r" % r.stdout, r)
    r = sh.run(["ls", path + ":/a"])
    t.suite.check(r.stdout.split()[:1] == ["/a/x"], "ls of a group printed %r" % r.stdout, r)
    # A newline in a name or a value stays on its line, escaped: it printed what read as the
    # line of another dataset.
    odd = os.path.join(t.d, "odd.h5")
    with e2e.h5py.File(odd, "w") as f:
        f.create_dataset("a\n/fake  [3]  float32", data=np.zeros(2))
        f["a\n/fake  [3]  float32"].attrs["note"] = "one\n/x  [9]  int64"
    r = sh.run(["ls", odd, "-a"])
    e2e.expect_success(t.suite, r, "ls of odd names")
    t.suite.check(r.stdout.splitlines() == ["/a\\n/fake  [3]  float32  [2]  float64",
                                            "    @note = one\\n/x  [9]  int64"], "ls printed %r" % r.stdout, r)
    # A dataset's second name (a hard link) is listed too, saying whose (it was left out); an
    # enum attribute (h5py's bool) shows its members' names (it showed "(H5T_ENUM)").
    linked = os.path.join(t.d, "linked.h5")
    with e2e.h5py.File(linked, "w") as f:
        f["x"] = np.arange(4)
        f["x"].attrs["flag"] = True
        f["x"].attrs["flags"] = np.array([True, False])
        f["y"] = f["x"]
    r = sh.run(["ls", linked, "-a"])
    e2e.expect_success(t.suite, r, "ls of a second name")
    t.suite.check(r.stdout.splitlines() == ["/x    [4]  int64", "    @flag = TRUE", "    @flags = [TRUE, FALSE]",
                                            "/y    [4]  int64  (the same dataset as /x)", "    @flag = TRUE",
                                            "    @flags = [TRUE, FALSE]"], "ls printed %r" % r.stdout, r)
    for target, code in ((path + ":/missing", 2), (os.path.join(t.d, "none.h5"), 2), (__file__, 3)):
        r = sh.run(["ls", target])
        t.suite.check(r.rc == code and len(e2e.error_lines(r.stderr)) == 1,
                      "ls %s: exit %s, expected %d with one error line" % (target, r.rc, code), r)


def deck_outputs(t, sh):
    """A deck's output may carry its own storage; the others follow the command line's."""
    deck = os.path.join(t.d, "d.yaml")
    with open(deck, "w") as f:
        f.write("tensors:\n  x: {value: [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]], dtype: int32}\n"
                "steps:\n  - {op: add, x: x, y: 1, out: y}\n"
                "outputs:\n  x: {dataset: o.h5:/x, compression: lzf, shuffle: true, chunk_rows: 2}\n"
                "  y: o.h5:/y\n")
    r = sh.run(["run", deck, "--compression", "gzip=2", "-q"])
    e2e.expect_success(t.suite, r)
    with e2e.h5py.File(os.path.join(t.d, "o.h5"), "r") as f:
        x, y = f["/x"], f["/y"]
        t.suite.check((x.compression, bool(x.shuffle), x.chunks) == ("lzf", True, (2, 2)),
                      "x stored as %r" % ((x.compression, x.shuffle, x.chunks),), r)
        t.suite.check((y.compression, y.compression_opts) == ("gzip", 2), "y stored as %r" % (y.compression,), r)
        e2e.same_array(t.suite, "y", np.asarray(y[()]), np.arange(2, 12, dtype=np.int32).reshape(5, 2), r)
    with open(deck, "w") as f:
        f.write("tensors:\n  x: {value: [1, 2]}\nsteps:\n  - {op: add, x: x, y: 0, out: z}\noutputs:\n"
                "  x: {dataset: p.h5:/x, compression: zip}\n")
    r = sh.run(["run", deck, "-q"])
    t.suite.check(r.rc == 2 and "d.yaml:6" in r.stderr and "'zip'" in r.stderr, "a bad compression: exit %s" % r.rc, r)
    t.suite.check(not os.path.exists(os.path.join(t.d, "p.h5")), "an output was written")


def bad_options(t, sh):
    inp, _ = inputs(t.d)
    out = os.path.join(t.d, "bad.h5")
    base = ["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"), "--out",
            e2e.ref(out, "/g"), "-q"]
    for flags in (["--compression", "zstd"], ["--compression", "gzip=12"], ["--chunk-rows", "0"],
                  ["--chunk-rows", "-3"]):
        r = sh.run(base + flags)
        t.suite.check(r.rc == 2, "%s: exit %s, expected 2" % (" ".join(flags), r.rc), r)
    t.suite.check(not os.path.exists(out), "an output was written")


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], 2)
    sh = e2e.Shardops(args)
    suite = e2e.Suite("e2e storage np=%d" % args.np, args)

    cases = [("layouts", layouts),
             ("edge_shapes", edge_shapes),
             ("lzf_input", lzf_input),
             ("gather_reads_named_rows", gather_reads_named_rows),
             ("missing_filter_named", missing_filter_named),
             ("listing", listing),
             ("deck_outputs", deck_outputs),
             ("bad_options", bad_options)]
    e2e.run_cases(suite, args, sh, "storage", cases)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
