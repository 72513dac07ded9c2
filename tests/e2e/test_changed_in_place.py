#!/usr/bin/python3
"""End-to-end: an --overwrite that changes a few rows of a dataset writes those rows only
(ctest e2e_changed_in_place_np_N).

A job whose output replaces a dataset of the same shape and type in an existing file (a few
rows scattered into a large tensor, `tensor-scatter-update --tensor F:/t ... --out F:/t
--overwrite`, or a job run again) compares its rows with the old ones and, where few differ,
writes those alone into the dataset through the file's undo journal
(docs/output-safety.md, "Datasets changed row by row"). These cases check that such a job
gives the file a replacement would give (the rows, the attributes, every other dataset),
says so under -v, leaves the rest of the dataset's bytes as they were, falls back to a
replacement where it must (most rows differ, a second name for the dataset, another type or
layout), and that a kill or a stop signal at its worst moments leaves the file as it was.
"""

import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import e2e_common as e2e  # noqa: E402
from test_output_safety import Job, job_reading, kill_at, leftovers, signal_at, small_tmpfs  # noqa: E402

NOTE = "rows differ from the dataset it replaces: written into it, in place"


def tensor_file(d, tensor, name="t.h5", **create_kw):
    """d/t.h5 holding /t (the tensor, with a 'units' attribute) and /keep; returns the path."""
    path = os.path.join(d, name)
    e2e.write_h5(path, {"/t": tensor}, mode="w", **create_kw)
    e2e.write_h5(path, {"/keep": np.arange(1000, dtype=np.int64)})
    with e2e.h5py.File(path, "a") as f:
        f["t"].attrs["units"] = "m"
    return path


def updates_file(d, rows, picked, cols, dtype, seed=3):
    """d/u.h5: /i the index rows `picked` ([n, 1] int64), /u their updates; returns path, updates."""
    rng = np.random.default_rng(seed)
    upd = (rng.standard_normal((len(picked),) + cols) * 100).astype(dtype)
    path = os.path.join(d, "u.h5")
    e2e.write_h5(path, {"/i": np.asarray(picked, np.int64).reshape(-1, 1), "/u": upd}, mode="w")
    return path, upd


def scatter_argv(op, tensor, upd, out, *more):
    return [op, "--tensor", e2e.ref(tensor, "/t"), "--indices", e2e.ref(upd, "/i"), "--updates", e2e.ref(upd, "/u"),
            "--out", e2e.ref(out, "/t"), "--overwrite"] + list(more)


def dataset_place(path, name="/t"):
    with e2e.h5py.File(path, "r") as f:
        ds = f[name]
        return ds.id.get_offset(), ds.id.get_storage_size(), dict(ds.attrs)


def changed_rows_of(before, after, offset, row_bytes, nbytes):
    """The rows of the dataset at `offset` whose bytes differ between two images of the file."""
    a = np.frombuffer(before[offset:offset + nbytes], np.uint8).reshape(-1, row_bytes)
    b = np.frombuffer(after[offset:offset + nbytes], np.uint8).reshape(-1, row_bytes)
    return set(np.nonzero((a != b).any(axis=1))[0].tolist())


