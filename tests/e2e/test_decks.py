#!/usr/bin/python3
"""End-to-end tests of `shardops run`: every deck in inputs/ runs as it is and gives its
documented result; bad decks fail before any work with exit code 2 and a message that
names the deck line and step; nothing is written when a deck fails."""
import os
import shutil
import subprocess
import sys

import numpy as np

import e2e_common as e2e

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# What the documentation of each op says the example gives (dataset -> value).
DOCUMENTED = {
    "stitch-mixed-rank": {"merged": np.array([[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]],
                                             np.float32)},
    "partition-add-stitch": {"x": np.array([0.1, -1., 5.2, 4.3, -1., 7.4], np.float32) +
                             np.array([1, 0, 1, 1, 0, 1], np.float32)},
    "scatter-nd": {"vector": np.array([0, 11, 0, 10, 9, 0, 0, 12], np.int32),
                   "slices": np.array([[[5] * 4, [6] * 4, [7] * 4, [8] * 4], [[0] * 4] * 4,
                                       [[5] * 4, [6] * 4, [7] * 4, [8] * 4], [[0] * 4] * 4], np.int32)},
    "tensor-scatter-update": {"vector": np.array([0, 9, 0, 10, 11, 0, 0, 12], np.int32),
                              "matrix": np.array([[1, 5], [1, 1], [10, 1]], np.int32)},
    "dynamic-partition": {"vector/0": np.array([10, 20, 50], np.int32), "vector/1": np.array([30, 40], np.int32),
                          "rows/0": np.array([[3, 4]], np.int32), "rows/1": np.array([[1, 2], [5, 6]], np.int32)},
}


def copy_decks(tmp):
    """The decks write relative to their folder: run copies in a temporary one."""
    decks = os.path.join(tmp, "inputs")
    shutil.copytree(os.path.join(REPO, "inputs"), decks, ignore=shutil.ignore_patterns("out", "data"))
    return decks


def documented_deck(suite, runner, decks, name, expected):
    r = runner.run(["run", os.path.join(decks, name + ".yaml"), "-q"])
    suite.require(r.rc == 0, "deck %s failed" % name, r)
    out = os.path.join(decks, "out", name + ".h5")
    for dataset, value in expected.items():
        got = e2e.read_h5(out, "/" + dataset)
        e2e.same_array(suite, "%s:%s" % (name, dataset), got, value, r)


def pipeline(suite, runner, decks, rows):
    deck = os.path.join(decks, "pipeline.yaml")
    r = runner.run(["run", deck, "--set", "rows=%d" % rows, "--set", "updates=%d" % rows, "--set", "parts=7", "-q"],
                   timeout=180)
    suite.require(r.rc == 0, "pipeline deck failed", r)
    check = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "check_pipeline.py"),
                            os.path.join(decks, "out", "pipeline.h5"), "7"], capture_output=True, text=True)
    suite.require(check.returncode == 0, "check_pipeline.py: " + check.stdout + check.stderr)


def pipeline_same_at_every_rank_count(suite, runner, decks, rows):
    """The same deck at 1 rank and at --np ranks writes identical bytes."""
    deck = os.path.join(decks, "pipeline.yaml")
    files = []
    for np_ in sorted({1, runner.np}):
        r = runner.run(["run", deck, "--set", "rows=%d" % rows, "--set", "updates=%d" % rows, "--overwrite", "-q"],
                       np=np_, timeout=180)
        suite.require(r.rc == 0, "pipeline deck failed at %d ranks" % np_, r)
        keep = os.path.join(decks, "out", "pipeline-np%d.h5" % np_)
        shutil.copy(os.path.join(decks, "out", "pipeline.h5"), keep)
        files.append(keep)
    for name in ["sums", "added", "updated", "gathered", "restored"]:
        a, b = (e2e.read_h5(f, "/" + name) for f in (files[0], files[-1]))
        suite.check(a.tobytes() == b.tobytes(), "%s differs between 1 and %d ranks" % (name, runner.np))


