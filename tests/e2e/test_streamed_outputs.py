#!/usr/bin/python3
"""End-to-end: outputs made as they are written (ctest e2e_streamed_outputs_np_N).

A one-op job whose op can make its output's rows on demand (gather-nd on one rank, or with
params read whole on every rank; dynamic-partition at any rank count; scatter-nd,
tensor-scatter-* and dynamic-stitch with at most twice as many index rows as output rows) never holds the
output: it makes a few MiB of rows at a time into one buffer and writes them
(docs/design.md, "Streamed outputs"). These cases run each job both ways, streamed and with
SHARDOPS_STREAM_OUTPUTS=0 (the output made whole first), and check that the two outputs are
byte for byte NumPy's, that the report says which way each output went, that every index is
checked before any row is written (the error of a bad index in the last piece, nothing left
behind), and the paths that cannot stream: chunked storage, params fetched from their owners.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import e2e_common as e2e  # noqa: E402

HELD = {"SHARDOPS_STREAM_OUTPUTS": "0"}


def gather(inp, out, extra=(), report=None):
    argv = ["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"), "--out", out, "-q"]
    return argv + list(extra) + (["--report", report] if report else [])


def streamed_flags(report):
    with open(report) as f:
        return [o["streamed"] for o in json.load(f)["outputs"]]


def leftovers(d):
    return [n for n in os.listdir(d) if ".shardops-" in n]


def make_inputs(d, params, idx):
    path = os.path.join(d, "in.h5")
    e2e.write_h5(path, {"/params": params, "/idx": idx}, mode="w")
    return path


def each_way(t, sh, argv_to, expected, flags, kept=None):
    """Runs argv_to(OUT, REPORT) streamed and held (SHARDOPS_STREAM_OUTPUTS=0), OUT a fresh
    file's /y (or, with kept, a file holding the datasets of kept, which must stay as they
    were). expected: the array /y must hold, or {name: array} for a job of several outputs
    (/y/name); None: streamed and held only equal each other. flags: the report's streamed
    flags when streamed (all False held). Nothing may be left behind."""
    got = {}
    for name, env in (("streamed", None), ("held", HELD)):
        out = os.path.join(t.d, name + ".h5")
        if os.path.exists(out):
            os.remove(out)  # from the job before
        if kept:
            e2e.write_h5(out, kept, mode="w")
        report = os.path.join(t.d, name + ".json")
        r = sh.run(argv_to(e2e.ref(out, "/y"), report), env=env)
        e2e.expect_success(t.suite, r)
        outputs = expected if isinstance(expected, dict) else {"": expected}
        got[name] = {k: e2e.read_h5(out, "/y/" + k if k else "/y") for k in outputs}
        for k, array in outputs.items():
            if array is not None:
                e2e.same_array(t.suite, "%s %s" % (name, k), got[name][k], array, r)
        want = flags if name == "streamed" else [False] * len(flags)
        t.suite.check(streamed_flags(report) == want, "%s: the report says streamed=%s, expected %s" %
                      (name, streamed_flags(report), want), r)
        for k, array in (kept or {}).items():
            e2e.same_array(t.suite, "%s %s" % (name, k), e2e.read_h5(out, k), array, r)
    for k in got["streamed"]:
        t.suite.check(got["streamed"][k].tobytes() == got["held"][k].tobytes(),
                      "%s: streamed and held bytes differ" % k)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def both_ways(t, sh, params, idx, expected, stream_expected, extra=(), existing=False):
    """gather-nd streamed and held: both NumPy's bytes; the report says which way it went."""
    inp = make_inputs(t.d, params, idx)
    each_way(t, sh, lambda out, report: gather(inp, out, extra, report), expected, [stream_expected],
             kept={"/kept": np.arange(10, dtype=np.int16)} if existing else None)


def several_pieces(t, sh):
    """An output of several 8 MiB pieces and a remainder, params small enough to be read on
    every rank: streamed at every rank count."""
    rng = np.random.default_rng(3)
    params = rng.standard_normal((3000, 16)).astype(np.float32)
    idx = rng.integers(0, 3000, size=(300001, 1)).astype(np.int64)
    both_ways(t, sh, params, idx, params[idx[:, 0]], True)


