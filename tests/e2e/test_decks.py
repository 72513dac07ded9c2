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
    # A NUL (a binary file given as a deck) is named with its place (yaml-cpp's message was
    # "unknown escape character").
    ("control character", "steps:\n  - {op: range, limit: 4, out: r}\noutputs:\n  r: o\x00.h5:/r\n",
     ["deck.yaml:4: column 7: the control character 0x00 (a deck is YAML text)"]),
    ("output not a tensor", "steps:\n  - {op: range, limit: 4, out: r}\noutputs:\n  q: o.h5:/q\n",
     ["deck.yaml:4:", "output 'q' is not a tensor"]),
    ("bad dataset name", "steps:\n  - {op: range, limit: 4, out: r}\noutputs:\n  r: no-colon\n", ["deck.yaml:4:"]),
    ("unknown parameter", "steps:\n  - {op: range, limit: '${rows}', out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "unknown parameter ${rows}"]),
    ("index out of range at run time",
     "tensors:\n  i: {value: [[0], [9]]}\n  u: {value: [1.0, 2.0]}\nsteps:\n"
     "  - {op: scatter_nd, indices: i, updates: u, shape: [4], out: s}\noutputs:\n  s: o.h5:/s\n",
     ["deck.yaml:5: step 1 (scatter_nd)", "indices[1] = [9] does not index into shape [4]", "tensor 'i'"]),
    # Inline values TensorFlow refuses (tf.constant(value, dtype=...)).
    ("ragged value", "tensors:\n  x: {value: [1, [2]]}\nsteps:\n  - {op: add, x: x, y: 0, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "tensor 'x': value is not rectangular"]),
    ("integer beyond int64", "tensors:\n  x: {value: [1, 9223372036854775808]}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "out-of-range integer 9223372036854775808"]),
    ("integer below int64", "tensors:\n  x: {value: [-9223372036854775809], dtype: int64}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "out-of-range integer -9223372036854775809"]),
    ("negative uint64", "tensors:\n  x: {value: [1, -1], dtype: uint64}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "out-of-range integer -1"]),
    ("real value for int32", "tensors:\n  x: {value: [1.5], dtype: int32}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "tensor 'x': cannot convert 1.5 to dtype int32"]),
    ("1e20 for int64", "tensors:\n  x: {value: [1e20], dtype: int64}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "cannot convert 1e20 to dtype int64"]),
    ("nan for int32", "tensors:\n  x: {value: [1, nan], dtype: int32}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "cannot convert nan to dtype int32"]),
    ("booleans for int16", "tensors:\n  x: {value: [true, false], dtype: int16}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "cannot convert true to dtype int16"]),
    ("boolean then number", "tensors:\n  x: {value: [true, 1]}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "mixes booleans and numbers: 1"]),
    ("real beyond inferred float32", "tensors:\n  x: {value: [1.0, 1e300]}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "1e300 is out of range for float32"]),
    ("integers for bool", "tensors:\n  x: {value: [1, 2], dtype: bool}\nsteps:\n"
     "  - {op: equal, x: x, y: true, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "cannot convert 1 to dtype bool"]),
    ("tag the value does not match", "tensors:\n  x: {value: [!!int 2.5]}\nsteps:\n"
     "  - {op: add, x: x, y: 0, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "'!!int 2.5' is not an integer"]),
    # random_uniform's bounds are values of its dtype: TF would wrap 2^32 to 0 for int32.
    ("random_uniform bound beyond its dtype",
     "steps:\n  - {op: random_uniform, shape: [4], dtype: int32, minval: 0, maxval: 4294967296, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2: step 1 (random_uniform)", "'maxval': 4294967296 does not fit int32"]),
    ("random_uniform real bound for int32",
     "steps:\n  - {op: random_uniform, shape: [4], dtype: int32, minval: 0.5, maxval: 4, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2: step 1 (random_uniform)", "cannot convert 0.5 to dtype int32"]),
    # range's limit: 5 would be the number or the tensor's rows.
    ("tensor named as a number", "tensors:\n  \"5\": {value: [1, 2, 3]}\nsteps:\n  - {op: range, limit: 5, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "tensor name '5' reads as a number"]),
    ("step output named as a number", "steps:\n  - {op: range, limit: 5, out: \"1e3\"}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2: step 1 (range): tensor name '1e3' reads as a number"]),
    ("a partition name twice",
     "tensors:\n  x: {value: [1, 2, 3]}\n  p: {value: [0, 1, 0]}\nsteps:\n"
     "  - {op: dynamic_partition, data: x, partitions: p, num_partitions: 2, out: [a, a]}\noutputs:\n  a: o.h5:/a\n",
     ["deck.yaml:5: step 1 (dynamic_partition)", "'out' lists 'a' twice"]),
    ("unknown schedule", "tensors:\n  x: {value: [1.0]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: o.h5:/r\noptions: {schedule: bogus}\n",
     ["deck.yaml:7:", "'schedule' must be auto, sequential or parallel, got 'bogus'"]),
    ("unknown bad_indices", "tensors:\n  x: {value: [1.0]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: o.h5:/r\noptions: {bad_indices: bogus}\n", ["deck.yaml:7:", "got 'bogus'"]),
    ("dtype of a dataset", "tensors:\n  x: {dataset: in.h5:/x, dtype: float64}\nsteps:\n"
     "  - {op: add, x: x, y: 1, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:2:", "tensor 'x': a dataset keeps its own dtype"]),
    ("unknown dtype of a dataset", "tensors:\n  x: {dataset: in.h5:/x, dtype: bogus}\nsteps:\n"
     "  - {op: add, x: x, y: 1, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2:", "a dataset keeps its own dtype"]),
    ("two YAML documents", "tensors:\n  x: {value: [1]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: o.h5:/r\n---\nsteps: 42\n", ["deck.yaml:7:", "a second YAML document"]),
    ("empty dtype", "tensors:\n  x: {value: [1], dtype: }\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2: 'dtype' must be a single value"]),
    ("dtype of an undeclared parameter", "tensors:\n  x: {value: [1], dtype: '${t}'}\nsteps:\n"
     "  - {op: add, x: x, y: 1, out: r}\noutputs:\n  r: o.h5:/r\n", ["deck.yaml:2: unknown parameter ${t}"]),
    # Every message about a step names it.
    ("empty output name", "tensors:\n  x: {value: [1]}\nsteps:\n  - {op: add, x: x, y: 1, out: ''}\n"
     "outputs:\n  x: o.h5:/r\n", ["deck.yaml:4: step 1 (add): a tensor name must not be empty"]),
    ("scalar given as a mapping", "tensors:\n  x: {value: [1]}\nsteps:\n  - {op: add, x: x, y: {}, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:4: step 1 (add): 'y' must be a single value"]),
    ("scalar given as a list", "tensors:\n  x: {value: [1]}\nsteps:\n  - {op: add, x: x, y: [1], out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:4: step 1 (add): 'y' must be a number, got '[1]'"]),
    ("partition list matching nothing", "tensors:\n  x: {value: [1]}\nsteps:\n"
     "  - {op: dynamic_stitch, indices: ['x/*'], data: [x], out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:4: step 1 (dynamic_stitch): 'x/*' matches no tensor"]),
    ("output inside another output", "tensors:\n  x: {value: [1]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "  - {op: add, x: x, y: 2, out: s}\noutputs:\n  r: o.h5:/a\n  s: o.h5:/a/b\n",
     ["deck.yaml:8: output 's'", "'/a' exists among this job's outputs to '", "o.h5' and is a dataset, not a group"]),
    ("range bound beyond int32", "steps:\n  - {op: range, limit: 2147483648, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["range: limit = 2147483648 does not fit dtype int32 (use dtype: int64)"]),
    ("range count beyond int64", "steps:\n  - {op: range, start: 9223372036854775807, limit: -9223372036854775808, "
     "delta: -1, dtype: int64, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["has 18446744073709551615 elements, more than fit in int64"]),
    # A key written through an alias is that key.
    ("a key twice through an alias", "tensors:\n  &k x: {value: [1]}\n  *k : {value: [100]}\nsteps:\n"
     "  - {op: add, x: x, y: 1, out: r}\noutputs:\n  r: o.h5:/r\n",
     ["deck.yaml:3: duplicate key 'x' (first at line 2)"]),
    # Tags are for single values; on a list or a mapping the reader would drop them.
    ("a tag on a mapping", "tensors:\n  x: !custom {value: [1]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2: the tag '!custom' on a mapping"]),
    ("a tag on a list", "tensors:\n  x: {value: !!binary [1]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2: the tag '!!binary' on a list"]),
    ("an unknown tag on a value", "tensors:\n  x: {value: [!custom 1]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: o.h5:/r\n", ["deck.yaml:2: unsupported YAML tag '!custom' (decks know"]),
    ("compression given as a list", "tensors:\n  x: {value: [1]}\nsteps:\n  - {op: add, x: x, y: 1, out: r}\n"
     "outputs:\n  r: {dataset: o.h5:/r, compression: [gzip]}\n", ["deck.yaml:6: 'compression' must be a single value"]),
]


def range_at_the_ends_of_int64(suite, runner, tmp):
    """range near the ends of int64, where limit - start or the count times delta overflow:
    exactly the values between start and limit (an empty tensor came out)."""
    ends = [("a", "start: -9223372036854775808, limit: 3, delta: 9223372036854775807, dtype: int64",
             np.array([-2**63, -1], np.int64)),
            ("b", "start: 9223372036854775800, limit: 9223372036854775807, delta: 3, dtype: int64",
             np.array([2**63 - 8, 2**63 - 5, 2**63 - 2], np.int64)),
            ("c", "start: 2147483647, limit: -2147483648, delta: -2147483648", np.array([2**31 - 1, -1], np.int32))]
    r = run_deck(runner, tmp, "range_ends", "steps:\n%soutputs:\n%s" % (
        "".join("  - {op: range, %s, out: %s}\n" % (args, name) for name, args, _ in ends),
        "".join("  %s: range_ends.h5:/%s\n" % (name, name) for name, _, _ in ends)))
    suite.require(r.rc == 0, "the range deck failed", r)
    for name, _, expected in ends:
        e2e.same_array(suite, name, e2e.read_h5(os.path.join(tmp, "range_ends.h5"), "/" + name), expected, r)


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
    suite.check(r.stderr.count("deck.yaml:") <= 1, "the message names the deck more than once", r)
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
    """cast to a dtype, as tf.cast: truncation toward zero, real parts, x != 0 for bool (of a
    complex, its real part); a NaN or out-of-range value cast to an integer is refused naming
    its element."""
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
                "  - {op: cast, x: z, dtype: bool, out: zb}\n"
                "outputs:\n  i: cast_out.h5:/i\n  b: cast_out.h5:/b\n  h: cast_out.h5:/h\n  zr: cast_out.h5:/zr\n"
                "  c: cast_out.h5:/c\n  u: cast_out.h5:/u\n  zb: cast_out.h5:/zb\n")
    r = runner.run(["run", deck, "-q"])
    suite.require(r.rc == 0, "cast deck failed", r)
    out = os.path.join(tmp, "cast_out.h5")
    ints = np.trunc(x).astype(np.int64)
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    for name, expected in (("i", ints), ("b", x != 0), ("h", half), ("zr", z.real.astype(np.float32)),
                           ("c", x.astype(np.complex64)), ("u", ints.astype(np.uint8)),
                           ("zb", z.real != 0)):  # TensorFlow looks at the real part alone (0 + 2j is False)
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
    suite.check(r.rc == 2 and "cannot convert 6.6e27 to dtype int32" in r.stderr, "add of 6.6e27: exit %s" % r.rc, r)
    suite.check(not os.path.exists(os.path.join(tmp, "cast_bad.h5")), "an output was written")


def helpers_read_subnormals_as_tensorflow(suite, runner, tmp):
    """The helpers read and write subnormals as TensorFlow's CPU kernels do (DAZ and FTZ; the
    values TensorFlow 2.21 gives on x86, measured): add, multiply and the comparisons, and a
    cast that changes a float's width or makes a bool; a cast within one width keeps the
    bits. --keep-denormals gives IEEE's results instead."""
    f = np.array([1e-40, -1e-40, 1e-39, 1.0], np.float32)  # subnormal, subnormal, subnormal, normal
    d = np.array([1e-310, -1e-310, 1e-40, 1e-39], np.float64)  # subnormal in double; the others in float
    c = np.array([1e-40 + 1j, 1 - 1e-40j, 1e-40 + 1e-40j, 1], np.complex64)
    e2e.write_h5(os.path.join(tmp, "sub_in.h5"), {"/f": f, "/d": d, "/c": c}, mode="w")
    steps = [("fd", "cast", "f", "dtype: float64"), ("fb", "cast", "f", "dtype: bool"),
             ("fc", "cast", "f", "dtype: complex64"), ("df", "cast", "d", "dtype: float32"),
             ("db", "cast", "d", "dtype: bool"), ("cc", "cast", "c", "dtype: complex128"),
             ("fa", "add", "f", "y: 0"), ("fm", "multiply", "f", "y: 2"), ("fe", "equal", "f", "y: 0"),
             ("fg", "greater", "f", "y: 0"), ("dl", "less_equal", "d", "y: 0"), ("cm", "multiply", "c", "y: 1e-40")]
    text = ("tensors:\n  f: sub_in.h5:/f\n  d: sub_in.h5:/d\n  c: sub_in.h5:/c\nsteps:\n" +
            "".join("  - {op: %s, x: %s, %s, out: %s}\n" % (op, x, arg, out) for out, op, x, arg in steps) +
            "outputs:\n" + "".join("  %s: sub_out.h5:/%s\n" % (out, out) for out, _, _, _ in steps))
    flushed = {
        "fd": np.array([0, -0.0, 0, 1], np.float64), "fb": np.array([False, False, False, True]), "fc": f.astype(np.complex64),
        "df": np.array([0, -0.0, 0, 0], np.float32), "db": np.array([False, False, True, True]),
        "cc": np.array([1j, complex(1, -0.0), 0, 1], np.complex128), "fa": np.array([0, 0, 0, 1], np.float32),
        "fm": np.array([0, -0.0, 0, 2], np.float32), "fe": np.array([1, 1, 1, 0], np.int32),
        "fg": np.array([0, 0, 0, 1], np.int32), "dl": np.array([1, 1, 0, 0], np.int32), "cm": np.zeros(4, np.complex64)}
    with np.errstate(all="ignore"):
        ieee = {"fd": f.astype(np.float64), "fb": f != 0, "fc": f.astype(np.complex64), "df": d.astype(np.float32),
                "db": d != 0, "cc": c.astype(np.complex128), "fa": f + np.float32(0), "fm": f * np.float32(2),
                "fe": (f == 0).astype(np.int32), "fg": (f > 0).astype(np.int32), "dl": (d <= 0).astype(np.int32)}
    for name, expected, extra in (("sub", flushed, []), ("keep", ieee, ["--keep-denormals"])):
        r = run_deck(runner, tmp, name, text, *extra)
        suite.require(r.rc == 0, "deck %s failed" % name, r)
        for out, want in expected.items():
            e2e.same_array(suite, "%s %s" % (name, out), e2e.read_h5(os.path.join(tmp, "sub_out.h5"), "/" + out), want, r)
        os.remove(os.path.join(tmp, "sub_out.h5"))


def run_deck(runner, tmp, name, text, *argv):
    """Writes deck NAME.yaml into tmp and runs it."""
    deck = os.path.join(tmp, name + ".yaml")
    with open(deck, "w") as f:
        f.write(text)
    return runner.run(["run", deck, "-q"] + list(argv))


def output_refused_before_the_steps(suite, runner, tmp):
    """An output the file system cannot take (a name longer than it allows, a read-only file) is
    refused before the deck reads or runs anything: its error wins over a step that would fail
    later, exit 3, naming the deck line and the output. An output folder the deck creates is
    still created."""
    long_name = "n" * 253 + ".h5"  # 256 bytes
    read_only = os.path.join(tmp, "read_only.h5")
    e2e.write_h5(read_only, {"/kept": np.arange(3, dtype=np.int32)}, mode="w")
    os.chmod(read_only, 0o444)
    for out, needle in ((long_name, "its name is 256 bytes, more than the file system of"),
                        ("read_only.h5", "the existing file is read-only (mode 0444)")):
        r = run_deck(runner, tmp, "refused", "tensors:\n  x: {value: [1, 2, 3]}\n  i: {value: [[7]]}\nsteps:\n"
                     "  - {op: gather_nd, params: x, indices: i, out: g}\noutputs:\n  g: %s:/g\n" % out)
        suite.check(r.rc == 3, "%s: exit %s, expected 3 (before the step's bad index)" % (out[:12], r.rc), r)
        suite.check("refused.yaml:7: output 'g'" in r.stderr and needle in r.stderr, "the message", r)
    suite.check(not os.path.exists(os.path.join(tmp, long_name)), "an output was written")
    e2e.same_array(suite, "read-only file", e2e.read_h5(read_only, "/kept"), np.arange(3, dtype=np.int32))
    r = run_deck(runner, tmp, "made", "tensors:\n  x: {value: [1, 2, 3]}\nsteps:\n"
                 "  - {op: range, limit: 2, out: r}\noutputs:\n  r: new/folder/made.h5:/r\n")
    suite.check(r.rc == 0, "a deck's new output folder", r)
    e2e.same_array(suite, "made", e2e.read_h5(os.path.join(tmp, "new", "folder", "made.h5"), "/r"),
                   np.arange(2, dtype=np.int32), r)


def real_scalar_for_integer_tensor(suite, runner, tmp):
    """A real scalar for an integer or bool tensor is refused, as TensorFlow refuses converting it
    (2.0 included), naming the step and the value; integers and reals where they fit still work."""
    e2e.write_h5(os.path.join(tmp, "scalar_in.h5"), {"/i": np.array([1, 2, 3], np.int64)}, mode="w")
    for x, step, shown in (("{value: [1, 2, 3]}", "{op: less, x: x, y: 2.5, out: r}", "2.5 to dtype int32"),
                           ("{value: [1, 2, 3]}", "{op: equal, x: x, y: 2.0, out: r}", "2.0 to dtype int32"),
                           ("{value: [1, 2, 3]}", "{op: multiply, x: x, y: 0.5, out: r}", "0.5 to dtype int32"),
                           ("{value: [1, 2, 3]}", "{op: add, x: x, y: '${v}', out: r}", "2.5 to dtype int32"),
                           ("{value: [1, 2, 3]}", "{op: add, x: x, y: !!float 2, out: r}", "!!float 2 to dtype int32"),
                           ("scalar_in.h5:/i", "{op: greater, x: x, y: .inf, out: r}", ".inf to dtype int64"),
                           ("{value: [true]}", "{op: equal, x: x, y: 1, out: r}", "1 to dtype bool")):
        r = run_deck(runner, tmp, "scalar", "params:\n  v: 1\ntensors:\n  x: %s\nsteps:\n  - %s\n"
                     "outputs:\n  r: scalar_bad.h5:/r\n" % (x, step), "--set", "v=2.5")
        suite.check(r.rc == 2 and "scalar.yaml:6: step 1 (" in r.stderr and "'y': cannot convert " + shown in r.stderr,
                    "%s on %s: exit %s" % (step, x, r.rc), r)
    suite.check(not os.path.exists(os.path.join(tmp, "scalar_bad.h5")), "an output was written")
    r = run_deck(runner, tmp, "scalar", "tensors:\n  x: {value: [1, 2, 3]}\n  f: {value: [1.0, 2.0, 3.0]}\n"
                 "  b: {value: [true, false, true]}\nsteps:\n  - {op: add, x: x, y: 2, out: i}\n"
                 "  - {op: less, x: f, y: 2.5, out: l}\n  - {op: equal, x: b, y: true, out: e}\n"
                 "outputs:\n  i: scalar_out.h5:/i\n  l: scalar_out.h5:/l\n  e: scalar_out.h5:/e\n")
    suite.require(r.rc == 0, "integer and real scalars where they fit", r)
    out = os.path.join(tmp, "scalar_out.h5")
    for name, expected in (("i", np.array([3, 4, 5], np.int32)), ("l", np.array([1, 1, 0], np.int32)),
                           ("e", np.array([1, 0, 1], np.int32))):
        e2e.same_array(suite, name, e2e.read_h5(out, "/" + name), expected, r)
    # Integers beyond int64 go into a uint64 tensor, as TensorFlow converts them to its dtype
    # (they were refused as "an integer that int64 holds"); into an int64 one they are refused,
    # naming the step once.
    u = np.array([0, 1, 2 ** 63, 2 ** 64 - 1], np.uint64)
    e2e.write_h5(os.path.join(tmp, "scalar_u.h5"), {"/u": u}, mode="w")
    r = run_deck(runner, tmp, "scalar", "tensors:\n  u: scalar_u.h5:/u\nsteps:\n"
                 "  - {op: add, x: u, y: 18446744073709551615, out: a}\n"
                 "  - {op: greater_equal, x: u, y: 9223372036854775808, out: g}\n"
                 "outputs:\n  a: scalar_u_out.h5:/a\n  g: scalar_u_out.h5:/g\n")
    suite.require(r.rc == 0, "integers beyond int64 for a uint64 tensor", r)
    with np.errstate(over="ignore"):
        wrapped = u + np.uint64(2 ** 64 - 1)
    e2e.same_array(suite, "a", e2e.read_h5(os.path.join(tmp, "scalar_u_out.h5"), "/a"), wrapped, r)
    e2e.same_array(suite, "g", e2e.read_h5(os.path.join(tmp, "scalar_u_out.h5"), "/g"),
                   (u >= np.uint64(2 ** 63)).astype(np.int32), r)
    r = run_deck(runner, tmp, "scalar", "tensors:\n  x: scalar_in.h5:/i\nsteps:\n"
                 "  - {op: add, x: x, y: 18446744073709551615, out: a}\noutputs:\n  a: scalar_bad.h5:/a\n")
    suite.check(r.rc == 2 and "scalar.yaml:4: step 1 (add): 'y': cannot convert 18446744073709551615 to dtype int64"
                in r.stderr, "2**64 - 1 for int64: exit %s" % r.rc, r)


def inline_values(suite, runner, tmp, name, values, expected):
    """Writes the inline tensors {name: spec} and checks each against tf.constant's result."""
    text = "tensors:\n%ssteps:\n  - {op: range, limit: 1, out: unused}\noutputs:\n%s" % (
        "".join("  %s: %s\n" % (k, v) for k, v in values.items()),
        "".join("  %s: %s.h5:/%s\n" % (k, name, k) for k in values))
    r = run_deck(runner, tmp, name, text)
    suite.require(r.rc == 0, "deck %s failed" % name, r)
    for key, value in expected.items():
        got = e2e.read_h5(os.path.join(tmp, name + ".h5"), "/" + key)
        if value.dtype == object:  # strings: their bytes are pointers
            suite.check(got.dtype == object and got.tolist() == value.tolist(), "%s: %s" % (key, got), r)
        else:
            e2e.same_array(suite, "%s %s" % (key, values[key]), got, value, r)


def inline_integers_as_tensorflow(suite, runner, tmp):
    """Integers int32 does not hold make the value int64, as tf.constant infers it (they wrapped)."""
    inline_values(suite, runner, tmp, "wide", {
        "a": "{value: [1, 2147483648, 9223372036854775807]}", "b": "{value: [-2147483649, 0]}",
        "c": "{value: [-9223372036854775808]}", "d": "{value: [2147483647, -2147483648]}"}, {
        "a": np.array([1, 2147483648, 9223372036854775807], np.int64), "b": np.array([-2147483649, 0], np.int64),
        "c": np.array([-9223372036854775808], np.int64), "d": np.array([2147483647, -2147483648], np.int32)})


def inline_dtypes_as_tensorflow(suite, runner, tmp):
    """tf.constant(value, dtype=...): integers exact (uint64's beyond int64 too) and wrapped modulo
    2^bits into a narrower dtype; booleans into numbers; an empty value is float32."""
    inline_values(suite, runner, tmp, "dtypes", {
        "u": "{value: [18446744073709551614, 9223372036854775808], dtype: uint64}",
        "i": "{value: [9223372036854775807, -9223372036854775808], dtype: int64}",
        "w": "{value: [300, -1], dtype: uint8}", "n": "{value: [2147483648], dtype: int32}",
        "b": "{value: [true, false], dtype: float32}", "c": "{value: [true, false], dtype: int32}",
        "f": "{value: [18446744073709551615], dtype: float64}",
        "e": "{value: []}", "e2": "{value: [[]]}", "e3": "{value: [], dtype: int64}"}, {
        "u": np.array([18446744073709551614, 9223372036854775808], np.uint64),
        "i": np.array([9223372036854775807, -9223372036854775808], np.int64),
        "w": np.array([44, 255], np.uint8), "n": np.array([-2147483648], np.int32),
        "b": np.array([1, 0], np.float32), "c": np.array([1, 0], np.int32),
        "f": np.array([18446744073709551615], np.float64),
        "e": np.zeros([0], np.float32), "e2": np.zeros([1, 0], np.float32), "e3": np.zeros([0], np.int64)})


def inline_mixes_as_tensorflow(suite, runner, tmp):
    """Which converter ends a conversion depends on the first element and on the first element
    each converter stops at, as in tf.constant: booleans count as integers for a number dtype,
    a cast after the fallback converter flushes subnormals, and an integer goes to a real
    dtype rounded once."""
    inline_values(suite, runner, tmp, "mixes", {
        "bf": "{value: [true, 1.5], dtype: float32}", "ib": "{value: [1, true]}", "fb": "{value: [1.5, true]}",
        "cs": "{value: [1e-40, 1], dtype: complex64}", "fs": "{value: [1e300, 1e-40], dtype: float32}",
        "fk": "{value: [1e-40], dtype: float32}", "ic": "{value: [9007199254740993], dtype: complex64}",
        "i8": "{value: [1, true], dtype: int8}", "ub": "{value: [true, false], dtype: uint64}"}, {
        "bf": np.array([1, 1.5], np.float32), "ib": np.array([1, 1], np.int32), "fb": np.array([1.5, 1], np.float32),
        "cs": np.array([0, 1], np.complex64), "fs": np.array([np.inf, 0], np.float32),
        "fk": np.array([1e-40], np.float32), "ic": np.array([2 ** 53], np.complex64),
        "i8": np.array([1, 1], np.int8), "ub": np.array([1, 0], np.uint64)})


def yaml_scalars(suite, runner, tmp):
    """YAML's own spellings: .nan/.inf/-.inf, True/FALSE, 0x10 and 0o17 integers, and the tags
    !!str, !!float, !!int and !!bool; nan, inf and infinity stay reals as before."""
    inline_values(suite, runner, tmp, "scalars", {
        "r": "{value: [.nan, .inf, -.inf, .NaN, +.INF, nan, -infinity, 1., .5, 1e3]}",
        "b": "{value: [True, FALSE, TRUE, false]}", "h": "{value: [0x10, 0o17, +3]}",
        "s": "{value: [!!str 5, '6']}", "f": "{value: [!!float 5, 2]}", "i": "{value: [!!int 5, 2]}",
        "t": "{value: [!!bool true, False]}"}, {
        "r": np.array([np.nan, np.inf, -np.inf, np.nan, np.inf, np.nan, -np.inf, 1, .5, 1e3], np.float32),
        "b": np.array([True, False, True, False]), "h": np.array([16, 15, 3], np.int32),
        "s": np.array([b"5", b"6"], object), "f": np.array([5, 2], np.float32), "i": np.array([5, 2], np.int32),
        "t": np.array([True, False])})
    r = run_deck(runner, tmp, "uniform", "steps:\n  - {op: random_uniform, shape: [3], minval: -.inf, out: u}\n"
                 "  - {op: add, x: u, y: -.inf, out: v}\n  - {op: range, limit: 0x4, out: p}\n"
                 "outputs:\n  v: uniform.h5:/v\n  p: uniform.h5:/p\n")
    suite.require(r.rc == 0, "-.inf as a number", r)
    e2e.same_array(suite, "range to 0x4", e2e.read_h5(os.path.join(tmp, "uniform.h5"), "/p"),
                   np.arange(4, dtype=np.int32), r)


def stale_partitions(suite, runner, tmp):
    """A step that writes the partition list q again ends the earlier, longer one: "q/*" is the
    latest partitions, and an earlier q/2 is no longer a tensor."""
    head = ("tensors:\n  x: {value: [1, 2, 3, 4]}\n  p: {value: [0, 1, 0, 1]}\n  pos: {value: [0, 1, 2, 3]}\n"
            "steps:\n  - {op: dynamic_partition, data: x, partitions: p, num_partitions: 3, out: q}\n"
            "  - {op: dynamic_partition, data: x, partitions: p, num_partitions: 2, out: q}\n")
    r = run_deck(runner, tmp, "stale", head + "  - {op: dynamic_partition, data: pos, partitions: p, num_partitions: 2,"
                 " out: i}\n  - {op: dynamic_stitch, indices: ['i/*'], data: ['q/*'], out: m}\n"
                 "outputs:\n  m: stale.h5:/m\n")
    suite.require(r.rc == 0, "stitch of the latest partitions", r)
    e2e.same_array(suite, "m", e2e.read_h5(os.path.join(tmp, "stale.h5"), "/m"), np.array([1, 2, 3, 4], np.int32), r)
    r = run_deck(runner, tmp, "stale", head + "outputs:\n  q/2: stale_bad.h5:/q2\n")
    suite.check(r.rc == 2 and "output 'q/2' is not a tensor" in r.stderr, "q/2 after q of 2: exit %s" % r.rc, r)


def report_is_the_deck(suite, runner, tmp):
    """--report naming the deck itself is refused before any work: the deck is an input."""
    deck = os.path.join(tmp, "report.yaml")
    text = "tensors:\n  x: {value: [1.0]}\nsteps:\n  - {op: add, x: x, y: 1, out: y}\noutputs:\n  y: report.h5:/y\n"
    with open(deck, "w") as f:
        f.write(text)
    r = runner.run(["run", deck, "-q", "--report", deck])
    suite.check(r.rc == 2 and "a report never replaces one" in r.stderr, "--report DECK: exit %s" % r.rc, r)
    with open(deck) as f:
        suite.check(f.read() == text, "the deck was overwritten")
    suite.check(not os.path.exists(os.path.join(tmp, "report.h5")), "an output was written")


def set_once_and_trimmed(suite, runner, tmp):
    """--set of one name twice is refused; spaces around a name and a value are dropped, in the
    outputs' `set` attribute too (it kept 'n= 3 ')."""
    text = ("params:\n  n: 1\ntensors:\n  x: {value: [1, 2]}\nsteps:\n  - {op: add, x: x, y: '${n}', out: y}\n"
            "outputs:\n  y: set.h5:/y\n")
    r = run_deck(runner, tmp, "set", text, "--set", "n=3", "--set", "n=5")
    suite.check(r.rc == 2 and "--set n: given twice" in r.stderr, "--set twice: exit %s" % r.rc, r)
    for value in ("3 ", " 3", " 3 "):
        r = run_deck(runner, tmp, "set", text, "--set", " n =" + value, "--overwrite")
        suite.require(r.rc == 0, "--set 'n=%s'" % value, r)
        e2e.same_array(suite, "n=%r" % value, e2e.read_h5(os.path.join(tmp, "set.h5"), "/y"),
                       np.array([4, 5], np.int32), r)
        recorded = [v.decode() if isinstance(v, bytes) else str(v)
                    for v in np.atleast_1d(e2e.read_attrs(os.path.join(tmp, "set.h5"), "/y")["set"])]
        suite.check(recorded == ["n=3"], "--set 'n=%s': the set attribute is %r" % (value, recorded), r)


def deck_not_a_file(suite, runner, tmp):
    # A pipe would block the job at the open, a device feed it without end: both are refused.
    fifo = os.path.join(tmp, "fifo.yaml")
    os.mkfifo(fifo)
    for deck in (fifo, "/dev/zero"):
        r = runner.run(["run", deck], timeout=60)
        suite.check(r.rc == 2, "expected exit code 2, got %s" % r.rc, r)
        suite.check(deck + ": not a regular file" in r.stderr, "message lacks 'not a regular file'", r)


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
        suite.case("deck not a file", deck_not_a_file, suite, runner, tmp)
        suite.case("comparisons", comparisons, suite, runner, tmp)
        suite.case("range at the ends of int64", range_at_the_ends_of_int64, suite, runner, tmp)
        suite.case("casts", casts, suite, runner, tmp)
        suite.case("helpers read subnormals as tensorflow", helpers_read_subnormals_as_tensorflow, suite, runner, tmp)
        suite.case("output refused before the steps", output_refused_before_the_steps, suite, runner, tmp)
        suite.case("real scalar for an integer tensor", real_scalar_for_integer_tensor, suite, runner, tmp)
        suite.case("inline integers as tensorflow", inline_integers_as_tensorflow, suite, runner, tmp)
        suite.case("inline dtypes as tensorflow", inline_dtypes_as_tensorflow, suite, runner, tmp)
        suite.case("inline mixes as tensorflow", inline_mixes_as_tensorflow, suite, runner, tmp)
        suite.case("yaml scalars", yaml_scalars, suite, runner, tmp)
        suite.case("stale partitions", stale_partitions, suite, runner, tmp)
        suite.case("report is the deck", report_is_the_deck, suite, runner, tmp)
        suite.case("set once and trimmed", set_once_and_trimmed, suite, runner, tmp)
        return suite.finish(runner)


if __name__ == "__main__":
    sys.exit(main())
