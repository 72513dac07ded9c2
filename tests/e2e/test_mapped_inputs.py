"""Inputs mapped into the ranks instead of copied (src/shardops/hdf5/detail/MappedRows.hpp).

The command line maps a contiguous input dataset's pages where it can and reads it with
HDF5 where it cannot. Both ways must give the same bytes: every dtype, files with a user
block, datasets at odd offsets, other byte orders, chunked, compact and external storage,
row selections, and blocks of every rank count. SHARDOPS_MAP_INPUTS=all maps every dataset
that can be (the default only those of 1 MiB or more), =0 none. Each case checks in
/proc/PID/maps of the paused ranks that the input is mapped exactly where it should be, so
a case cannot pass with the mapping quietly off. A job must never write its input file,
and an input cut short while mapped ends the job with exit 3 and a message naming the file,
nothing committed, nothing left behind. An input whose bytes another program rewrites during
the op ends the job with exit 0 or 3, never on a signal.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as e2e  # noqa: E402
from test_output_safety import Job, leftovers, make_existing  # noqa: E402

ROWS, COLS = 37, 5  # uneven blocks at every rank count
# The file systems shardops maps inputs on (statfs f_type, src/shardops/hdf5/detail/MappedRows.cpp):
# ext2/3/4, xfs, btrfs, tmpfs, f2fs, overlayfs.
MAPPING_FILE_SYSTEMS = {0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010, 0x794C7630}


def maps_here(d):
    """Whether shardops maps inputs in folder d (its file system's type, from stat -f)."""
    out = subprocess.run(["stat", "-f", "-c", "%t", d], stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return int(out.stdout.strip(), 16) in MAPPING_FILE_SYSTEMS


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_params(path, dtype, storage):
    """/params [ROWS, COLS] of dtype stored as storage says, and beside it, in idx.h5 (so that
    the maps of path show the params alone), /idx = every row in order. Returns (the params
    as NumPy holds them, whether the rows may be mapped)."""
    params = values(dtype, (ROWS, COLS), seed=len(dtype) * 7 + len(storage))
    # Bools are read through HDF5: a byte that is neither FALSE nor TRUE is made TRUE (1).
    kw, file_kw, mappable = {}, {}, params.dtype != bool
    if storage == "userblock":
        file_kw["userblock_size"] = 512
    elif storage == "big_endian":
        kw["dtype"] = params.dtype.newbyteorder(">")
        mappable = params.dtype.itemsize == 1  # one byte has no byte order
    elif storage == "chunked":
        kw["chunks"] = (4, COLS)
        mappable = False
    elif storage == "compact":
        mappable = False
    elif storage == "external":
        kw["external"] = [(path + ".raw", 0, params.nbytes)]  # absolute: relative ones follow the cwd
        mappable = False
    with e2e.h5py.File(path, "w", **file_kw) as f:
        if storage == "odd_offset":
            f.create_dataset("pad", data=np.zeros(3, np.uint8))  # the next data starts at an odd byte
        if storage == "compact":
            space = e2e.h5py.h5s.create_simple(params.shape)
            dcpl = e2e.h5py.h5p.create(e2e.h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(e2e.h5py.h5d.COMPACT)
            tid = e2e.h5py.h5t.py_create(params.dtype, logical=True)
            e2e.h5py.h5d.create(f.id, b"params", tid, space, dcpl=dcpl).write(
                e2e.h5py.h5s.ALL, e2e.h5py.h5s.ALL, np.ascontiguousarray(params))
        else:
            f.create_dataset("params", data=params, **kw)
        if storage == "odd_offset":
            offset = f["params"].id.get_offset()
            mappable = offset is not None and offset % min(params.dtype.itemsize, 16) == 0
    e2e.write_h5(os.path.join(os.path.dirname(path), "idx.h5"),
                 {"/idx": np.arange(ROWS, dtype=np.int64).reshape(ROWS, 1)}, mode="w")
    return params, mappable


def rows_of_ranks(n, np_):
    """Each rank's rows in the balanced layout (route/RowLayout.cpp)."""
    return [n // np_ + (1 if r < n % np_ else 0) for r in range(np_)]


def ranks_mapping(job, path, np_):
    """Which paused ranks have path mapped (their /proc/PID/maps)."""
    found = []
    for pid in job.ranks()[:np_]:
        try:
            with open("/proc/%d/maps" % pid) as f:
                found.append(any(line.rstrip().endswith(path) for line in f))
        except OSError:
            found.append(False)
    return found


def run_paused(t, sh, argv, env, check_maps):
    """Runs argv with every rank paused at its validate phase (after the reads) while
    check_maps(job) looks at them; returns the result."""
    job = Job(sh, argv, sh.np, env=dict(env, SHARDOPS_TEST_PAUSE="validate:0.3"))
    if job.wait_for("test pause at validate", count=sh.np):
        check_maps(job)
    else:
        t.suite.check(False, "the job never reached its validate phase")
    t0 = time.monotonic()
    rc = job.finish(timeout=sh.timeout)
    return job.result(rc, time.monotonic() - t0)


def one_case(t, sh, dtype, storage, selection="", mode="all"):
    inp = os.path.join(t.d, "in.h5")
    params, mappable = write_params(inp, dtype, storage)
    before = digest(inp)
    out = os.path.join(t.d, "out.h5")
    if os.path.exists(out):
        os.remove(out)
    rows = params
    if selection:
        rows = eval("params" + selection, {"params": params})  # the test's own constant strings only
    argv = ["gather-nd", "--params", e2e.ref(inp, "/params") + selection,
            "--indices", e2e.ref(os.path.join(t.d, "idx.h5"), "/idx") + ("[:%d]" % len(rows) if selection else ""),
            "--out", e2e.ref(out, "/g"), "-q"]
    # A rank maps its own block of rows: nothing when it has none.
    expect = sorted(mappable and maps_here(t.d) and mode != "0" and n > 0 for n in rows_of_ranks(len(rows), sh.np))
    what = "%s %s%s (SHARDOPS_MAP_INPUTS=%s)" % (dtype, storage, selection, mode)

    def check_maps(job):
        mapped = sorted(ranks_mapping(job, inp, sh.np))
        t.suite.check(mapped == expect, "%s: ranks mapping the input %s, expected %s" % (what, mapped, expect))

    r = run_paused(t, sh, argv, {"SHARDOPS_MAP_INPUTS": mode}, check_maps)
    e2e.expect_success(t.suite, r, what)
    e2e.same_array(t.suite, what, e2e.read_h5(out, "/g"), rows, r)
    t.suite.check(digest(inp) == before, "%s: the job changed its input file" % what, r)


def every_dtype(t, sh):
    for dtype in e2e.ALL_DTYPES:
        if e2e.has_kernel("gather-nd", dtype):
            one_case(t, sh, dtype, "contiguous")


def storages(t, sh):
    for storage in ["userblock", "odd_offset", "big_endian", "chunked", "compact", "external"]:
        for dtype in ["float32", "complex128", "int8"]:
            one_case(t, sh, dtype, storage)


def selections(t, sh):
    for selection in ["[3:-2]", "[5:6]", "[11:]"]:
        one_case(t, sh, "float64", "contiguous", selection)


def switched_off(t, sh):
    one_case(t, sh, "float32", "contiguous", mode="0")


def default_size(t, sh):
    """The default maps a 1 MiB dataset, not a small one."""
    inp = os.path.join(t.d, "in.h5")
    big = values("float32", (65536, 4), seed=5)  # exactly 1 MiB
    e2e.write_h5(inp, {"/big": big, "/small": big[:100], "/idx": np.arange(100, dtype=np.int32).reshape(100, 1)},
                 mode="w")
    for name, expect in [("/big", maps_here(t.d)), ("/small", False)]:
        out = os.path.join(t.d, "out%s.h5" % name[1:])
        argv = ["gather-nd", "--params", e2e.ref(inp, name), "--indices", e2e.ref(inp, "/idx"),
                "--out", e2e.ref(out, "/g"), "-q"]

        def check_maps(job, name=name, expect=expect):
            mapped = ranks_mapping(job, inp, sh.np)
            t.suite.check(any(mapped) == expect, "%s: ranks mapping the input %s" % (name, mapped))

        r = run_paused(t, sh, argv, {}, check_maps)
        e2e.expect_success(t.suite, r, name)
        e2e.same_array(t.suite, name, e2e.read_h5(out, "/g"), big[:100], r)


def through_an_external_link(t, sh):
    """A dataset read through an external link lies in the link's target file: its rows are
    mapped from that file's pages (they were taken from the linking file, at the target's
    offset: another dataset's bytes, exit 0), directly, with a row selection and through a
    chain of two links."""
    target = os.path.join(t.d, "target.h5")
    params = values("float32", (65536, 8), seed=21)  # 2 MiB
    with e2e.h5py.File(target, "w") as f:
        f.create_dataset("pad", data=np.zeros((16384, 8), np.float32))
        f.create_dataset("params", data=params)
    linking = os.path.join(t.d, "linking.h5")
    with e2e.h5py.File(linking, "w") as f:
        f.create_dataset("other", data=np.full((200000, 8), 7, np.float32))  # where the target's bytes lie
        f["x"] = e2e.h5py.ExternalLink("target.h5", "/params")
        f.create_dataset("idx", data=np.random.default_rng(4).integers(0, 60000, (3000, 1)))
    chain = os.path.join(t.d, "chain.h5")
    with e2e.h5py.File(chain, "w") as f:
        f["g/y"] = e2e.h5py.ExternalLink("linking.h5", "/x")
    idx = e2e.read_h5(linking, "/idx")[:, 0]
    for name, rows in ((e2e.ref(linking, "/x"), params), (e2e.ref(linking, "/x") + "[3:-2]", params[3:-2]),
                       (e2e.ref(chain, "/g/y"), params)):
        out = os.path.join(t.d, "out.h5")
        if os.path.exists(out):
            os.remove(out)
        argv = ["gather-nd", "--params", name, "--indices", e2e.ref(linking, "/idx"), "--out", e2e.ref(out, "/g"),
                "-q"]

        def check_maps(job, name=name):
            mapped = ranks_mapping(job, target, sh.np)
            t.suite.check(any(mapped) == maps_here(t.d), "%s: ranks mapping the link's target %s" % (name, mapped))
            t.suite.check(not any(ranks_mapping(job, linking, sh.np)), "%s: a rank maps the linking file" % name)

        r = run_paused(t, sh, argv, {}, check_maps)
        e2e.expect_success(t.suite, r, name)
        e2e.same_array(t.suite, name, e2e.read_h5(out, "/g"), rows[idx], r)


def replicated_params(t, sh):
    """GatherNd copies all of params onto every rank when its indices outnumber the params
    rows times the ranks (ops/DistGather.cpp): with the input mapped, every rank maps all of
    params instead and no params row moves between ranks (the report says 0 bytes sent);
    copied (SHARDOPS_MAP_INPUTS=0), the rows move as before. Same result both ways, also
    for a row selection (the replica starts where the selection does) and for index depth 0
    (every index row takes all of params)."""
    inp = os.path.join(t.d, "in.h5")
    params = values("float32", (ROWS, COLS), seed=11)
    rng = np.random.default_rng(12)
    n = ROWS * sh.np * 2
    idx = rng.integers(0, ROWS - 5, size=(n, 1)).astype(np.int64)  # fits the [3:-2] selection too
    e2e.write_h5(inp, {"/params": params}, mode="w")
    e2e.write_h5(os.path.join(t.d, "idx.h5"), {"/idx": idx, "/whole": np.zeros((3, 0), np.int32)}, mode="w")
    before = digest(inp)
    cases = [("", idx, params[idx[:, 0]]), ("[3:-2]", idx, params[3:-2][idx[:, 0]]),
             ("", "whole", np.stack([params] * 3))]
    for selection, indices, expected in cases:
        for mode in ["all", "0"]:
            what = "params%s, %s, SHARDOPS_MAP_INPUTS=%s" % (selection, "depth 0" if isinstance(indices, str) else "depth 1",
                                                               mode)
            out, report = os.path.join(t.d, "out.h5"), os.path.join(t.d, "report.json")
            for f in (out, report):
                if os.path.exists(f):
                    os.remove(f)
            argv = ["gather-nd", "--params", e2e.ref(inp, "/params") + selection,
                    "--indices", e2e.ref(os.path.join(t.d, "idx.h5"), "/whole" if isinstance(indices, str) else "/idx"),
                    "--out", e2e.ref(out, "/g"), "--report", report, "-q"]
            mapped_everywhere = maps_here(t.d) and mode != "0" and sh.np > 1

            def check_maps(job, what=what, mapped_everywhere=mapped_everywhere):
                if mapped_everywhere:
                    mapped = ranks_mapping(job, inp, sh.np)
                    t.suite.check(mapped == [True] * sh.np, "%s: ranks mapping params %s" % (what, mapped))

            r = run_paused(t, sh, argv, {"SHARDOPS_MAP_INPUTS": mode}, check_maps)
            e2e.expect_success(t.suite, r, what)
            e2e.same_array(t.suite, what, e2e.read_h5(out, "/g"), expected, r)
            with open(report) as f:
                sent = json.load(f)["bytes"]["sent_between_ranks"]
            if sh.np > 1:
                t.suite.check((sent == 0) == mapped_everywhere,
                              "%s: %d bytes sent between ranks, expected %s" % (
                                  what, sent, "none" if mapped_everywhere else "some"), r)
    t.suite.check(digest(inp) == before, "the job changed its input file")


def replicated_scatter_inputs(t, sh):
    """The scatter family on ranks of one node reads its indices and updates from the file's
    pages on every rank where that costs less than routing them (scatter_reads_replicas,
    ops/Scatter.hpp: here 16 float32 per update row): each rank takes the rows it owns, no
    update row moves (the report says 0 bytes sent), and the output is the routed one's,
    held or streamed, also for a row selection of both inputs. A bad index is reported as
    with routed rows. Copied (SHARDOPS_MAP_INPUTS=0), the rows move as before."""
    inp = os.path.join(t.d, "in.h5")
    rows, n = 29, 97  # uneven blocks, duplicates: a row's updates come from several ranks
    rng = np.random.default_rng(21)
    idx = rng.integers(0, rows, size=(n + 3, 1)).astype(np.int64)
    upd = rng.integers(-50, 50, size=(n + 3, 16)).astype(np.float32)  # sums exact in float32
    base = rng.integers(-50, 50, size=(rows, 16)).astype(np.float32)
    bad = idx.copy()
    bad[[5, n - 9]] = [[rows], [-1]]
    e2e.write_h5(inp, {"/idx": idx, "/upd": upd, "/base": base, "/bad": bad}, mode="w")
    before = digest(inp)
    sel, i_sel, u_sel = "[2:-1]", idx[2:-1], upd[2:-1]

    def summed(start):
        out = start.copy()
        np.add.at(out, i_sel[:, 0], u_sel)
        return out

    def updated():
        out = base.copy()
        for i, row in enumerate(i_sel[:, 0]):
            out[row] = u_sel[i]
        return out

    def least():
        out = base.copy()
        np.minimum.at(out, i_sel[:, 0], u_sel)
        return out

    jobs = [(["scatter-nd", "--shape", "%d,16" % rows], summed(np.zeros((rows, 16), np.float32))),
            (["tensor-scatter-update", "--tensor", e2e.ref(inp, "/base")], updated()),
            (["tensor-scatter-min", "--tensor", e2e.ref(inp, "/base")], least())]
    errors = {}
    for argv, expected in jobs:
        for mode in ["all", "0"]:
            for stream in ["1", "0"]:
                what = "%s, SHARDOPS_MAP_INPUTS=%s, SHARDOPS_STREAM_OUTPUTS=%s" % (argv[0], mode, stream)
                out, report = os.path.join(t.d, "out.h5"), os.path.join(t.d, "report.json")
                for f in (out, report):
                    if os.path.exists(f):
                        os.remove(f)
                inputs = ["--indices", e2e.ref(inp, "/idx") + sel, "--updates", e2e.ref(inp, "/upd") + sel]
                full = argv + inputs + ["--out", e2e.ref(out, "/s"), "--report", report, "-q"]
                mapped_everywhere = maps_here(t.d) and mode != "0" and sh.np > 1

                def check_maps(job, what=what, mapped_everywhere=mapped_everywhere):
                    if mapped_everywhere:
                        mapped = ranks_mapping(job, inp, sh.np)
                        t.suite.check(mapped == [True] * sh.np, "%s: ranks mapping the inputs %s" % (what, mapped))

                env = {"SHARDOPS_MAP_INPUTS": mode, "SHARDOPS_STREAM_OUTPUTS": stream}
                r = run_paused(t, sh, full, env, check_maps)
                e2e.expect_success(t.suite, r, what)
                e2e.same_array(t.suite, what, e2e.read_h5(out, "/s"), expected, r)
                with open(report) as f:
                    sent = json.load(f)["bytes"]["sent_between_ranks"]
                if sh.np > 1:
                    t.suite.check((sent == 0) == mapped_everywhere, "%s: %d bytes sent between ranks, expected %s" % (
                        what, sent, "none" if mapped_everywhere else "some"), r)
                # Bad indices: the same message whichever way the rows reach their owners.
                not_written = os.path.join(t.d, "bad.h5")
                bad_argv = argv + ["--indices", e2e.ref(inp, "/bad"), "--updates", e2e.ref(inp, "/upd"),
                                   "--out", e2e.ref(not_written, "/s"), "-q"]
                r = sh.run(bad_argv, env=env)
                t.suite.check(r.rc == 2, "%s, bad index: exit %s, expected 2" % (what, r.rc), r)
                errors.setdefault(argv[0], set()).update(e2e.error_lines(r.stderr))
                t.suite.check(not os.path.exists(not_written), "%s, bad index: an output was written" % what)
    for op, texts in errors.items():
        t.suite.check(len(texts) == 1, "%s: the bad-index messages differ: %s" % (op, sorted(texts)))
        t.suite.check(all("%d" % (n - 9) in x for x in texts), "%s: not the last bad row (%d): %s" % (
            op, n - 9, sorted(texts)))
    t.suite.check(digest(inp) == before, "the job changed its input file")


def written_tensor_stays_private(t, sh):
    """tensor-scatter-update's output starts as its mapped input: the input file must not change."""
    inp = os.path.join(t.d, "in.h5")
    base = values("float32", (4096, 64), seed=9)  # 1 MiB
    idx = np.array([[0], [4095], [17], [2048]], dtype=np.int64)
    upd = values("float32", (4, 64), seed=10)
    e2e.write_h5(inp, {"/base": base, "/idx": idx, "/upd": upd}, mode="w")
    before = digest(inp)
    expected = base.copy()
    expected[idx[:, 0]] = upd
    out = os.path.join(t.d, "out.h5")
    r = sh.run(["tensor-scatter-update", "--tensor", e2e.ref(inp, "/base"), "--indices", e2e.ref(inp, "/idx"),
                "--updates", e2e.ref(inp, "/upd"), "--out", e2e.ref(out, "/u"), "-q"])
    e2e.expect_success(t.suite, r)
    e2e.same_array(t.suite, "/u", e2e.read_h5(out, "/u"), expected, r)
    t.suite.check(digest(inp) == before, "the job changed its input file", r)


def input_cut_short(t, sh):
    """Another program truncates a mapped input while the job runs: exit 3, the file named,
    the existing target as it was, nothing left behind."""
    if not maps_here(t.d):
        t.suite.skip("input_cut_short", "inputs are not mapped on the file system of %s" % t.d)
        return
    # Each rank maps its block; at several ranks also with every rank mapping all of params
    # (indices = params rows x ranks: GatherNd then reads a replica, replicated_params).
    for copies in sorted({1, sh.np}):
        inp = os.path.join(t.d, "in.h5")
        params = values("float32", (65536, 8), seed=3)  # 2 MiB
        idx = np.tile(np.arange(65536, dtype=np.int64)[::-1], copies).reshape(-1, 1)
        e2e.write_h5(inp, {"/params": params, "/idx": idx}, mode="w")
        out = os.path.join(t.d, "target.h5")
        before = make_existing(out)
        what = "indices %d x params rows" % copies
        job = Job(sh, ["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"),
                       "--out", e2e.ref(out, "/g"), "-q"], sh.np, env={"SHARDOPS_TEST_PAUSE": "validate:1"})
        t.suite.require(job.wait_for("test pause at validate", count=sh.np),
                        "%s: the job never reached its validate phase" % what)
        mapped = ranks_mapping(job, inp, sh.np)
        os.truncate(inp, 4096)
        t0 = time.monotonic()
        rc = job.finish(timeout=30)
        r = job.result(rc, time.monotonic() - t0)
        t.suite.require(mapped == [True] * sh.np, "%s: ranks mapping the input: %s" % (what, mapped), r)
        t.suite.require(rc is not None, "%s: the job did not end" % what, r)
        t.suite.check(rc == 3 or "exit code 3" in r.stderr, "%s: exit %s, expected 3" % (what, rc), r)
        t.suite.check("the input file '%s' was cut short by another program" % inp in r.stderr,
                      "%s: no message names the input file" % what, r)
        t.suite.check("nothing was committed" in r.stderr, "%s: the message does not say nothing was committed" % what,
                      r)
        t.suite.check(e2e.file_state(out) == before, "%s: the target changed" % what, r)
        t.suite.check(leftovers(t.d) == [], "%s: left %s" % (what, leftovers(t.d)), r)
        os.remove(out)


def flip_bytes(path, offset, versions, stop):
    """Writes each of versions (bytes) over path at offset in turn, as a program writing the
    file in place would (no HDF5, no lock), until stop is set; ends with the first."""
    fd = os.open(path, os.O_WRONLY)
    try:
        k = 0
        while not stop.is_set():
            os.pwrite(fd, versions[k % len(versions)], offset)
            k += 1
            time.sleep(0.0005)
        os.pwrite(fd, versions[0], offset)
    finally:
        os.close(fd)


def jobs_while_rewritten(t, sh, inp, dataset, versions, argv, what, env, tries=5):
    """Runs argv tries times while another process writes each of versions (arrays) over
    inp's dataset in turn. Every job must end with exit 0, 3 (saying the input changed,
    nothing left behind) or, for an index error, 2 naming a value that is out of range in
    some version (never one read again after a change). Returns the exit codes seen."""
    import multiprocessing
    import h5py
    with h5py.File(inp, "r") as f:
        offset = f[dataset].id.get_offset()
    stop = multiprocessing.Event()
    writer = multiprocessing.Process(target=flip_bytes, args=(inp, offset, [v.tobytes() for v in versions], stop))
    writer.start()
    good = set(int(x) for x in np.unique(versions[0]))
    codes = {}
    try:
        for k in range(tries):
            out = os.path.join(t.d, "out%d.h5" % k)
            r = sh.run(argv + ["--out", e2e.ref(out, "/o"), "-q"], env=env, timeout=60)
            codes[r.rc] = codes.get(r.rc, 0) + 1
            t.suite.require(r.rc in (0, 2, 3), "%s: exit %s, expected 0, 2 or 3" % (what, r.rc), r)
            if r.rc == 3:
                t.suite.check("changed" in r.stderr, "%s: exit 3 without saying the input changed" % what, r)
            if r.rc == 2:
                named = re.search(r"\] = \[(-?\d+)\] does not index", r.stderr)
                t.suite.check(named is not None and int(named.group(1)) not in good,
                              "%s: exit 2 without naming an out-of-range index" % what, r)
            if r.rc != 0:
                t.suite.check(not os.path.exists(out), "%s: exit %s left %s" % (what, r.rc, out), r)
            elif os.path.exists(out):
                os.remove(out)
    finally:
        stop.set()
        writer.join()
    t.suite.check(leftovers(t.d) == [], "%s: left %s" % (what, leftovers(t.d)))
    if sh.verbose:
        print("  %s: exit codes %s" % (what, codes))
    return codes


def input_rewritten_during_the_op(t, sh):
    """Another program rewrites a mapped input's index bytes in place while jobs run, so the
    op's passes over them (DynamicPartition's count and placement, DynamicStitch's check and
    assignment, the scatter and gather ops' check, route and apply) can see other values:
    every job must end with exit 0 or 3 (a message that says the input changed, nothing left
    behind), or 2 for an index that is out of range as read, never on a signal or by writing
    outside its memory (partition and stitch jobs crashed with SIGSEGV before), and never with
    an error naming an index that is in range (read again after a change)."""
    if not maps_here(t.d):
        t.suite.skip("input_rewritten_during_the_op", "inputs are not mapped on the file system of %s" % t.d)
        return
    rows = 1 << 20
    inp = os.path.join(t.d, "flipped.h5")
    data = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
    partition = ["dynamic-partition", "--data", e2e.ref(inp, "/data"), "--partitions", e2e.ref(inp, "/ids"),
                 "--num-partitions", "16"]
    stitch = ["dynamic-stitch", "--indices", e2e.ref(inp, "/idx"), "--data", e2e.ref(inp, "/data")]
    for argv, dataset, versions in [
            (partition, "/ids", [np.zeros(rows, np.int32), np.full(rows, 15, np.int32)]),
            (stitch, "/idx", [np.arange(rows, dtype=np.int32), np.full(rows, 2 * rows, np.int32)])]:
        e2e.write_h5(inp, {"/data": data, dataset: versions[0]}, mode="w")
        for held in ("1", "0"):  # outputs streamed, then held
            what = "%s (SHARDOPS_STREAM_OUTPUTS=%s)" % (argv[0], held)
            codes = jobs_while_rewritten(t, sh, inp, dataset, versions, argv, what, {"SHARDOPS_STREAM_OUTPUTS": held})
            t.suite.check(2 not in codes, "%s: exit 2 for ids and indices that are in range in every version" % what)
    # Index rows in range, then beyond the output, then negative.
    idx = np.arange(rows, dtype=np.int64)[::-1].reshape(rows, 1).copy()
    e2e.write_h5(inp, {"/data": data, "/idx": idx}, mode="w")
    versions = [idx, np.full((rows, 1), 4 * rows, np.int64), np.full((rows, 1), -5, np.int64)]
    for argv in (["scatter-nd", "--indices", e2e.ref(inp, "/idx"), "--updates", e2e.ref(inp, "/data"), "--shape",
                  "%d,4" % rows],
                 ["gather-nd", "--params", e2e.ref(inp, "/data"), "--indices", e2e.ref(inp, "/idx")]):
        jobs_while_rewritten(t, sh, inp, "/idx", versions, argv, argv[0], {}, tries=4)
    os.remove(inp)


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], 3)
    sh = e2e.Shardops(args)
    suite = e2e.Suite("e2e mapped inputs np=%d" % args.np, args)
    e2e.run_cases(suite, args, sh, "mapped", [
        ("every_dtype", every_dtype),
        ("storages", storages),
        ("selections", selections),
        ("switched_off", switched_off),
        ("default_size", default_size),
        ("replicated_params", replicated_params),
        ("replicated_scatter_inputs", replicated_scatter_inputs),
        ("through_an_external_link", through_an_external_link),
        ("written_tensor_stays_private", written_tensor_stays_private),
        ("input_cut_short", input_cut_short),
        ("input_rewritten_during_the_op", input_rewritten_during_the_op),
    ])
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