def into_an_existing_file(t, sh):
    """Streamed straight into an existing file (past its end), its other datasets kept."""
    rng = np.random.default_rng(4)
    params = rng.integers(-100, 100, size=(500, 3, 5)).astype(np.int16)
    idx = rng.integers(0, 500, size=(70001, 1)).astype(np.int32)
    both_ways(t, sh, params, idx, params[idx[:, 0]], True, existing=True)


def deep_batched_indices(t, sh):
    """Index depth 2 under batch dims [n, 4]: each output row gathers four slices (9.6 MB: two
    pieces)."""
    rng = np.random.default_rng(5)
    params = rng.standard_normal((40, 50, 3))
    idx = np.stack([rng.integers(0, 40, size=(100001, 4)), rng.integers(0, 50, size=(100001, 4))], axis=-1)
    idx = idx.astype(np.int32)
    both_ways(t, sh, params, idx, params[idx[..., 0], idx[..., 1]], True)


def into_its_input_file(t, sh):
    """The output written into the file whose pages the rows are made from: a new dataset
    (past the file's end), then --overwrite of params itself (through the new file, merged
    at the commit). The rows read are the input as it was, the other datasets kept."""
    rng = np.random.default_rng(13)
    params = rng.standard_normal((40000, 16)).astype(np.float32)  # 2.6 MB: mapped
    idx = rng.integers(0, 40000, size=(200001, 1)).astype(np.int64)  # 12.8 MB out: two pieces
    inp = make_inputs(t.d, params, idx)
    for out, extra in (("/g", []), ("/params", ["--overwrite"])):
        report = os.path.join(t.d, "r.json")
        r = sh.run(gather(inp, e2e.ref(inp, out), extra, report))
        e2e.expect_success(t.suite, r)
        e2e.same_array(t.suite, out, e2e.read_h5(inp, out), params[idx[:, 0]], r)
        t.suite.check(streamed_flags(report) == [True], "not streamed: %s" % streamed_flags(report), r)
    e2e.same_array(t.suite, "/idx kept", e2e.read_h5(inp, "/idx"), idx)
    e2e.same_array(t.suite, "/g kept", e2e.read_h5(inp, "/g"), params[idx[:, 0]])
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def chunked_storage_is_made_whole(t, sh):
    """Chunked, compressed storage goes through HDF5: the rows are made whole first."""
    rng = np.random.default_rng(6)
    params = rng.standard_normal((1000, 8)).astype(np.float32)
    idx = rng.integers(0, 1000, size=(50000, 1)).astype(np.int64)
    both_ways(t, sh, params, idx, params[idx[:, 0]], False, extra=["--compression", "gzip=1"])


def fetched_params_are_held(t, sh):
    """Params larger than the output are fetched from their owners at 2+ ranks: not streamed."""
    rng = np.random.default_rng(7)
    params = rng.standard_normal((100000, 4)).astype(np.float32)
    idx = rng.integers(0, 100000, size=(5000, 1)).astype(np.int64)
    both_ways(t, sh, params, idx, params[idx[:, 0]], sh.np == 1)


