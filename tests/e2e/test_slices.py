"""Rows of an input dataset: FILE:/path[start:stop] with NumPy's rules (omitted and negative
bounds), anywhere an input is named (ops, paired inputs, decks); out-of-range and malformed
selections are exit 2 naming them; an output cannot be a selection.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as e2e  # noqa: E402

SLICES = ["[2:10]", "[:5]", "[5:]", "[-3:]", "[:-2]", "[3:3]", "[9:2]", "[:]", "[-13:13]"]


def data(d):
    rng = np.random.default_rng(11)
    params = rng.standard_normal((13, 4)).astype(np.float64)
    idx = rng.integers(0, 13, size=(17, 1)).astype(np.int32)
    upd = rng.standard_normal((17, 4)).astype(np.float64)
    strings = np.array([b"s%d" % i for i in range(13)], dtype=object)
    path = os.path.join(d, "in.h5")
    e2e.write_h5(path, {"/params": params, "/idx": idx, "/upd": upd,
                        "/strings": strings.astype("S3"), "/scalar": np.float32(1)}, mode="w")
    return path, params, idx, upd, strings


def numpy_rows(a, text):
    return eval("a" + text, {"a": a})  # the test's own constant strings only


def gather_slices(t, sh):
    inp, params, idx, _, _ = data(t.d)
    for k, s in enumerate(SLICES):
        sel = numpy_rows(params, s)
        # indices into the selected rows only
        ix = (idx % max(1, len(sel))).astype(np.int32) if len(sel) else np.zeros((0, 1), np.int32)
        e2e.write_h5(inp, {"/ix%d" % k: ix})
        out = os.path.join(t.d, "g%d.h5" % k)
        r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params") + s, "--indices", e2e.ref(inp, "/ix%d" % k),
                    "--out", e2e.ref(out, "/g"), "-q"])
        if len(sel) == 0 and len(ix) == 0:
            e2e.expect_success(t.suite, r, s)
            e2e.same_array(t.suite, s, e2e.read_h5(out, "/g"), np.zeros((0, 4), np.float64), r)
            continue
        e2e.expect_success(t.suite, r, s)
        e2e.same_array(t.suite, s, e2e.read_h5(out, "/g"), sel[ix[:, 0]], r)
        attrs = e2e.h5py.File(out, "r")["/g"].attrs
        t.suite.check(e2e.ref(inp, "/params") + s in [str(x) for x in attrs["inputs"]],
                      "%s: provenance %r does not name the selection" % (s, attrs["inputs"]), r)


def paired_and_strings(t, sh):
    """A selection on both paired inputs (indices and updates), and on strings."""
    inp, params, idx, upd, strings = data(t.d)
    out = os.path.join(t.d, "p.h5")
    r = sh.run(["scatter-nd", "--indices", e2e.ref(inp, "/idx") + "[3:-4]", "--updates", e2e.ref(inp, "/upd") + "[3:-4]",
                "--shape", "13,4", "--out", e2e.ref(out, "/s"), "-q"])
    e2e.expect_success(t.suite, r)
    expected = np.zeros((13, 4))
    for i, u in zip(idx[3:-4, 0], upd[3:-4]):
        expected[i] += u
    e2e.same_array(t.suite, "scatter of selected rows", e2e.read_h5(out, "/s"), expected, r)
    e2e.write_h5(inp, {"/sp": (np.arange(13) % 2).astype(np.int32)})
    r = sh.run(["dynamic-partition", "--data", e2e.ref(inp, "/strings") + "[1:12]", "--partitions",
                e2e.ref(inp, "/sp") + "[-12:-1]", "--num-partitions", "2", "--out", e2e.ref(out, "/parts"), "-q"])
    e2e.expect_success(t.suite, r)
    part_ids = (np.arange(13) % 2)[1:12]
    for p in range(2):
        got = [bytes(x) for x in e2e.read_h5(out, "/parts/%d" % p)]
        t.suite.check(got == [bytes(x) for x in strings[1:12][part_ids == p]], "strings part %d: %r" % (p, got), r)


def deck_slice(t, sh):
    inp, params, _, _, _ = data(t.d)
    deck = os.path.join(t.d, "d.yaml")
    with open(deck, "w") as f:
        f.write("tensors:\n  x: {dataset: \"in.h5:/params[4:9]\"}\n"
                "steps:\n  - {op: add, x: x, y: 1.5, out: y}\n"
                "outputs:\n  y: out.h5:/y\n")
    r = sh.run(["run", deck, "-q"])
    e2e.expect_success(t.suite, r)
    e2e.same_array(t.suite, "deck", e2e.read_h5(os.path.join(t.d, "out.h5"), "/y"), params[4:9] + 1.5, r)


def refused(t, sh):
    inp, _, _, _, _ = data(t.d)
    out = os.path.join(t.d, "bad.h5")
    base = ["--indices", e2e.ref(inp, "/idx"), "--out", e2e.ref(out, "/g"), "-q"]
    for sel, words in (("[0:14]", "outside the 13 rows"), ("[-14:]", "outside the 13 rows"),
                       ("[1:5:2]", "step"), ("[1:2, 0:2]", "axis 0"), ("[a:b]", "integers"), ("[3]", "not a slice"),
                       ("[1:99999999999999999999]", "integers")):
        r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params") + sel] + base)
        t.suite.check(r.rc == 2 and words in r.stderr and sel in r.stderr,
                      "%s: exit %s, expected 2 and a message with '%s' naming it" % (sel, r.rc, words), r)
    r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/scalar") + "[0:1]"] + base)
    t.suite.check(r.rc == 2 and "scalar" in r.stderr, "a slice of a scalar: exit %s" % r.rc, r)
    r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"),
                "--out", e2e.ref(out, "/g") + "[0:3]", "-q"])
    t.suite.check(r.rc == 2 and "whole dataset" in r.stderr, "an output selection: exit %s" % r.rc, r)
    t.suite.check(not os.path.exists(out), "an output was written")


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], 2)
    sh = e2e.Shardops(args)
    suite = e2e.Suite("e2e slices np=%d" % args.np, args)

    cases = [("gather_slices", gather_slices),
             ("paired_and_strings", paired_and_strings),
             ("deck_slice", deck_slice),
             ("refused", refused)]
    e2e.run_cases(suite, args, sh, "slices", cases)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