BAD_DECKS = [
    # (name, deck text, text the message must contain)
    ("unknown key", "steps:\n  - {op: range, limit: 4, out: r, colour: red}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "unknown key 'colour'"]),
    ("unknown op", "steps:\n  - {op: scatter_everything, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "unknown op 'scatter_everything'"]),
    # An op that is not in the op registry, with the keys of one that is: refused, not run as another op.
    ("unknown tensor-scatter op",
     "tensors:\n  t: {value: [1, 2]}\n  i: {value: [[0]]}\n  u: {value: [5]}\n"
     "steps:\n  - {op: tensor_scatter_mul, tensor: t, indices: i, updates: u, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:6:", "unknown op 'tensor_scatter_mul' (known: ", "tensor_scatter_max"]),
    ("undefined tensor", "steps:\n  - {op: add, x: nothing, y: 1, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "tensor 'nothing' is not defined"]),
    ("used before defined",
     "steps:\n  - {op: add, x: later, y: 1, out: r}\n  - {op: range, limit: 3, out: later}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "'later' is not defined before this step"]),
    ("wrong type", "steps:\n  - {op: range, limit: 4, out: r}\n  - {op: random_uniform, shape: [two, 2], out: s}\n"
                   "outputs:\n  r: o.h5:/r\n", ["deck.yaml:3:", "step 2 (random_uniform)", "'two' is not an integer"]),
    ("missing key", "steps:\n  - {op: gather_nd, params: p, out: g}\ntensors:\n  p: {value: [1, 2]}\n"
                    "outputs:\n  g: o.h5:/g\n", ["missing 'indices'"]),
    ("not yaml", "steps: [ {op: range\n", ["not valid YAML"]),
    ("output not a tensor", "steps:\n  - {op: range, limit: 4, out: r}\noutputs:\n  q: o.h5:/q\n",
     ["deck.yaml:4:", "output 'q' is not a tensor"]),
    ("bad dataset name", "steps:\n  - {op: range, limit: 4, out: r}\noutputs:\n  r: no-colon\n", ["deck.yaml:4:"]),
    ("unknown parameter", "steps:\n  - {op: range, limit: '${rows}', out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "unknown parameter ${rows}"]),
    ("index out of range at run time",
     "tensors:\n  i: {value: [[0], [9]]}\n  u: {value: [1.0, 2.0]}\nsteps:\n"
     "  - {op: scatter_nd, indices: i, updates: u, shape: [4], out: s}\noutputs:\n  s: o.h5:/s\n",
     ["deck.yaml:5: step 1 (scatter_nd)", "indices[1] = [9] does not index into shape [4]", "tensor 'i'"]),
]


def bad_deck(suite, runner, tmp, name, text, needles):
    folder = os.path.join(tmp, "bad-" + name.replace(" ", "-"))
    os.makedirs(folder)
    deck = os.path.join(folder, "deck.yaml")
    with open(deck, "w") as f:
        f.write(text)
    r = runner.run(["run", deck])
    suite.check(r.rc == 2, "expected exit code 2, got %s" % r.rc, r)
    lines = e2e.error_lines(r.stderr)
    suite.check(len(lines) == 1, "expected one error line, got %d" % len(lines), r)
    for needle in needles:
        suite.check(needle in r.stderr, "message lacks %r" % needle, r)
    suite.check(not os.path.exists(os.path.join(folder, "o.h5")), "a failed deck wrote its output", r)


def comparisons(suite, runner, tmp):
    """greater/greater_equal/less/less_equal against a scalar, as NumPy (NaN compares false),
    feeding a partition; an order of complex values is refused."""
    x = np.array([1.5, -2.0, np.nan, 0.0, 7.25, 1.5, -0.0], np.float64)
    path = os.path.join(tmp, "cmp_in.h5")
    e2e.write_h5(path, {"/x": x, "/z": x.astype(np.complex64)}, mode="w")
    deck = os.path.join(tmp, "cmp.yaml")
    with open(deck, "w") as f:
        f.write("tensors:\n  x: {dataset: cmp_in.h5:/x}\nsteps:\n"
                "  - {op: greater, x: x, y: 1.5, out: g}\n  - {op: greater_equal, x: x, y: 1.5, out: ge}\n"
                "  - {op: less, x: x, y: 0, out: l}\n  - {op: less_equal, x: x, y: 0, out: le}\n"
                "  - {op: dynamic_partition, data: x, partitions: g, num_partitions: 2, out: part}\n"
                "outputs:\n  g: cmp_out.h5:/g\n  ge: cmp_out.h5:/ge\n  l: cmp_out.h5:/l\n  le: cmp_out.h5:/le\n"
                "  part/1: cmp_out.h5:/above\n")
    r = runner.run(["run", deck, "-q"])
    suite.require(r.rc == 0, "comparison deck failed", r)
    out = os.path.join(tmp, "cmp_out.h5")
    for name, expected in (("g", x > 1.5), ("ge", x >= 1.5), ("l", x < 0), ("le", x <= 0)):
        e2e.same_array(suite, name, e2e.read_h5(out, "/" + name), expected.astype(np.int32), r)
    e2e.same_array(suite, "above", e2e.read_h5(out, "/above"), x[x > 1.5], r)
    with open(deck, "w") as f:
        f.write("tensors:\n  z: {dataset: cmp_in.h5:/z}\nsteps:\n  - {op: less, x: z, y: 1, out: l}\n"
                "outputs:\n  l: cmp_bad.h5:/l\n")
    r = runner.run(["run", deck, "-q"])
    suite.check(r.rc == 2 and "complex64 values have no order" in r.stderr, "less on complex: exit %s" % r.rc, r)
    suite.check(not os.path.exists(os.path.join(tmp, "cmp_bad.h5")), "an output was written")


def casts(suite, runner, tmp):
    """cast to a dtype, as tf.cast: truncation toward zero, real parts, x != 0 for bool; a NaN
    or out-of-range value cast to an integer is refused naming its element."""
    x = np.array([1.75, -2.5, 0.0, 3e9, -0.0, 255.9], np.float64)  # 3e9 is inf in float16
    z = (x + 1j * np.arange(6)).astype(np.complex128)
    path = os.path.join(tmp, "cast_in.h5")
    e2e.write_h5(path, {"/x": x, "/z": z, "/n": np.array([1.0, np.nan], np.float32)}, mode="w")
    deck = os.path.join(tmp, "cast.yaml")
    with open(deck, "w") as f:
        f.write("tensors:\n  x: {dataset: cast_in.h5:/x}\n  z: {dataset: cast_in.h5:/z}\nsteps:\n"
                "  - {op: cast, x: x, dtype: int64, out: i}\n  - {op: cast, x: x, dtype: bool, out: b}\n"
                "  - {op: cast, x: x, dtype: float16, out: h}\n  - {op: cast, x: z, dtype: float32, out: zr}\n"
                "  - {op: cast, x: x, dtype: complex64, out: c}\n  - {op: cast, x: i, dtype: uint8, out: u}\n"
                "outputs:\n  i: cast_out.h5:/i\n  b: cast_out.h5:/b\n  h: cast_out.h5:/h\n  zr: cast_out.h5:/zr\n"
                "  c: cast_out.h5:/c\n  u: cast_out.h5:/u\n")
    r = runner.run(["run", deck, "-q"])
    suite.require(r.rc == 0, "cast deck failed", r)
    out = os.path.join(tmp, "cast_out.h5")
    ints = np.trunc(x).astype(np.int64)
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    for name, expected in (("i", ints), ("b", x != 0), ("h", half), ("zr", z.real.astype(np.float32)),
                           ("c", x.astype(np.complex64)), ("u", ints.astype(np.uint8))):
        e2e.same_array(suite, "cast " + name, e2e.read_h5(out, "/" + name), expected, r)
    with open(deck, "w") as f:
        f.write("tensors:\n  n: {dataset: cast_in.h5:/n}\nsteps:\n  - {op: cast, x: n, dtype: int32, out: i}\n"
                "outputs:\n  i: cast_bad.h5:/i\n")
    r = runner.run(["run", deck, "-q"])
    suite.check(r.rc == 2 and "element 1 (nan) does not fit int32" in r.stderr, "cast of a NaN: exit %s" % r.rc, r)
    with open(deck, "w") as f:  # a real scalar beyond an integer tensor's range (was undefined behaviour)
        f.write("tensors:\n  n: {value: [1, 2]}\nsteps:\n  - {op: add, x: n, y: 6.6e27, out: m}\n"
                "outputs:\n  m: cast_bad.h5:/m\n")
    r = runner.run(["run", deck, "-q"])
    suite.check(r.rc == 2 and "does not fit the tensor's dtype" in r.stderr, "add of 6.6e27: exit %s" % r.rc, r)
    suite.check(not os.path.exists(os.path.join(tmp, "cast_bad.h5")), "an output was written")


def bad_set(suite, runner, decks):
    r = runner.run(["run", os.path.join(decks, "pipeline.yaml"), "--set", "colour=red"])
    suite.check(r.rc == 2 and "no parameter 'colour'" in r.stderr, "--set of an unknown parameter", r)


def main():
    args = e2e.parse_args(__doc__, 2)
    runner = e2e.Shardops(args)
    suite = e2e.Suite("e2e decks np=%d" % args.np, args)
    with e2e.work_dir(args, "decks") as tmp:
        decks = copy_decks(tmp)
        for name, expected in DOCUMENTED.items():
            suite.case("deck " + name, documented_deck, suite, runner, decks, name, expected)
        suite.case("deck pipeline", pipeline, suite, runner, decks, 3000)
        suite.case("deck pipeline same bytes at 1 and %d ranks" % args.np, pipeline_same_at_every_rank_count, suite,
                   runner, decks, 5000)
        for name, text, needles in BAD_DECKS:
            suite.case("bad deck: " + name, bad_deck, suite, runner, tmp, name, text, needles)
        suite.case("bad --set", bad_set, suite, runner, decks)
        suite.case("comparisons", comparisons, suite, runner, tmp)
        suite.case("casts", casts, suite, runner, tmp)
        return suite.finish(runner)


if __name__ == "__main__":
    sys.exit(main())