def refused_both_ways(t, sh, argv_to, text, existing=True):
    """argv_to(out) (the job writing out) fails streamed as held: exit 2 on every rank, one
    error line with TF's text, the same for both, no output; with existing, an existing
    target is left unchanged too; nothing left behind."""
    messages = []
    for env in (None, HELD):
        out = os.path.join(t.d, "new.h5")
        r = sh.run(argv_to(e2e.ref(out, "/y")), env=env)
        t.suite.require(not r.timed_out, "hung", r)
        t.suite.check(r.rc == 2, "exit %s, expected 2" % r.rc, r)
        lines = e2e.error_lines(r.stderr)
        t.suite.check(len(lines) == 1 and text in lines[0], "not TF's message (%r): %s" % (text, lines), r)
        messages.append(lines)
        t.suite.check(not os.path.exists(out), "an output was left", r)
        if existing:
            target = os.path.join(t.d, "existing.h5")
            e2e.write_h5(target, {"/kept": np.arange(5)}, mode="w")
            before = e2e.file_state(target)
            r = sh.run(argv_to(e2e.ref(target, "/y")), env=env)
            t.suite.check(r.rc == 2, "existing target: exit %s, expected 2" % r.rc, r)
            t.suite.check(e2e.file_state(target) == before, "the existing target changed", r)
    t.suite.check(messages[0] == messages[1], "streamed and held jobs say different things: %s" % messages)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def bad_index_in_the_last_piece(t, sh):
    """A bad index in the last piece: TF's message, exit 2 on every rank, no output, nothing
    left, as when the output is held; the same with an existing target, which is unchanged."""
    rng = np.random.default_rng(8)
    params = rng.standard_normal((2000, 16)).astype(np.float32)
    idx = rng.integers(0, 2000, size=(300000, 1)).astype(np.int64)
    idx[299990, 0] = 2000
    inp = make_inputs(t.d, params, idx)
    refused_both_ways(t, sh, lambda out: gather(inp, out),
                      "indices[299990] = [2000] does not index into param shape [2000,16]")


def ignored_bad_indices_give_zero_rows(t, sh):
    """--bad-indices ignore: a bad index gives a zero row, streamed as held."""
    rng = np.random.default_rng(9)
    params = rng.standard_normal((1000, 6))
    idx = rng.integers(0, 1000, size=(40000, 1)).astype(np.int32)
    idx[[0, 17, 39999], 0] = [-1, 1000, 5000]
    expected = params[np.clip(idx[:, 0], 0, 999)]
    expected[[0, 17, 39999]] = 0
    both_ways(t, sh, params, idx, expected, True, extra=["--bad-indices", "ignore"])


def partition_both_ways(t, sh, data, ids, num, streamed, existing=False):
    """dynamic-partition streamed and held: every output NumPy's, the report's flags (an
    empty output has no rows to make: it is written as any empty dataset)."""
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/data": data, "/ids": ids}, mode="w")
    each_way(t, sh, lambda out, report: ["dynamic-partition", "--data", e2e.ref(inp, "/data"), "--partitions",
                                         e2e.ref(inp, "/ids"), "--num-partitions", str(num), "--out", out, "-q",
                                         "--report", report],
             {str(p): data[ids == p] for p in range(num)}, [streamed and bool((ids == p).any()) for p in range(num)],
             kept={"/kept": np.arange(3, dtype=np.uint8)} if existing else None)


def partition_outputs(t, sh):
    """Sixteen outputs, some over 8 MiB, one empty, made from data where it lies."""
    rng = np.random.default_rng(10)
    data = rng.standard_normal((400001, 16)).astype(np.float32)
    ids = rng.choice([0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], size=400001,
                     p=[0.5] + [0.5 / 14] * 14).astype(np.int32)
    partition_both_ways(t, sh, data, ids, 16, True)


def partition_rank_two_ids_into_an_existing_file(t, sh):
    """Rank-2 partition ids over [n, 3, 2] int16 data (rows of 2 elements), into an existing file."""
    rng = np.random.default_rng(11)
    data = rng.integers(-9, 9, size=(50001, 3, 2)).astype(np.int16)
    ids = rng.integers(0, 3, size=(50001, 3)).astype(np.int32)
    partition_both_ways(t, sh, data, ids, 3, True, existing=True)


def partition_bad_id(t, sh):
    """A bad partition id near the end: TF's message, exit 2, nothing written or left."""
    rng = np.random.default_rng(12)
    data = rng.standard_normal((300000, 8))
    ids = rng.integers(0, 4, size=300000).astype(np.int32)
    ids[299999] = 4
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/data": data, "/ids": ids}, mode="w")
    refused_both_ways(t, sh, lambda out: ["dynamic-partition", "--data", e2e.ref(inp, "/data"), "--partitions",
                                          e2e.ref(inp, "/ids"), "--num-partitions", "4", "--out", out, "-q"],
                      "partitions[299999] = 4 is not in [0, 4)", existing=False)


