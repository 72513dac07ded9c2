#!/usr/bin/python3
"""End-to-end: inputs stored in the other ways h5py makes them (ctest e2e_input_layouts_np_N).

Besides contiguous and chunked datasets, h5py writes virtual datasets (VirtualLayout: rows
taken from datasets in other files, a source that is missing reading as the fill value),
datasets whose raw data lies in a separate file (external=), compact datasets, datasets
never written (no storage: every element the fill value), and links to datasets (soft
links, external links into other files). shardops must read each exactly as h5py does, at
any rank count, a row selection included. Each case runs `gather-nd` with the identity
indices (the output is the input, read through shardops' read path) and compares the output
with h5py's own read, byte for byte; one case also makes a virtual dataset the tensor of a
tensor-scatter-update whose output goes into the virtual dataset's own file; `shardops ls`
lists the datasets links lead to, each with its link. A file that h5py on a newer HDF5 wrote
with libver='latest' (when such an h5py is at hand) has parts HDF5 1.10 cannot read: those are
listed and refused with the reason, the rest read.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from e2e_common import (Shardops, Suite, expect_success, parse_args, read_h5, ref, same_array,  # noqa: E402
                        work_dir)

ROWS, COLS = 37, 3  # no rank count divides 37: uneven blocks


def rows_of(first, count, dtype="float32"):
    return (np.arange(first * COLS, (first + count) * COLS) % 1000 + 1).astype(dtype).reshape(count, COLS)


def make_virtual(d, name, missing_source=False, dtype="float32"):
    """A virtual dataset of ROWS rows from three source files (the last one absent if asked)."""
    parts = [(0, 12), (12, 30), (30, ROWS)]
    layout = h5py.VirtualLayout(shape=(ROWS, COLS), dtype=dtype)
    for k, (a, b) in enumerate(parts):
        src = os.path.join(d, "%s_src%d.h5" % (name, k))
        if not (missing_source and k == len(parts) - 1):
            with h5py.File(src, "w") as f:
                f["x"] = rows_of(a, b - a, dtype)
        layout[a:b] = h5py.VirtualSource(os.path.basename(src), "x", shape=(b - a, COLS))
    path = os.path.join(d, name + ".h5")
    with h5py.File(path, "w") as f:
        f.create_virtual_dataset("d", layout, fillvalue=-1)
    return path


def link_past_a_file_that_is_not_hdf5(suite, sh, d):
    """HDF5 looks for an external link's file in several places and opens the first it can
    read: a file of that name that is not HDF5 in the linking file's folder is passed over for
    the one in the working directory, by shardops as by HDF5 (its own check of the target must
    not stop at the first file of that name)."""
    sub = os.path.join(d, "past")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "data.h5"), "w") as f:
        f.write("not HDF5\n")
    with h5py.File(os.path.join(d, "data.h5"), "w") as f:
        f["x"] = rows_of(0, ROWS)
    linking = os.path.join(sub, "linking.h5")
    with h5py.File(linking, "w") as f:
        f["x"] = h5py.ExternalLink("data.h5", "/x")
    out = os.path.join(d, "past_out.h5")
    res = sh.run(["gather-nd", "--params", ref(linking, "/x"), "--indices", ref(identity(d, ROWS), "/i"), "--out",
                  ref(out, "/o"), "-q"], cwd=d)
    expect_success(suite, res)
    if res.rc == 0:
        same_array(suite, "past", read_h5(out, "o"), rows_of(0, ROWS), res)


def virtual_damaged_source(suite, sh, d):
    """A virtual dataset whose source file is there but cannot be read (cut short): HDF5 reads
    the fill value in its place, as for a missing source, and the job exited 0 with -1s.
    Now exit 3 naming the source; a missing source still reads as the fill value. The same
    for a source of a source (a virtual dataset taking its rows from that one): before, only
    the first level was checked, and the deeper source's rows read as -1."""
    path = make_virtual(d, "vds_damaged")
    src = os.path.join(d, "vds_damaged_src1.h5")
    with open(src, "r+b") as f:
        f.truncate(os.path.getsize(src) // 2)
    outer = os.path.join(d, "vds_over_damaged.h5")
    layout = h5py.VirtualLayout(shape=(ROWS, COLS), dtype="float32")
    layout[:] = h5py.VirtualSource(os.path.basename(path), "d", shape=(ROWS, COLS))
    with h5py.File(outer, "w") as f:
        f.create_virtual_dataset("d", layout, fillvalue=-2)
    for params in (path, outer):
        out = os.path.join(d, "vds_damaged_out.h5")
        res = sh.run(["gather-nd", "--params", ref(params, "/d"), "--indices", ref(identity(d, ROWS), "/i"), "--out",
                      ref(out, "/g"), "-q"])
        what = os.path.basename(params)
        suite.check(res.rc == 3, "%s: exit %s, expected 3" % (what, res.rc), res)
        suite.check("(through the virtual dataset's source file 'vds_damaged_src1.h5')" in res.stderr and
                    "as HDF5 (truncated or damaged?)" in res.stderr, "%s: the message does not name the source" % what,
                    res)
        suite.check(not os.path.exists(out), "%s: an output was written" % what, res)


def make_external_raw(d):
    path = os.path.join(d, "external_raw.h5")
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("d", shape=(ROWS, COLS), dtype="float32",
                              external=[(os.path.join(d, "external_raw.bin"), 0, h5py.h5f.UNLIMITED)])
        ds[...] = rows_of(0, ROWS)
    return path


def external_raw_data_missing(suite, sh, d):
    """A dataset whose external raw file is gone (an absolute name) or not where HDF5 looks
    for a relative one (the working directory): exit 2 naming the raw file, on every rank
    alike, where HDF5 said only "unable to open external raw data file"."""
    for name, raw in (("absolute", os.path.join(d, "gone.bin")), ("relative", "shardops-test-nowhere.bin")):
        path = os.path.join(d, "external_%s.h5" % name)
        with h5py.File(path, "w") as f:
            f.create_dataset("d", shape=(4, COLS), dtype="float32", external=[(raw, 0, h5py.h5f.UNLIMITED)])
        if os.path.exists(raw):
            os.remove(raw)  # h5py made it (the absolute one; a relative one in this folder)
        res = sh.run(["gather-nd", "--params", ref(path, "/d"), "--indices", ref(identity(d, 4), "/i"), "--out",
                      ref(os.path.join(d, "out_external_%s.h5" % name), "/o"), "-q"])
        said = "external raw file '%s'" % raw
        suite.check(res.rc == 2 and said in res.stderr and "does not exist" in res.stderr,
                    "%s: exit %s, expected 2 naming %s" % (name, res.rc, raw), res)
        if name == "relative":
            suite.check("working directory" in res.stderr, "relative: the message does not say where HDF5 looks", res)


def make_compact(d):
    path = os.path.join(d, "compact.h5")
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        space = h5py.h5s.create_simple((ROWS, COLS))
        ds = h5py.h5d.create(f.id, b"d", h5py.h5t.NATIVE_INT64, space, dcpl=dcpl)
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, rows_of(0, ROWS, "int64"))
    return path