def few_rows_changed(t, sh, shape, dtype, picked_count):
    """A few rows scattered into a tensor, written back over it: the rows NumPy gives, the
    attributes a new file's output gets, -v says how many rows differ, the dataset stays where it
    was, only its changed rows' bytes and the file's metadata differ, /keep is as it was; run again
    (the same updates), no row differs and the rows stay as they are; tensor-scatter-add twice adds
    twice."""
    rng = np.random.default_rng(5)
    tensor = (rng.standard_normal(shape) * 10).astype(dtype)
    path = tensor_file(t.d, tensor)
    picked = np.sort(rng.choice(shape[0], picked_count, replace=False))
    upd_path, upd = updates_file(t.d, shape[0], picked, shape[1:], dtype)
    expected = tensor.copy()
    expected[picked] = upd
    before = e2e.file_state(path)
    offset, nbytes, _ = dataset_place(path)
    r = sh.run(scatter_argv("tensor-scatter-update", path, upd_path, path, "-v"))
    e2e.expect_success(t.suite, r)
    t.suite.check("%d of its %d %s" % (picked_count, shape[0], NOTE) in r.stderr,
                  "-v does not say that %d rows were written in place" % picked_count, r)
    e2e.same_array(t.suite, "/t", e2e.read_h5(path, "/t"), expected, r)
    e2e.same_array(t.suite, "/keep", e2e.read_h5(path, "/keep"), np.arange(1000, dtype=np.int64), r)
    after = e2e.file_state(path)
    new_offset, new_bytes, attrs = dataset_place(path)
    t.suite.check(new_offset == offset and new_bytes == nbytes, "the dataset moved: it was replaced", r)
    row_bytes = nbytes // shape[0]
    changed = changed_rows_of(before, after, offset, row_bytes, nbytes)
    t.suite.check(changed <= set(picked.tolist()), "rows no update names changed: %s" %
                  sorted(changed - set(picked.tolist()))[:10], r)
    t.suite.check(len(after) - len(before) < 64 << 10, "the file grew by %d bytes" % (len(after) - len(before)), r)
    # The attributes a replacement gives: those of the same job writing a new file.
    fresh = os.path.join(t.d, "fresh.h5")
    r2 = sh.run(scatter_argv("tensor-scatter-update", path, upd_path, fresh, "-q"))
    e2e.expect_success(t.suite, r2, "the job into a new file")
    _, _, fresh_attrs = dataset_place(fresh)
    fresh_attrs["inputs"] = list(fresh_attrs["inputs"])
    attrs["inputs"] = list(attrs["inputs"])
    t.suite.check(attrs == fresh_attrs, "attributes %s, a new file's output has %s" % (attrs, fresh_attrs), r)
    r = sh.run(scatter_argv("tensor-scatter-update", path, upd_path, path, "-v"))
    e2e.expect_success(t.suite, r, "the job run again")
    t.suite.check("0 of its %d %s" % (shape[0], NOTE) in r.stderr, "run again, -v does not say no row differs", r)
    again = e2e.file_state(path)
    t.suite.check(again[offset:offset + nbytes] == after[offset:offset + nbytes], "run again, the rows changed", r)
    e2e.same_array(t.suite, "/t", e2e.read_h5(path, "/t"), expected, r)
    if np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating):
        for _ in range(2):
            r = sh.run(scatter_argv("tensor-scatter-add", path, upd_path, path, "-q"))
            e2e.expect_success(t.suite, r, "tensor-scatter-add")
        added = expected.copy()
        added[picked] = added[picked] + upd + upd
        e2e.same_array(t.suite, "/t after two adds", e2e.read_h5(path, "/t"), added, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def replaced_not_changed(t, sh, how):
    """Where rows may not or need not be changed in place, the dataset is replaced as before
    (no -v line), with the right rows: most rows differ; the dataset has a second name (which
    keeps the old rows); it is stored big-endian, or chunked (the output is h5py's little-endian
    contiguous dataset either way)."""
    rows = 4096
    rng = np.random.default_rng(9)
    tensor = rng.standard_normal((rows, 16)).astype(np.float32)
    create = {"chunks": (256, 16)} if how == "chunked" else {}
    path = tensor_file(t.d, tensor.astype(">f4") if how == "big-endian" else tensor, **create)
    if how == "second name":
        with e2e.h5py.File(path, "a") as f:
            f["t2"] = f["t"]
    picked = np.arange(rows) if how == "most rows" else np.array([3, 700, 4000])
    upd_path, upd = updates_file(t.d, rows, picked, (16,), np.float32)
    expected = tensor.copy()
    expected[picked] = upd
    r = sh.run(scatter_argv("tensor-scatter-update", path, upd_path, path, "-v"))
    e2e.expect_success(t.suite, r)
    t.suite.check(NOTE not in r.stderr, "-v says the rows were written in place", r)
    e2e.same_array(t.suite, "/t", e2e.read_h5(path, "/t"), expected, r)
    e2e.same_array(t.suite, "/keep", e2e.read_h5(path, "/keep"), np.arange(1000, dtype=np.int64), r)
    if how == "second name":
        e2e.same_array(t.suite, "/t2 (the old dataset's other name)", e2e.read_h5(path, "/t2"), tensor, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def partitions_run_again(t, sh):
    """dynamic-partition into an existing file, run again with --overwrite: each partition is
    compared, none differs, the group lists its partitions in order and holds the same rows."""
    rows = 20000
    rng = np.random.default_rng(4)
    data = rng.standard_normal((rows, 8)).astype(np.float32)
    parts = rng.integers(0, 5, rows).astype(np.int32)
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/d": data, "/p": parts}, mode="w")
    out = tensor_file(t.d, np.zeros((10, 2), np.float32), "out.h5")
    argv = ["dynamic-partition", "--data", e2e.ref(inp, "/d"), "--partitions", e2e.ref(inp, "/p"),
            "--num-partitions", "5", "--out", e2e.ref(out, "/parts"), "--overwrite", "-v"]
    r = sh.run(argv)
    e2e.expect_success(t.suite, r, "the first job")
    first = e2e.file_state(out)
    r = sh.run(argv)
    e2e.expect_success(t.suite, r, "the job run again")
    t.suite.check(r.stderr.count(NOTE) == 5 and "of its" in r.stderr and r.stderr.count(" 0 of its ") == 5,
                  "-v does not say that none of the 5 partitions' rows differ", r)
    with e2e.h5py.File(out, "r") as f:
        t.suite.check(list(f["parts"]) == [str(p) for p in range(5)], "the group lists %s" % list(f["parts"]), r)
    for p in range(5):
        e2e.same_array(t.suite, "partition %d" % p, e2e.read_h5(out, "/parts/%d" % p), data[parts == p], r)
    t.suite.check(len(e2e.file_state(out)) - len(first) < 64 << 10, "the file grew by a partition's size", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def big_tensor_job(t):
    """A tensor of 64 MiB and 50 rows to change in it: the argv, the file, its bytes, the rows."""
    rows = (64 << 20) // 64
    rng = np.random.default_rng(12)
    tensor = rng.standard_normal((rows, 16)).astype(np.float32)
    path = tensor_file(t.d, tensor)
    picked = np.sort(rng.choice(rows, 50, replace=False))
    upd_path, upd = updates_file(t.d, rows, picked, (16,), np.float32)
    expected = tensor.copy()
    expected[picked] = upd
    return scatter_argv("tensor-scatter-update", path, upd_path, path, "-q"), path, expected


def killed_while_changing(t, sh, where):
    """SIGKILL of every rank once the rows are held back for the commit ("changed in place": the
    file not touched yet) or once they were journaled and written into the file ("journal round
    applied"): the next job reading the file finds it as it was, byte for byte, and the job run
    again changes the rows."""
    argv, path, expected = big_tensor_job(t)
    before = e2e.file_state(path)
    kill_at(t, sh, argv, where, 1)
    if where == "journal round applied":
        t.suite.check(e2e.file_state(path) != before, "the killed job changed nothing (the test needs a change)")
    r = job_reading(t, sh, e2e.ref(path, "/keep"), [0, 999])
    t.suite.check(e2e.file_state(path) == before, "the file a job read is not as it was before the killed job", r)
    r = sh.run(argv)
    e2e.expect_success(t.suite, r, "the job run again")
    e2e.same_array(t.suite, "/t", e2e.read_h5(path, "/t"), expected, r)
    t.suite.check(leftovers(t.d) == [], "the next job left %s" % leftovers(t.d), r)


def stopped_while_changing(t, sh):
    """SIGTERM to every rank once the rows are held back for the commit: exit 143, the file as it
    was, nothing left behind."""
    argv, path, _ = big_tensor_job(t)
    before = e2e.file_state(path)
    rc, r = signal_at(t, sh, argv, "changed in place", 1, signal.SIGTERM)
    t.suite.check(rc == 143, "exit %s, expected 143" % rc, r)
    t.suite.check(e2e.file_state(path) == before, "the file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def no_reader_before_the_commit_point(t, sh):
    """Once HDF5 has closed the changed file, its journal complete but not yet removed (the
    commit point), another program opening it with HDF5 read rows a kill would still undo: the
    file keeps HDF5's exclusive lock until then, so h5py is refused (errno 11) at that moment,
    and reads the new rows after the job."""
    argv, path, expected = big_tensor_job(t)
    job = Job(sh, argv, sh.np, env={"SHARDOPS_TEST_PAUSE": "journaled:3"})
    if not job.wait_for("test pause at journaled"):
        t.suite.require(False, "the job never reached journaled", job.result(job.finish()))
    probe = subprocess.run([sys.executable, "-c", "import h5py, sys; h5py.File(sys.argv[1], 'r')['t'][0]", path],
                           capture_output=True, text=True, timeout=60)
    rc = job.finish()
    t.suite.check(probe.returncode != 0 and "lock" in probe.stderr,
                  "h5py opened the file before the commit point: exit %s, %s" % (probe.returncode,
                                                                                  probe.stderr[-300:]), job.result(rc))
    t.suite.check(rc == 0, "the job exited %s" % rc, job.result(rc))
    e2e.same_array(t.suite, "/t", e2e.read_h5(path, "/t"), expected, job.result(rc))
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), job.result(rc))


def on_a_nearly_full_disk(t, sh):
    """A tensor on a disk with 2 MiB free: a few rows changed in place need room for their
    journal only, so the job commits (it was refused: "the dataset needs 16777216 bytes");
    a replacement (most rows differ) still needs room for the dataset: exit 3, the file as it
    was, nothing left."""
    with small_tmpfs(40) as fs:
        if fs is None:
            t.suite.skip("on_a_nearly_full_disk", "mounting a tmpfs needs root")
            return
        rng = np.random.default_rng(21)
        tensor = rng.standard_normal((65536, 64)).astype(np.float32)  # 16 MiB
        path = tensor_file(fs, tensor)
        upd_path, upd = updates_file(t.d, 65536, [5, 60000], (64,), np.float32)
        st = os.statvfs(fs)
        with open(os.path.join(fs, "filler"), "wb") as f:
            f.write(b"\0" * (st.f_bavail * st.f_frsize - (2 << 20)))
        r = sh.run(scatter_argv("tensor-scatter-update", path, upd_path, path, "-q"))
        e2e.expect_success(t.suite, r, "a few rows on a nearly full disk")
        expected = tensor.copy()
        expected[[5, 60000]] = upd
        e2e.same_array(t.suite, "/t", e2e.read_h5(path, "/t"), expected, r)
        before = e2e.file_state(path)
        all_rows = os.path.join(t.d, "all.h5")
        e2e.write_h5(all_rows, {"/i": np.arange(65536, dtype=np.int64).reshape(-1, 1),
                                "/u": np.zeros((65536, 64), np.float32)}, mode="w")
        r = sh.run(scatter_argv("tensor-scatter-update", path, all_rows, path, "-q"))
        t.suite.require(not r.timed_out, "hung on a nearly full disk", r)
        t.suite.check(r.rc == 3 and "no space" in r.stderr.lower(), "every row replaced: exit %s" % r.rc, r)
        t.suite.check(e2e.file_state(path) == before, "the file changed", r)
        t.suite.check(sorted(os.listdir(fs)) == ["filler", "t.h5"], "left %s" % os.listdir(fs), r)


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], 2)
    sh = e2e.Shardops(args)
    suite = e2e.Suite("e2e changed in place np=%d" % args.np, args)
    cases = [
        ("few_rows_of_a_float_matrix", few_rows_changed, (65536, 16), np.float32, 20),
        ("few_rows_of_wide_float64_rows", few_rows_changed, (512, 2048), np.float64, 3),
        ("few_elements_of_a_vector", few_rows_changed, (1 << 20,), np.int32, 37),
        ("replaced_where_most_rows_differ", replaced_not_changed, "most rows"),
        ("replaced_where_the_dataset_has_a_second_name", replaced_not_changed, "second name"),
        ("replaced_where_stored_big_endian", replaced_not_changed, "big-endian"),
        ("replaced_where_chunked", replaced_not_changed, "chunked"),
        ("partitions_run_again", partitions_run_again),
        ("sigkill_with_the_rows_held_back", killed_while_changing, "changed in place"),
        ("sigkill_with_the_rows_written", killed_while_changing, "journal round applied"),
        ("sigterm_with_the_rows_held_back", stopped_while_changing),
        ("no_reader_before_the_commit_point", no_reader_before_the_commit_point),
        ("on_a_nearly_full_disk", on_a_nearly_full_disk),
    ]
    e2e.run_cases(suite, args, sh, "changed", cases)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