def last_writer(tensor, rows, updates):
    """tensor with updates[k] assigned to row rows[k] in order: the last duplicate wins."""
    out = tensor.copy()
    flipped = rows[::-1]
    uniq, first_of_flipped = np.unique(flipped, return_index=True)
    out[uniq] = updates[len(rows) - 1 - first_of_flipped]
    return out


def scatter_both_ways(t, sh, op, inputs, expected, streamed, extra=(), shape=None):
    """A scatter op streamed and held: both the expected bytes (None: each other's); the
    report says which way the output went."""
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, inputs, mode="w")
    argv = [op] + sum([["--" + k, e2e.ref(inp, "/" + k)] for k in ("tensor", "indices", "updates")
                       if "/" + k in inputs], [])
    if shape is not None:
        argv += ["--shape", ",".join(str(d) for d in shape)]
    each_way(t, sh, lambda out, report: argv + ["--out", out, "-q", "--report", report] + list(extra), expected,
             [streamed])


def tensor_scatter_every_op(t, sh):
    """Update, add, sub, min and max of 100003 updates with duplicates into 300001 rows of 16
    float32 (19 MB: three pieces): NumPy's bytes, the updates of each row in index order."""
    rng = np.random.default_rng(14)
    tensor = rng.standard_normal((300001, 16)).astype(np.float32)
    idx = rng.integers(0, 300001, size=(100003, 1)).astype(np.int64)
    idx[-5:, 0] = [0, 300000, 0, 150000, 300000]
    upd = rng.standard_normal((100003, 16)).astype(np.float32)
    inputs = {"/tensor": tensor, "/indices": idx, "/updates": upd}
    rows = idx[:, 0]
    expected = {"tensor-scatter-update": last_writer(tensor, rows, upd)}
    for op, ufunc in (("add", np.add), ("sub", np.subtract), ("min", np.minimum), ("max", np.maximum)):
        e = tensor.copy()
        ufunc.at(e, rows, upd)
        expected["tensor-scatter-" + op] = e
    for op, e in expected.items():
        scatter_both_ways(t, sh, op, inputs, e, True)


def scatter_nd_slices(t, sh):
    """ScatterNd of index depth 2 under batch dims [n, 3] into [4000, 50, 8] float64 (12.8 MB:
    two pieces), sums in index order, int32 indices."""
    rng = np.random.default_rng(15)
    idx = np.stack([rng.integers(0, 4000, size=(50000, 3)), rng.integers(0, 50, size=(50000, 3))], axis=-1)
    idx = idx.astype(np.int32)
    upd = rng.standard_normal((50000, 3, 8))
    expected = np.zeros((4000, 50, 8))
    np.add.at(expected, (idx[..., 0].ravel(), idx[..., 1].ravel()), upd.reshape(-1, 8))
    scatter_both_ways(t, sh, "scatter-nd", {"/indices": idx, "/updates": upd}, expected, True, shape=(4000, 50, 8))


def scatter_subnormals(t, sh):
    """Subnormal tensor rows and updates: flushed as TF's CPU kernels do, or kept with
    --keep-denormals, the same bytes streamed as held."""
    rng = np.random.default_rng(16)
    tensor = (rng.standard_normal((200000, 8)) * 1e-39).astype(np.float32)
    idx = rng.integers(0, 200000, size=(90000, 1)).astype(np.int64)
    upd = (rng.standard_normal((90000, 8)) * 1e-39).astype(np.float32)
    inputs = {"/tensor": tensor, "/indices": idx, "/updates": upd}
    for extra in ([], ["--keep-denormals"]):
        for op in ("tensor-scatter-add", "tensor-scatter-max"):
            scatter_both_ways(t, sh, op, inputs, None, True, extra=extra)