def make_never_written(d):
    path = os.path.join(d, "never_written.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("d", shape=(ROWS, COLS), dtype="float64", fillvalue=2.5)
    return path


def make_never_filled(d):
    """Datasets whose unwritten parts HDF5 leaves as the read buffer was (fill time NEVER, as
    netCDF's fill_value=False sets): a chunked one with its first chunk written, a contiguous
    one never written; their fill value 3.5 is what those parts read as, at every rank count.
    Returns the file and the expected arrays."""
    path = os.path.join(d, "never_filled.h5")
    chunked = np.full((ROWS, COLS), 3.5, dtype=np.float32)
    chunked[:5] = 1.0
    with h5py.File(path, "w") as f:
        for name, chunks in (("chunked", (5, COLS)), ("contiguous", None)):
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            if chunks:
                dcpl.set_chunk(chunks)
            dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
            dcpl.set_fill_value(np.array(3.5, dtype=np.float32))
            h5py.h5d.create(f.id, name.encode(), h5py.h5t.NATIVE_FLOAT, h5py.h5s.create_simple((ROWS, COLS)), dcpl=dcpl)
        f["chunked"][:5] = np.ones((5, COLS), dtype=np.float32)
    return path, {"/chunked": chunked, "/contiguous": np.full((ROWS, COLS), 3.5, dtype=np.float32)}


def make_overlapping_virtual(d):
    """A virtual dataset whose two mappings overlap (rows 10-14: the second wins) and whose
    last rows no mapping covers: HDF5 leaves those as the read buffer was; they read as the
    fill value. Returns the file and the expected array."""
    x = rows_of(0, 30)
    a, b = os.path.join(d, "overlap_a.h5"), os.path.join(d, "overlap_b.h5")
    with h5py.File(a, "w") as f:
        f["x"] = x
    with h5py.File(b, "w") as f:
        f["x"] = -x
    layout = h5py.VirtualLayout(shape=(25, COLS), dtype="float32")
    layout[0:15] = h5py.VirtualSource(os.path.basename(a), "x", shape=x.shape)[0:15]
    layout[10:20] = h5py.VirtualSource(os.path.basename(b), "x", shape=x.shape)[5:15]
    path = os.path.join(d, "overlap.h5")
    with h5py.File(path, "w") as f:
        f.create_virtual_dataset("d", layout, fillvalue=-7.5)
    expected = np.full((25, COLS), -7.5, dtype=np.float32)
    expected[0:10], expected[10:20] = x[0:10], -x[5:15]
    return path, expected


def make_overlapping_virtual_strings(d):
    """The same for fixed-length strings (S4): rows 3, 4 and 6 map to nothing. Expected: what
    h5py reads row by row (a selection of one row has no overlapping mappings, so HDF5 fills
    it), whatever this h5py wrote as the fill value."""
    src = os.path.join(d, "overlap_s_src.h5")
    with h5py.File(src, "w") as f:
        f["s"] = np.array([b"a", b"bc", b"def", b"g"], "S4")
    layout = h5py.VirtualLayout(shape=(7,), dtype="S4")
    source = h5py.VirtualSource(os.path.basename(src), "s", shape=(4,))
    layout[0:2] = source[0:2]
    layout[1:3] = source[2:4]
    layout[5:6] = source[3:4]
    path = os.path.join(d, "overlap_s.h5")
    with h5py.File(path, "w") as f:
        f.create_virtual_dataset("d", layout, fillvalue=np.bytes_(b"zz"))
    with h5py.File(path, "r") as f:
        expected = np.array([f["d"][i] for i in range(7)], "S4")
    return path, expected


def expected_case(suite, sh, d, name, path, dataset, expected):
    """gather-nd of every row of `dataset` gives `expected`."""
    out = os.path.join(d, "out_%s.h5" % name)
    res = sh.run(["gather-nd", "--params", ref(path, dataset), "--indices", ref(identity(d, len(expected)), "/i"),
                  "--out", ref(out, "/o"), "-q"])
    expect_success(suite, res)
    if res.rc == 0:
        same_array(suite, name, read_h5(out, "o"), expected, res)


def make_odd_bools(d):
    """h5py's bool (enum {FALSE=0, TRUE=1} over int8) holding bytes that are neither: NumPy
    and TensorFlow take any byte but 0 as True, and an output must hold 1 for it (a byte
    that is not a member of the enum is no bool to h5py's readers). 2 MiB: large enough to
    have been mapped, which would pass the file's bytes on as they are."""
    raw = np.random.default_rng(3).integers(-128, 128, (16384, 128)).astype(np.int8)
    raw[:, :64] = np.random.default_rng(4).integers(0, 2, (16384, 64))
    path = os.path.join(d, "odd_bools.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=raw, dtype=h5py.enum_dtype({"FALSE": 0, "TRUE": 1}, basetype="i1"))
    return path, raw != 0


def make_links(d):
    target = os.path.join(d, "link_target.h5")
    with h5py.File(target, "w") as f:
        f["g/x"] = rows_of(0, ROWS)
    path = os.path.join(d, "links.h5")
    with h5py.File(path, "w") as f:
        f["d"] = h5py.ExternalLink(os.path.basename(target), "/g/x")
        f["soft"] = h5py.SoftLink("/d")
    return path


def identity(d, count):
    path = os.path.join(d, "iota_%d.h5" % count)
    if not os.path.exists(path):
        with h5py.File(path, "w") as f:
            f["i"] = np.arange(count, dtype=np.int64).reshape(count, 1)
    return path


def h5py_rows(path, dataset, rows=None):
    with h5py.File(path, "r") as f:
        data = f[dataset][()]
    return data if rows is None else data[rows[0]:rows[1]]


def gather_case(suite, sh, d, name, path, dataset="/d", rows=None):
    expected = h5py_rows(path, dataset, rows)
    source = ref(path, dataset) + ("[%d:%d]" % rows if rows else "")
    out = os.path.join(d, "out_%s.h5" % name)
    res = sh.run(["gather-nd", "--params", source, "--indices", ref(identity(d, len(expected)), "/i"), "--out",
                  ref(out, "/o"), "-q"])
    expect_success(suite, res)
    if res.rc == 0:
        same_array(suite, name, read_h5(out, "o"), expected, res)


def scatter_into_virtual_file(suite, sh, d):
    """The virtual dataset as a tensor; the output added to the virtual dataset's own file."""
    path = make_virtual(d, "vds_target")
    upd = os.path.join(d, "vds_updates.h5")
    with h5py.File(upd, "w") as f:
        f["i"] = np.array([[3], [36], [3]], np.int32)
        f["u"] = np.full((3, COLS), 500, np.float32)
        f["u"][2] = 700
    expected = h5py_rows(path, "/d")
    expected[3] = 700
    expected[36] = 500
    res = sh.run(["tensor-scatter-update", "--tensor", ref(path, "/d"), "--indices", ref(upd, "/i"), "--updates",
                  ref(upd, "/u"), "--out", ref(path, "/updated"), "-q"])
    expect_success(suite, res)
    if res.rc == 0:
        same_array(suite, "updated", read_h5(path, "updated"), expected, res)
        same_array(suite, "d", h5py_rows(path, "/d"), rows_of(0, ROWS), res)


def listing_shows_links(suite, sh, d, links):
    """`shardops ls` lists the datasets links lead to (a master file's data), with each link:
    an external link into the file itself too (it was left out), links to groups (listed,
    not walked: they were left out silently), one that leads nowhere
    (listed as such, where it was left out silently), and ones to files that are there but
    cannot be read (listed as "leads to nothing"; a pipe hung the listing)."""
    with open(os.path.join(d, "text.h5"), "w") as f:
        f.write("not HDF5\n")
    os.mkfifo(os.path.join(d, "pipe.h5"))
    os.symlink("symlink_loop.h5", os.path.join(d, "symlink_loop.h5"))
    with h5py.File(links, "a") as f:
        f["real"] = np.arange(2, dtype=np.int64)
        f["own"] = h5py.ExternalLink(os.path.basename(links), "/real")
        f["nowhere"] = h5py.ExternalLink("missing.h5", "/x")
        f["to_text"] = h5py.ExternalLink("text.h5", "/x")
        f["to_pipe"] = h5py.ExternalLink("pipe.h5", "/x")
        f["to_symlink_loop"] = h5py.ExternalLink("symlink_loop.h5", "/x")
        f["loop"] = h5py.SoftLink("/loop")
        f["ünï€"] = np.arange(3, dtype=np.int64)  # columns count characters, not bytes
        f["grp/inner"] = np.arange(2, dtype=np.int64)
        f["to_grp"] = h5py.SoftLink("/grp")
        f["to_root"] = h5py.ExternalLink(os.path.basename(links), "/")
    res = sh.run(["ls", links], np=1, timeout=60)
    expect_success(suite, res)
    lines = [line.split() for line in res.stdout.splitlines()]
    by_path = {words[0]: " ".join(words[1:]) for words in lines if words}
    suite.check(by_path.get("/d", "").startswith("[%d,%d] float32" % (ROWS, COLS)),
                "/d is not listed with its shape: %r" % res.stdout, res)
    suite.check("(an external link to 'link_target.h5:/g/x')" in by_path.get("/d", ""),
                "/d's external link is not shown: %r" % res.stdout, res)
    suite.check("(a soft link to '/d')" in by_path.get("/soft", ""), "/soft's link is not shown: %r" % res.stdout, res)
    suite.check(by_path.get("/own", "") == "[2] int64 (an external link to 'links.h5:/real')",
                "/own (into its own file) is not listed: %r" % res.stdout, res)
    suite.check(by_path.get("/nowhere", "") == "leads to nothing (an external link to 'missing.h5:/x')",
                "/nowhere is not listed as leading nowhere: %r" % res.stdout, res)
    for name, link in (("/to_grp", "(a soft link to '/grp')"), ("/to_root", "(an external link to 'links.h5:/')")):
        suite.check(by_path.get(name, "") == "a group; shardops ls %s:%s lists its datasets %s" % (links, name, link),
                    "%s (a link to a group) is not listed as one: %r" % (name, res.stdout), res)
    starts = {line.split()[0]: line.find("[") for line in res.stdout.splitlines() if line.split()}
    suite.check(starts.get("/ünï€") == starts.get("/real"), "the columns after a non-ASCII name are not aligned: %r"
                % res.stdout, res)
    suite.check(by_path.get("/loop", "").startswith("leads through more links than HDF5 follows (16): a loop of links"),
                "/loop is not listed as a loop: %r" % res.stdout, res)
    suite.check(by_path.get("/to_symlink_loop", "").startswith("through the external link 'to_symlink_loop'") and
                "symlink_loop.h5' is a loop of symbolic links" in by_path.get("/to_symlink_loop", ""),
                "/to_symlink_loop is not listed as a loop of symbolic links: %r" % res.stdout, res)
    for name, why in (("/to_text", "text.h5' is not an HDF5 file"), ("/to_pipe", "pipe.h5' is not a regular file")):
        suite.check(by_path.get(name, "").startswith("cannot be read: through the external link") and
                    why in by_path.get(name, ""), "%s is not listed with why it cannot be read: %r" % (name, res.stdout),
                    res)


def full_standard_output(suite, sh, d, links):
    """A standard output that cannot take what is written to it (/dev/full: a full disk): the
    listing is all `ls` makes, so it fails (exit 3, why); an op's summary is printed after its
    commit, so it is a warning and the output is in place. Run without mpiexec (one process),
    whose forwarding of a rank's output does not report a write it could not make."""
    def direct(argv):
        with open("/dev/full", "w") as full:
            p = subprocess.run([sh.binary] + argv, stdout=full, stderr=subprocess.PIPE, env=sh.env, timeout=120,
                               universal_newlines=True, errors="replace")
        return p.returncode, p.stderr

    rc, err = direct(["ls", links])
    suite.check(rc == 3 and "cannot write the listing of '%s' to standard output: No space left on device" % links
                in err, "ls into a full standard output: exit %s, %r" % (rc, err))
    src, out = os.path.join(d, "summary_in.h5"), os.path.join(d, "summary_out.h5")
    with h5py.File(src, "w") as f:
        f["params"] = np.array([5, 7], np.int64)
        f["indices"] = np.array([[1], [0]], np.int32)
    rc, err = direct(["gather-nd", "--params", ref(src, "/params"), "--indices", ref(src, "/indices"),
                      "--out", ref(out, "/g")])
    suite.check(rc == 0 and "warning: cannot write the summary to standard output: No space left on device; "
                "the job's outputs are committed" in err, "an op into a full standard output: exit %s, %r" % (rc, err))
    suite.check(os.path.exists(out) and list(read_h5(out, "/g").ravel()) == [7, 5],
                "the op's output is not in place")


def unusable_tmpdir(suite, sh, d, links):
    """Without mpiexec (one process) and with MPI asked for (SHARDOPS_ONE_RANK_MPI=1), Open MPI
    keeps its session files under $TMPDIR: one that cannot be made, is not a folder or is not
    writable made `ls` and every op exit 1 (a bug) under pages of Open MPI's text, usage errors
    too. Now exit 2, one line naming TMPDIR; with a good one the same commands work. A job of
    one rank that does not start MPI (the default) does not care."""
    plain = os.path.join(d, "plain_file")
    with open(plain, "w") as f:
        f.write("x")
    for tmpdir in (os.path.join(plain, "under_a_file"), plain):
        p = subprocess.run([sh.binary, "ls", links], capture_output=True, text=True, timeout=120,
                           env=dict(sh.env, TMPDIR=tmpdir))
        suite.check(p.returncode == 0, "ls without MPI, TMPDIR=%s: exit %s, %r" % (tmpdir, p.returncode,
                                                                                  p.stderr[-400:]))
        for argv in (["ls", links], ["gather-nd", "--params", ref(links, "/x")]):  # the latter a usage error
            p = subprocess.run([sh.binary] + argv, capture_output=True, text=True, timeout=120,
                               env=dict(sh.env, TMPDIR=tmpdir, SHARDOPS_ONE_RANK_MPI="1"))
            suite.check(p.returncode == 2 and "TMPDIR is '%s'" % tmpdir in p.stderr and
                        len(p.stderr.strip().splitlines()) == 1,
                        "%s with TMPDIR=%s: exit %s, %r" % (argv[0], tmpdir, p.returncode, p.stderr[-400:]))
    for tmpdir in (d, os.path.join(d, "missing", "deeper")):  # Open MPI makes the missing folders
        p = subprocess.run([sh.binary, "ls", links], capture_output=True, text=True, timeout=120,
                           env=dict(sh.env, TMPDIR=tmpdir, SHARDOPS_ONE_RANK_MPI="1"))
        suite.check(p.returncode == 0, "ls with TMPDIR=%s: exit %s, %r" % (tmpdir, p.returncode, p.stderr[-400:]))


NEWER_HDF5 = """
import sys, h5py, numpy as np
if h5py.version.hdf5_version_tuple < (1, 12):
    sys.exit(77)
with h5py.File(sys.argv[1], "w", libver="latest") as f:
    f["p"] = np.arange(12, dtype="f4").reshape(6, 2)
    f["b"] = np.arange(12).reshape(6, 2) % 3 == 0
    f["c"] = np.arange(12, dtype="c8").reshape(6, 2)
"""


def newer_hdf5_python(repo):
    """A Python whose h5py is built on HDF5 1.12 or later (the TensorFlow venv's pip wheel)."""
    candidates = [os.path.join(os.environ["SHARDOPS_TF_VENV"], "bin", "python")] \
        if os.environ.get("SHARDOPS_TF_VENV") else []
    candidates += [os.path.join(repo, ".venv-tf", "bin", "python"), "/opt/tfvenv/bin/python"]
    for c in candidates:
        if os.access(c, os.X_OK) and subprocess.run(
                [c, "-c", "import h5py, sys; sys.exit(h5py.version.hdf5_version_tuple < (1, 12))"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            return c
    return None


def newer_hdf5_format(suite, sh, d, python):
    """A file h5py on a newer HDF5 wrote with libver='latest': what HDF5 1.10 cannot read is
    listed and refused with the reason, never left out; the rest is read."""
    path = os.path.join(d, "latest.h5")
    subprocess.run([python, "-c", NEWER_HDF5, path], check=True)
    res = sh.run(["ls", path], np=1)
    expect_success(suite, res)
    by_path = {line.split()[0]: line for line in res.stdout.splitlines() if line.strip()}
    suite.check(sorted(by_path) == ["/b", "/c", "/p"], "not every dataset is listed: %r" % res.stdout, res)
    for name in ("/b", "/c"):
        line = by_path.get(name, "")
        suite.check("cannot be opened" in line and "written by a newer HDF5" in line,
                    "%s's line does not say why it cannot be read: %r" % (name, line), res)
    res = sh.run(["gather-nd", "--params", ref(path, "/b"), "--indices", ref(path, "/p"),
                  "--out", ref(os.path.join(d, "latest_out.h5"), "/g"), "-q"])
    suite.check(res.rc == 3, "reading /b: exit %s, expected 3" % res.rc, res)
    suite.check("written by a newer HDF5" in res.stderr and "latest.h5:/b" in res.stderr,
                "the message does not name the dataset and the reason", res)
    gather_case(suite, sh, d, "newer_format_float", path, "/p")


def main():
    args = parse_args(__doc__.splitlines()[0], default_np=3)
    suite = Suite("e2e_input_layouts_np_%d" % args.np, args)
    sh = Shardops(args)
    with work_dir(args, "layouts") as d:
        vds = make_virtual(d, "vds")
        suite.case("virtual", gather_case, suite, sh, d, "virtual", vds)
        suite.case("virtual_rows", gather_case, suite, sh, d, "virtual_rows", vds, "/d", (5, 33))
        suite.case("virtual_missing_source", gather_case, suite, sh, d, "virtual_missing_source",
                   make_virtual(d, "vds_missing", missing_source=True))
        suite.case("virtual_damaged_source", virtual_damaged_source, suite, sh, d)
        suite.case("virtual_int16", gather_case, suite, sh, d, "virtual_int16",
                   make_virtual(d, "vds_int16", dtype="int16"))
        # Read through an external link into its own file: each rank's own serial open of the
        # file followed the link with HDF5's locking on and could not open the file again.
        linked = make_virtual(d, "vds_linked")
        with h5py.File(linked, "a") as f:
            f["own"] = h5py.ExternalLink(os.path.basename(linked), "/d")
        suite.case("virtual_through_a_link_into_its_file", gather_case, suite, sh, d, "virtual_through_own_link",
                   linked, "/own")
        suite.case("virtual_as_tensor_output_beside_it", scatter_into_virtual_file, suite, sh, d)
        overlap, expected = make_overlapping_virtual(d)
        suite.case("virtual_overlapping_mappings", expected_case, suite, sh, d, "virtual_overlapping_mappings", overlap,
                   "/d", expected)
        overlap_s, expected = make_overlapping_virtual_strings(d)
        suite.case("virtual_overlapping_strings", expected_case, suite, sh, d, "virtual_overlapping_strings", overlap_s,
                   "/d", expected)
        never, arrays = make_never_filled(d)
        for dataset, expected in arrays.items():
            name = "fill_time_never_" + dataset[1:]
            suite.case(name, expected_case, suite, sh, d, name, never, dataset, expected)
        suite.case("external_raw_data", gather_case, suite, sh, d, "external_raw_data", make_external_raw(d))
        suite.case("external_raw_data_missing", external_raw_data_missing, suite, sh, d)
        suite.case("compact", gather_case, suite, sh, d, "compact", make_compact(d))
        suite.case("never_written_fill_value", gather_case, suite, sh, d, "never_written_fill_value",
                   make_never_written(d))
        odd, expected = make_odd_bools(d)
        suite.case("bool_bytes_neither_0_nor_1", expected_case, suite, sh, d, "odd_bools", odd, "/d", expected)
        links = make_links(d)
        suite.case("external_link", gather_case, suite, sh, d, "external_link", links, "/d")
        suite.case("soft_link_rows", gather_case, suite, sh, d, "soft_link_rows", links, "/soft", (1, 36))
        suite.case("listing_shows_links", listing_shows_links, suite, sh, d, links)
        suite.case("full_standard_output", full_standard_output, suite, sh, d, links)
        suite.case("unusable_tmpdir", unusable_tmpdir, suite, sh, d, links)
        suite.case("link_past_a_file_that_is_not_hdf5", link_past_a_file_that_is_not_hdf5, suite, sh, d)
        python = newer_hdf5_python(os.path.dirname(os.path.dirname(HERE)))
        if python:
            suite.case("newer_hdf5_format", newer_hdf5_format, suite, sh, d, python)
        else:
            suite.skip("newer_hdf5_format", "no h5py built on HDF5 1.12 or later (scripts/setup.sh's venv has one)")
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