def dense_scatters_held_but_update(t, sh):
    """More than twice as many index rows as output rows: applied to a held output (cheaper
    than pieces, whose updates would be read out of order), NumPy's bytes at every rank
    count: TensorScatterAdd, into an existing file (its datasets kept), chunked and
    compressed, and ScatterNd's zeros with slices; exactly twice as many are streamed.
    TensorScatterUpdate streams even then (each row's winner is found first, then each piece
    made from its winners' rows and the tensor's), with duplicates, rows without an update,
    and at an uneven row size."""
    rng = np.random.default_rng(17)
    tensor = rng.standard_normal((20000, 4)).astype(np.float32)
    idx = rng.integers(0, 20000, size=(40001, 1)).astype(np.int64)
    upd = rng.standard_normal((40001, 4)).astype(np.float32)
    expected = tensor.copy()
    np.add.at(expected, idx[:, 0], upd)
    inputs = {"/tensor": tensor, "/indices": idx, "/updates": upd}
    scatter_both_ways(t, sh, "tensor-scatter-add", inputs, expected, False)
    twice = tensor.copy()
    np.add.at(twice, idx[:40000, 0], upd[:40000])
    scatter_both_ways(t, sh, "tensor-scatter-add", {"/tensor": tensor, "/indices": idx[:40000], "/updates": upd[:40000]},
                      twice, True)
    # Update at three updates per row (each output row written once, by its last writer, or
    # kept from the tensor: about a twentieth of the rows have no update).
    many = np.concatenate([idx, rng.integers(0, 20000, size=(40000, 1))]).astype(np.int64)
    many_upd = rng.standard_normal((len(many), 4)).astype(np.float32)
    scatter_both_ways(t, sh, "tensor-scatter-update", {"/tensor": tensor, "/indices": many, "/updates": many_upd},
                      last_writer(tensor, many[:, 0], many_upd), True)
    # Rows of 3 int16 (6 bytes): moved in 2-byte words; and bad indices ignored keep the tensor's rows.
    small = rng.integers(-30000, 30000, size=(20000, 3)).astype(np.int16)
    small_upd = rng.integers(-30000, 30000, size=(len(many), 3)).astype(np.int16)
    scatter_both_ways(t, sh, "tensor-scatter-update", {"/tensor": small, "/indices": many, "/updates": small_upd},
                      last_writer(small, many[:, 0], small_upd), True)
    bad = many.copy()
    bad[::7, 0] = 20000 + np.arange(len(bad[::7]))
    ok = bad[:, 0] < 20000
    scatter_both_ways(t, sh, "tensor-scatter-update", {"/tensor": tensor, "/indices": bad, "/updates": many_upd},
                      last_writer(tensor, bad[ok, 0], many_upd[ok]), True, extra=["--bad-indices", "ignore"])
    e2e.write_h5(os.path.join(t.d, "in.h5"), inputs, mode="w")
    inp = os.path.join(t.d, "in.h5")
    argv = ["tensor-scatter-add", "--tensor", e2e.ref(inp, "/tensor"), "--indices", e2e.ref(inp, "/indices"),
            "--updates", e2e.ref(inp, "/updates"), "-q"]
    each_way(t, sh, lambda out, report: argv + ["--out", out, "--report", report], expected, [False],
             kept={"/kept": np.arange(10, dtype=np.int16)})
    each_way(t, sh, lambda out, report: argv + ["--out", out, "--report", report, "--compression", "gzip=1"],
             expected, [False])
    # ScatterNd: 3 updates per row of [3001, 7] int32 slices, every row at least once, sums.
    sidx = np.concatenate([np.arange(3001), rng.integers(0, 3001, size=6002)]).reshape(-1, 1).astype(np.int32)
    rng.shuffle(sidx)
    supd = rng.integers(-1000, 1000, size=(9003, 7)).astype(np.int32)
    sums = np.zeros((3001, 7), np.int32)
    np.add.at(sums, sidx[:, 0], supd)
    scatter_both_ways(t, sh, "scatter-nd", {"/indices": sidx, "/updates": supd}, sums, False, shape=(3001, 7))


def scatter_bad_and_ignored_indices(t, sh):
    """A bad index near the end: the held job's message, exit 2, no output, an existing target
    unchanged, nothing left; with --bad-indices ignore the bad rows are skipped."""
    rng = np.random.default_rng(18)
    tensor = rng.standard_normal((300000, 8)).astype(np.float32)
    idx = rng.integers(0, 300000, size=(200000, 1)).astype(np.int64)
    idx[[3, 199990], 0] = [-7, 300000]
    upd = rng.standard_normal((200000, 8)).astype(np.float32)
    inputs = {"/tensor": tensor, "/indices": idx, "/updates": upd}
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, inputs, mode="w")
    refused_both_ways(t, sh, lambda out: ["tensor-scatter-add", "--tensor", e2e.ref(inp, "/tensor"), "--indices",
                                          e2e.ref(inp, "/indices"), "--updates", e2e.ref(inp, "/updates"), "--out",
                                          out, "-q"], "indices[199990] = [300000]")
    keep = (idx[:, 0] >= 0) & (idx[:, 0] < 300000)
    expected = tensor.copy()
    np.add.at(expected, idx[keep, 0], upd[keep])
    scatter_both_ways(t, sh, "tensor-scatter-add", inputs, expected, True, extra=["--bad-indices", "ignore"])


def scatter_over_its_own_tensor(t, sh):
    """--overwrite of the tensor itself, in its own file: the rows are made from the tensor as
    it was (through the new file, merged at the commit), the other datasets kept."""
    rng = np.random.default_rng(19)
    tensor = rng.standard_normal((200000, 16)).astype(np.float32)
    idx = rng.integers(0, 200000, size=(70000, 1)).astype(np.int64)
    upd = rng.standard_normal((70000, 16)).astype(np.float32)
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/tensor": tensor, "/indices": idx, "/updates": upd}, mode="w")
    report = os.path.join(t.d, "r.json")
    r = sh.run(["tensor-scatter-update", "--tensor", e2e.ref(inp, "/tensor"), "--indices", e2e.ref(inp, "/indices"),
                "--updates", e2e.ref(inp, "/updates"), "--out", e2e.ref(inp, "/tensor"), "--overwrite", "-q",
                "--report", report])
    e2e.expect_success(t.suite, r)
    e2e.same_array(t.suite, "/tensor", e2e.read_h5(inp, "/tensor"), last_writer(tensor, idx[:, 0], upd), r)
    t.suite.check(streamed_flags(report) == [True], "not streamed: %s" % streamed_flags(report), r)
    e2e.same_array(t.suite, "/updates kept", e2e.read_h5(inp, "/updates"), upd)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def stitch_both_ways(t, sh, op, indices, data, expected, streamed):
    """dynamic-stitch (or parallel-dynamic-stitch) streamed and held: the expected bytes; the
    report says which way the output went."""
    inp = os.path.join(t.d, "in.h5")
    datasets = {}
    for m, (i, d) in enumerate(zip(indices, data)):
        datasets["/i%d" % m], datasets["/d%d" % m] = i, d
    e2e.write_h5(inp, datasets, mode="w")
    argv = ([op, "--indices"] + [e2e.ref(inp, "/i%d" % m) for m in range(len(indices))] + ["--data"] +
            [e2e.ref(inp, "/d%d" % m) for m in range(len(data))])
    each_way(t, sh, lambda out, report: argv + ["--out", out, "-q", "--report", report], expected, [streamed])


def stitch_inverse_of_partition(t, sh):
    """W5's shape: sixteen pieces stitched back by the rows they came from (300001 rows of 16
    float32, three pieces of output), streamed at every rank count."""
    rng = np.random.default_rng(20)
    base = rng.standard_normal((300001, 16)).astype(np.float32)
    parts = rng.integers(0, 16, size=300001)
    pos = [np.flatnonzero(parts == k).astype(np.int32) for k in range(16)]
    stitch_both_ways(t, sh, "dynamic-stitch", pos, [base[p] for p in pos], base, True)


def stitch_duplicates_and_gaps(t, sh):
    """Two inputs, the second of index rank 2, duplicates within and across them (the last
    in order wins), rows no index names (zeros), float64 slices of 3: both stitch ops."""
    rng = np.random.default_rng(21)
    i0 = rng.integers(0, 200000, size=100000).astype(np.int32)
    i1 = rng.integers(0, 200000, size=(40000, 2)).astype(np.int32)
    i1[-1, -1] = 199999
    d0 = rng.standard_normal((100000, 3))
    d1 = rng.standard_normal((40000, 2, 3))
    expected = last_writer(np.zeros((200000, 3)), np.concatenate([i0, i1.ravel()]),
                           np.concatenate([d0, d1.reshape(-1, 3)]))
    for op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        stitch_both_ways(t, sh, op, [i0, i1], [d0, d1], expected, True)


def dense_stitch_is_held(t, sh):
    """More than twice as many index elements as output rows: the held output, the same rows
    (the last writer wins, rows nobody names zero), both stitch ops; up to twice as many
    (with rows nobody names) are streamed."""
    rng = np.random.default_rng(22)
    i0 = rng.integers(0, 3000, size=8000).astype(np.int32)
    d0 = rng.standard_normal((8000, 4)).astype(np.float32)
    for count, streamed in ((8000, False), (5000, True)):
        rows = int(i0[:count].max()) + 1
        for op in ("dynamic-stitch", "parallel-dynamic-stitch"):
            stitch_both_ways(t, sh, op, [i0[:count]], [d0[:count]],
                             last_writer(np.zeros((rows, 4), np.float32), i0[:count], d0[:count]), streamed)


def stitch_negative_index(t, sh):
    """A negative index near the end: TF's message, exit 2, no output, nothing left, streamed
    as held."""
    rng = np.random.default_rng(23)
    i0 = rng.permutation(300000).astype(np.int32)
    i0[299998] = -3
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/i0": i0, "/d0": rng.standard_normal((300000, 8)).astype(np.float32)}, mode="w")
    refused_both_ways(t, sh, lambda out: ["dynamic-stitch", "--indices", e2e.ref(inp, "/i0"), "--data",
                                          e2e.ref(inp, "/d0"), "--out", out, "-q"], "indices[299998] is out of range")


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], default_np=2)
    suite = e2e.Suite("e2e_streamed_outputs_np_%d" % args.np, args)
    sh = e2e.Shardops(args)
    e2e.run_cases(suite, args, sh, "streamed", [
        ("several_pieces", several_pieces),
        ("into_an_existing_file", into_an_existing_file),
        ("deep_batched_indices", deep_batched_indices),
        ("into_its_input_file", into_its_input_file),
        ("chunked_storage_is_made_whole", chunked_storage_is_made_whole),
        ("fetched_params_are_held", fetched_params_are_held),
        ("bad_index_in_the_last_piece", bad_index_in_the_last_piece),
        ("ignored_bad_indices_give_zero_rows", ignored_bad_indices_give_zero_rows),
        ("partition_outputs", partition_outputs),
        ("partition_rank_two_ids_into_an_existing_file", partition_rank_two_ids_into_an_existing_file),
        ("partition_bad_id", partition_bad_id),
        ("tensor_scatter_every_op", tensor_scatter_every_op),
        ("scatter_nd_slices", scatter_nd_slices),
        ("scatter_subnormals", scatter_subnormals),
        ("dense_scatters_held_but_update", dense_scatters_held_but_update),
        ("scatter_bad_and_ignored_indices", scatter_bad_and_ignored_indices),
        ("scatter_over_its_own_tensor", scatter_over_its_own_tensor),
        ("stitch_inverse_of_partition", stitch_inverse_of_partition),
        ("stitch_duplicates_and_gaps", stitch_duplicates_and_gaps),
        ("dense_stitch_is_held", dense_stitch_is_held),
        ("stitch_negative_index", stitch_negative_index),
    ])
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
