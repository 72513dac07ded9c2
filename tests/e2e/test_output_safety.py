"""What the output layer guarantees when things go wrong (docs/output-safety.md).

Real faults, no mocks: a small tmpfs for a full disk, real concurrent mpirun jobs on one file,
real signals to mpirun and to the ranks, SIGKILL at the worst moments. Every case checks the
same promises: a job that exits 0 wrote exactly what it says; a job that fails leaves its
target byte-identical (or, stopped after its commit, complete and says so); nothing
".shardops-" is left behind, or the next job writing there removes it.

The moment a signal arrives is made certain with SHARDOPS_TEST_PAUSE=PHASE:SECONDS, which makes
each rank sleep at the start of that phase (and print "shardops: test pause at PHASE").
"""

import contextlib
import ctypes
import fcntl
import json
import os
import re
import resource
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as e2e  # noqa: E402

STOP_CODES = {signal.SIGTERM: 143, signal.SIGINT: 130, signal.SIGHUP: 129, signal.SIGUSR1: 138,
              signal.SIGUSR2: 140, signal.SIGXCPU: 152, signal.SIGALRM: 142, signal.SIGQUIT: 131,
              signal.SIGPROF: 155, signal.SIGVTALRM: 154, signal.SIGPWR: 158, signal.SIGSTKFLT: 144,
              signal.SIGIO: 157}


def leftovers(d):
    return [n for n in os.listdir(d) if ".shardops-" in n]


def make_inputs(d, rows=4096, index_rows=2048):
    return e2e.gather_inputs(d, rows, index_rows)


def gather_args(inp, out):
    return ["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"), "--out", out, "-q"]


def make_existing(path, size_rows=1024):
    """An existing output file with two datasets, written by h5py."""
    rng = np.random.default_rng(7)
    e2e.write_h5(path, {"/keep/a": rng.standard_normal((size_rows, 8)).astype(np.float64),
                        "/b": np.arange(100, dtype=np.int64)}, mode="w")
    return e2e.file_state(path)


class Job:
    """A shardops job started in the background (its own process group)."""

    def __init__(self, sh, argv, np_, env=None, prefix=()):
        self.cmd = list(prefix) + [sh.mpiexec, "-n", str(np_)] + sh.flags + [sh.binary] + [str(a) for a in argv]
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(sh.env, **(env or {})), start_new_session=True)
        self.err = b""
        self.out = b""

    def wait_for(self, text, timeout=60.0, count=1):
        """Reads stderr until it holds text count times; False on timeout or exit."""
        end = time.monotonic() + timeout
        while self.err.count(text.encode()) < count:
            left = end - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and not select.select([self.proc.stderr], [], [], 0)[0]:
                return False
            ready, _, _ = select.select([self.proc.stderr], [], [], min(left, 0.2))
            if ready:
                chunk = os.read(self.proc.stderr.fileno(), 65536)
                if not chunk and self.proc.poll() is not None:
                    return False
                self.err += chunk
        return True

    def ranks(self):
        """PIDs of the rank processes (children of mpirun)."""
        try:
            with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                return [int(p) for p in f.read().split()]
        except OSError:
            return []

    def finish(self, timeout=60.0):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            out, err = self.proc.communicate()
            self.out, self.err = self.out + out, self.err + err
            return None
        self.out, self.err = self.out + out, self.err + err
        return self.proc.returncode

    def result(self, rc, seconds=0.0):
        return e2e.Result(self.cmd, rc, self.out.decode(errors="replace"), self.err.decode(errors="replace"),
                          seconds, rc is None)


# ---------------------------------------------------------------------------------------------
# A full disk


@contextlib.contextmanager
def mounted(d, mount_args):
    """Folder d with `mount mount_args d` on it, unmounted and removed after; None (d removed)
    where mounting is not allowed here."""
    if subprocess.call(["mount"] + mount_args + [d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) != 0:
        os.rmdir(d)
        yield None
        return
    try:
        yield d
    finally:
        subprocess.call(["umount", d])
        os.rmdir(d)


def small_tmpfs(size_mb, inodes=None):
    d = os.path.join("/tmp", "shardops-tmpfs-%d-%d" % (os.getpid(), time.monotonic_ns()))
    os.mkdir(d)
    options = "size=%dm" % size_mb + (",nr_inodes=%d" % inodes if inodes else "")
    return mounted(d, ["-t", "tmpfs", "-o", options, "tmpfs"])


def can_mount():
    with small_tmpfs(1) as d:
        return d is not None


def disk_full_new_file(t, sh):
    """A 32 MB output into a 20 MB file system: exit 3 naming the cause, nothing left."""
    with small_tmpfs(20) as fs:
        inp, _ = make_inputs(t.d, rows=4096, index_rows=1 << 19)
        out = os.path.join(fs, "out.h5")
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")))
        t.suite.require(not r.timed_out, "hung on a full disk", r)
        t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
        t.suite.check("no space" in r.stderr.lower(), "the message does not say the disk is full", r)
        t.suite.check(os.listdir(fs) == [], "left %s on the full disk" % os.listdir(fs), r)


def inodes_run_out(t, sh):
    """A file system short of inodes beside the output: the job's own files (its new file, the
    undo journal of an existing one) and Open MPI's two per rank, which it makes for some ranks
    and not others where fewer are free, then waits in MPI_File_close for ever (it carries on
    without them where no rank can make them). Exit 3 naming the cause, nothing left, the
    existing file as it was; or, where the inodes suffice for the job's own files and for
    Open MPI's on every rank or on none, the output."""
    inp, expected = make_inputs(t.d)
    for existing in (False, True):
        own = 2 if existing else 1
        # tmpfs counts its root folder; the lock takes one; the existing file one more.
        used = 2 + (1 if existing else 0)
        for free in sorted({0, own - 1, own, own + 1, own + 2 * sh.np - 1, own + 2 * sh.np}):
            if free < 0:
                continue
            with small_tmpfs(4, inodes=used + free) as fs:
                t.suite.require(fs is not None, "cannot mount a tmpfs")
                out = os.path.join(fs, "out.h5")
                before = make_existing(out, size_rows=16) if existing else None
                r = sh.run(gather_args(inp, e2e.ref(out, "/g")), timeout=60)
                what = "%s, %d inodes free" % ("adding to a file" if existing else "a new file", free)
                t.suite.require(not r.timed_out, "%s: hung" % what, r)
                fits = free == own or free >= own + 2 * sh.np
                if fits:
                    e2e.expect_success(t.suite, r, what)
                    if r.rc == 0:
                        e2e.same_array(t.suite, what, e2e.read_h5(out, "/g"), expected, r)
                else:
                    t.suite.check(r.rc == 3, "%s: exit %s, expected 3" % (what, r.rc), r)
                    t.suite.check("free inodes" in r.stderr, "%s: the message does not say why" % what, r)
                    if existing:
                        t.suite.check(e2e.file_state(out) == before, "%s: the existing file changed" % what, r)
                t.suite.check(leftovers(fs) == [], "%s: left %s" % (what, leftovers(fs)), r)


def disk_full_existing_file(t, sh, during):
    """An existing target on a full disk: while writing the new data (straight into the target,
    past its end), or while merging it in (a compressed output goes through the new file and
    is copied in at the commit)."""
    size, rows = (20, 1 << 19) if during == "write" else (24, 163840)
    with small_tmpfs(size) as fs:
        inp, _ = make_inputs(t.d, rows=4096, index_rows=rows)
        out = os.path.join(fs, "out.h5")
        before = make_existing(out, size_rows=1024 if during == "write" else 131072)  # 8 KB or 8 MB
        extra = [] if during == "write" else ["--compression", "gzip=1"]
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")) + extra)
        t.suite.require(not r.timed_out, "hung on a full disk", r)
        t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
        t.suite.check("no space" in r.stderr.lower(), "the message does not say the disk is full", r)
        t.suite.check(e2e.file_state(out) == before, "the existing file changed", r)
        t.suite.check(sorted(os.listdir(fs)) == ["out.h5"], "left %s" % os.listdir(fs), r)


def dense_scatter_inputs(d, rows, cols=16):
    """scatter-nd inputs of two updates per output row (a held output). Returns the input file
    and the expected output."""
    rng = np.random.default_rng(31)
    idx = rng.integers(0, rows, size=(2 * rows, 1)).astype(np.int64)
    upd = rng.standard_normal((2 * rows, cols)).astype(np.float32)
    path = os.path.join(d, "scatter_in.h5")
    e2e.write_h5(path, {"/idx": idx, "/upd": upd}, mode="w")
    expected = np.zeros((rows, cols), np.float32)
    np.add.at(expected, idx[:, 0], upd)
    return path, expected


def dense_scatter_args(inp, rows, out, cols=16):
    return ["scatter-nd", "--indices", e2e.ref(inp, "/idx"), "--updates", e2e.ref(inp, "/upd"), "--shape",
            "%d,%d" % (rows, cols), "--out", out, "-q"]


def disk_full_dense_scatter(t, sh):
    """A 32 MB dense scatter output (more updates than rows: made whole, then written) on a 20
    MB file system, new and existing target: exit 3 naming the cause, nothing left, the
    existing file unchanged; a 4 MB one fits and is right."""
    with small_tmpfs(20) as fs:
        inp, _ = dense_scatter_inputs(t.d, 1 << 19)
        out = os.path.join(fs, "out.h5")
        for existing in (False, True):
            before = make_existing(out) if existing else None
            r = sh.run(dense_scatter_args(inp, 1 << 19, e2e.ref(out, "/s")))
            t.suite.require(not r.timed_out, "hung on a full disk", r)
            t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
            t.suite.check("no space" in r.stderr.lower(), "the message does not say the disk is full", r)
            if existing:
                t.suite.check(e2e.file_state(out) == before, "the existing file changed", r)
            t.suite.check(os.listdir(fs) == (["out.h5"] if existing else []), "left %s" % os.listdir(fs), r)
        inp, expected = dense_scatter_inputs(t.d, 1 << 16)
        r = sh.run(dense_scatter_args(inp, 1 << 16, e2e.ref(out, "/fits")))
        e2e.expect_success(t.suite, r)
        e2e.same_array(t.suite, "fits", e2e.read_h5(out, "/fits"), expected, r)
        t.suite.check(sorted(os.listdir(fs)) == ["out.h5"], "left %s" % os.listdir(fs), r)


def fits_exactly_enough(t, sh):
    """A small output on the same small file system succeeds and is right."""
    with small_tmpfs(20) as fs:
        inp, expected = make_inputs(t.d, rows=4096, index_rows=1 << 16)  # 4 MB
        out = os.path.join(fs, "out.h5")
        make_existing(out)
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")))
        e2e.expect_success(t.suite, r)
        e2e.same_array(t.suite, "g", e2e.read_h5(out, "/g"), expected, r)
        t.suite.check(sorted(os.listdir(fs)) == ["out.h5"], "left %s" % os.listdir(fs), r)


# ---------------------------------------------------------------------------------------------
# The largest file a job may write (RLIMIT_FSIZE: `ulimit -f`, which Slurm carries from the
# submitting shell into the job). A write past it fails with EFBIG (or kills the rank with
# SIGXFSZ, unless ignored); HDF5 then cannot close the file.

FILE_SIZE_LIMIT = 20 << 20


def file_size_limit_case(t, sh, kind):
    """new: a 32 MB output, refused before anything is written; compressed: random rows that
    gzip cannot shrink, found too large only as they are written; stored: gzip level 0 (the
    rows stored, a little larger), where the ranks whose rows lie past the limit fail inside
    HDF5's collective write and one whose rows fit was left waiting in it (those ranks end the
    job after a few seconds); existing: a dataset that
    would grow an existing 8 MB file past the limit; existing_compressed: a compressed 15 MB
    dataset that fits the limit in its own new file, but not once copied into an existing 8 MB
    file at the commit (HDF5's object copy crashed on the failed write: SIGSEGV, the journal
    and new file left); strings, fixed_strings: string outputs (variable-length ones keep their
    bytes in HDF5's heap). Each exits 3 naming the limit, with no crash at the end, nothing
    left behind and an existing target byte-identical."""
    inp, _ = make_inputs(t.d, rows=4096, index_rows=(1 << 18) if kind == "existing_compressed" else 1 << 19)
    out = os.path.join(t.d, "out.h5")
    before = make_existing(out, size_rows=131072) if kind.startswith("existing") else None
    extra = {"compressed": ["--compression", "gzip=1"], "stored": ["--compression", "gzip=0"],
             "existing_compressed": ["--compression", "gzip=1"]}.get(kind, [])
    argv = gather_args(inp, e2e.ref(out, "/g"))
    if kind.endswith("strings"):
        words = np.array([b"%d:" % k + b"x" * 60 for k in range(4096)], dtype=object).reshape(-1, 1)
        if kind == "fixed_strings":
            words = words.astype("S70")
        e2e.write_h5(inp, {"/words": words})
        argv[argv.index("--params") + 1] = e2e.ref(inp, "/words")
    r = sh.run(argv + extra, rlimits={resource.RLIMIT_FSIZE: FILE_SIZE_LIMIT})
    t.suite.require(not r.timed_out, "hung at the file size limit", r)
    t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
    t.suite.check("file size limit" in r.stderr, "the message does not name the file size limit", r)
    t.suite.check("Segmentation" not in r.stderr and "signal" not in r.stderr.lower(), "a rank crashed", r)
    if before is None:
        t.suite.check(not os.path.exists(out), "the output file exists", r)
    else:
        t.suite.check(e2e.file_state(out) == before, "the existing file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def settings_differ_between_ranks(t, sh):
    """A SHARDOPS_* variable that the last rank alone sees (exported on one host, not passed
    on with mpirun -x): a value it does not take, or another value than rank 0's, is exit 2
    on every rank naming it, before any work; the ranks took different paths and hung."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "out.h5")
    before = make_existing(out)
    for setting, text in (("SHARDOPS_HUGE_PAGES=maybe", "SHARDOPS_HUGE_PAGES"),
                          ("SHARDOPS_MAP_INPUTS=0", "the ranks' SHARDOPS_* settings differ")):
        wrapper = os.path.join(t.d, "last-rank-env.sh")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\n[ "$OMPI_COMM_WORLD_RANK" = "%d" ] && export %s\nexec %s "$@"\n'
                    % (sh.np - 1, setting, sh.binary))
        os.chmod(wrapper, 0o755)
        binary, sh.binary = sh.binary, wrapper
        try:
            r = sh.run(gather_args(inp, e2e.ref(out, "/g")), timeout=60)
        finally:
            sh.binary = binary
        t.suite.require(not r.timed_out, "hung with %s on the last rank only" % setting, r)
        t.suite.check(r.rc == 2, "exit %s, expected 2" % r.rc, r)
        t.suite.check(text in r.stderr, "the message does not name %s" % text, r)
        t.suite.check(e2e.file_state(out) == before, "the target changed", r)
        os.unlink(wrapper)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def longest_file_name(t, sh):
    """A target whose name has the most bytes a name may have: made new, then added to (in
    place, and through the new file and the journal), each report beside it."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, LONGEST_NAME)
    for k, extra in enumerate([[], [], ["--compression", "gzip=1"]]):
        report = os.path.join(t.d, "r" * 250 + ".json")
        r = sh.run(gather_args(inp, e2e.ref(out, "/g%d" % k)) + extra + ["--report", report])
        e2e.expect_success(t.suite, r)
        e2e.same_array(t.suite, "g%d" % k, e2e.read_h5(out, "/g%d" % k), expected, r)
        t.suite.check(os.path.isfile(report), "no report", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def file_name_too_long(t, sh):
    """A name one byte longer than the file system takes: refused before any work (it failed
    at the rename, after the job had read, computed and written everything), nothing left."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "n" * 253 + ".h5")  # 256 bytes
    job = Job(sh, gather_args(inp, e2e.ref(out, "/g")), sh.np, env={"SHARDOPS_TEST_PAUSE": "read:30"})
    t.suite.check(not job.wait_for("test pause at read", timeout=20), "the job began its read phase")
    rc = job.finish(timeout=sh.timeout)
    r = job.result(rc, 0)
    t.suite.check(rc == 3, "exit %s, expected 3" % rc, r)
    t.suite.check("its name is 256 bytes, more than the file system of" in r.stderr, "the message does not say why", r)
    t.suite.check(not os.path.exists(out), "an output was written", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def file_size_limit_fits(t, sh):
    """An output that stays within the limit is written as usual."""
    inp, expected = make_inputs(t.d, rows=4096, index_rows=1 << 16)  # 4 MB
    out = os.path.join(t.d, "out.h5")
    r = sh.run(gather_args(inp, e2e.ref(out, "/g")) + ["--compression", "gzip=1"], rlimits={resource.RLIMIT_FSIZE: FILE_SIZE_LIMIT})
    e2e.expect_success(t.suite, r)
    e2e.same_array(t.suite, "g", e2e.read_h5(out, "/g"), expected, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def file_size_limit_below_mpis_own_files(t, sh):
    """A limit on the ranks (as Slurm's tasks get the submitting shell's; the launcher, whose
    own files are larger, has none) below the shared-memory segment Open MPI makes in MPI_Init
    with two or more ranks on a node: SIGXFSZ killed every rank there, exit 153 without a word.
    Ignored from before MPI starts, Open MPI says its segment failed and talks over TCP."""
    inp, expected = make_inputs(t.d, rows=64, index_rows=16)
    out = os.path.join(t.d, "out.h5")
    limited = ["bash", "-c", 'ulimit -f 2000 && exec "$0" "$@"', sh.binary]
    cmd = [sh.mpiexec, "-n", str(sh.np)] + sh.flags + limited + gather_args(inp, e2e.ref(out, "/g"))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=dict(sh.env, OMPI_MCA_btl="self,vader,tcp"))
    t.suite.check(p.returncode == 0, "exit %s, expected 0:\n%s" % (p.returncode, p.stderr[-2000:]))
    if p.returncode == 0:
        e2e.same_array(t.suite, "g", e2e.read_h5(out, "/g"), expected)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


# ---------------------------------------------------------------------------------------------
# Existing files: in place, bounded, all or nothing


def append_in_place(t, sh):
    """Adding a dataset keeps the file (same inode, no copy) and its datasets byte for byte."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "existing.h5")
    make_existing(out, size_rows=65536)
    with open(out, "rb") as f:
        old_bytes = f.read()
    ino = os.stat(out).st_ino
    r = sh.run(gather_args(inp, e2e.ref(out, "/new/g")))
    e2e.expect_success(t.suite, r)
    t.suite.check(os.stat(out).st_ino == ino, "the file was replaced, not added to", r)
    e2e.same_array(t.suite, "/new/g", e2e.read_h5(out, "/new/g"), expected, r)
    rng = np.random.default_rng(7)
    e2e.same_array(t.suite, "/keep/a", e2e.read_h5(out, "/keep/a"), rng.standard_normal((65536, 8)), r)
    e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64), r)
    with open(out, "rb") as f:
        new_bytes = f.read()
    t.suite.check(len(new_bytes) >= len(old_bytes), "the file shrank", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def no_room_kept_past_the_end(t, sh):
    """The room a job reserves past a file's end for HDF5's metadata is given back: a small
    new file, chunked or not, and one added to, take no more disk than their bytes need
    (each new file kept 1 MiB of blocks past its end)."""
    rows = os.path.join(t.d, "rows.h5")
    e2e.write_h5(rows, {"/x": np.arange(30, dtype=np.float32).reshape(10, 3),
                        "/i": np.array([[1], [3], [3]], dtype=np.int64)}, mode="w")

    def on_disk(path):
        return os.stat(path).st_blocks * 512 - os.path.getsize(path)

    args = ["gather-nd", "--params", e2e.ref(rows, "/x"), "--indices", e2e.ref(rows, "/i")]
    for name, extra in (("new.h5", []), ("chunked.h5", ["--chunk-rows", "2", "--compression", "gzip"])):
        out = os.path.join(t.d, name)
        r = sh.run(args + ["--out", e2e.ref(out, "/g"), "-q"] + extra)
        e2e.expect_success(t.suite, r)
        t.suite.check(on_disk(out) < 65536, "%s: %d bytes on disk past its %d bytes" %
                      (name, on_disk(out), os.path.getsize(out)), r)
        r = sh.run(args + ["--out", e2e.ref(out, "/h"), "-q"])
        e2e.expect_success(t.suite, r)
        t.suite.check(on_disk(out) < 65536, "%s, added to: %d bytes on disk past its %d bytes" %
                      (name, on_disk(out), os.path.getsize(out)), r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def overwrite_is_bounded(t, sh):
    """--overwrite of one dataset, again and again, does not grow the file each time."""
    inp, expected = make_inputs(t.d, index_rows=16384)  # 1 MB a time
    out = os.path.join(t.d, "over.h5")
    make_existing(out)
    sizes = []
    for _ in range(5):
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")) + ["--overwrite"])
        e2e.expect_success(t.suite, r)
        sizes.append(os.path.getsize(out))
    e2e.same_array(t.suite, "/g", e2e.read_h5(out, "/g"), expected)
    t.suite.check(sizes[-1] <= sizes[0] + (1 << 20) + 65536,
                  "the file grew from %d to %d bytes over 5 overwrites of a 1 MB dataset" % (sizes[0], sizes[-1]))
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def overwrite_partition_group(t, sh):
    """--overwrite of a group of partitions with fewer of them replaces the group: no
    partition of the earlier job is left (a reader walking the group gets this job's), the
    group lists them 0, 1, ... and datasets of other names in it stay, as does a numbered
    one that no shardops job wrote (the user's own "/g/7") or that another op wrote (a
    gather-nd's "/g/5")."""
    inp = os.path.join(t.d, "in.h5")
    data = np.arange(40, dtype=np.float32).reshape(10, 4)
    e2e.write_h5(inp, {"/d": data, "/p5": (np.arange(10) % 5).astype(np.int32),
                       "/p2": (np.arange(10) % 2).astype(np.int32), "/p10": np.arange(10, dtype=np.int32)},
                 mode="w")
    out = os.path.join(t.d, "parts.h5")

    def partition(ids, count, *more):
        return sh.run(["dynamic-partition", "--data", e2e.ref(inp, "/d"), "--partitions", e2e.ref(inp, ids),
                       "--num-partitions", str(count), "--out", e2e.ref(out, "/g"), "-q"] + list(more))

    e2e.expect_success(t.suite, partition("/p5", 5))
    e2e.write_h5(out, {"/g/notes": np.arange(3), "/g/7": np.arange(4)})
    e2e.write_h5(inp, {"/idx": np.array([[1], [4]], np.int64)})
    e2e.expect_success(t.suite, sh.run(["gather-nd", "--params", e2e.ref(inp, "/d"), "--indices", e2e.ref(inp, "/idx"),
                                        "--out", e2e.ref(out, "/g/5"), "--overwrite", "-q"]))
    r = partition("/p2", 2, "--overwrite")
    e2e.expect_success(t.suite, r)
    with e2e.h5py.File(out, "r") as f:
        members = list(f["/g"])
        got = [f["/g/%d" % p][...] for p in range(2) if "%d" % p in f["/g"]]
        gathered = f["/g/5"][...] if "5" in f["/g"] else None
    kept = ("notes", "7", "5")
    t.suite.check([m for m in members if m not in kept] == ["0", "1"] and all(k in members for k in kept),
                  "the group holds %s after an overwrite with 2 partitions" % members, r)
    t.suite.check(gathered is not None and np.array_equal(gathered, data[[1, 4]]), "the gather-nd output /g/5 changed", r)
    for p, rows in enumerate(got):
        e2e.same_array(t.suite, "/g/%d" % p, rows, data[np.arange(10) % 2 == p], r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)
    # More partitions than the group holds, among them the user's "7": the datasets replaced
    # (0, 1, 7) and those made anew are still listed 0, 1, 2, ... (a reader pairing the
    # group's members with partitions in order gets the right ones).
    r = partition("/p10", 10, "--overwrite")
    e2e.expect_success(t.suite, r)
    with e2e.h5py.File(out, "r") as f:
        members = list(f["/g"])
        got = [f["/g/%d" % p][...] for p in range(10)]
    t.suite.check([m for m in members if m != "notes"] == [str(p) for p in range(10)] and "notes" in members,
                  "the group lists %s after an overwrite with 10 partitions" % members, r)
    for p, rows in enumerate(got):
        e2e.same_array(t.suite, "/g/%d" % p, rows, data[p:p + 1], r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def overwrite_dimension_scale(t, sh):
    """--overwrite of a dataset that dimension scales tie to others (netCDF-4's coordinate
    variables, h5py's dims): a scale attached to a dataset, and a dataset with a scale
    attached, are refused (exit 2) with the file byte-identical, where replacing one left the
    other's references pointing at the deleted dataset; a scale attached to nothing is
    replaced as any dataset."""
    out = os.path.join(t.d, "dims.h5")
    with e2e.h5py.File(out, "w") as f:
        f["lat"] = np.arange(5, dtype=np.float32)
        f["lat"].make_scale("lat")
        f["temp"] = np.arange(10, dtype=np.float32).reshape(5, 2)
        f["temp"].dims[0].attach_scale(f["lat"])
        f["free"] = np.arange(5, dtype=np.float32)
        f["free"].make_scale("free")
        f["i"] = np.array([[4], [3], [2], [1], [0]], np.int64)
    before = e2e.file_state(out)

    def gather_into(name):
        return sh.run(["gather-nd", "--params", e2e.ref(out, "/lat"), "--indices", e2e.ref(out, "/i"),
                       "--out", e2e.ref(out, name), "--overwrite", "-q"])

    for name, why in (("/lat", "is a dimension scale"), ("/temp", "has dimension scales attached")):
        r = gather_into(name)
        t.suite.check(r.rc == 2 and why in r.stderr, "%s: exit %s, expected 2 saying it %s" % (name, r.rc, why), r)
        t.suite.check(e2e.file_state(out) == before, "%s: the file changed" % name, r)
    r = gather_into("/free")
    e2e.expect_success(t.suite, r)
    with e2e.h5py.File(out, "r") as f:
        t.suite.check(np.array_equal(f["free"][...], np.arange(5, dtype=np.float32)[::-1]), "/free was not replaced", r)
        t.suite.check(np.array_equal(f["temp"].dims[0][0][...], np.arange(5, dtype=np.float32)),
                      "temp's scale no longer reads as /lat", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def group_rewritten_while_stitched(t, sh):
    """A stitch of a partition group (--data F:/parts) paused after it counted the group's members,
    while another job writes the group anew with twice the partitions: the stitch read members of
    the new version against the old count and blamed the user (exit 2, "data[0].shape ... does
    not start with indices[0].shape"). It is exit 3 now, saying another job wrote the group: a
    retry reads one version."""
    inp = os.path.join(t.d, "in.h5")
    x = np.arange(64, dtype=np.float32).reshape(32, 2)
    p4, p8 = np.arange(32, dtype=np.int32) % 4, np.arange(32, dtype=np.int32) % 8
    pos = {"/pos4/%d" % k: np.flatnonzero(p4 == k).astype(np.int32) for k in range(4)}
    e2e.write_h5(inp, dict({"/x": x, "/p4": p4, "/p8": p8}, **pos), mode="w")
    groups = os.path.join(t.d, "g.h5")

    def partition(by, n):
        return sh.run(["dynamic-partition", "--data", e2e.ref(inp, "/x"), "--partitions", e2e.ref(inp, by),
                       "--num-partitions", str(n), "--out", e2e.ref(groups, "/parts"), "--overwrite", "-q"])

    e2e.expect_success(t.suite, partition("/p4", 4), "the 4 partitions")
    out = os.path.join(t.d, "o.h5")
    job = Job(sh, ["dynamic-stitch", "--indices", e2e.ref(inp, "/pos4"), "--data", e2e.ref(groups, "/parts"),
                   "--out", e2e.ref(out, "/s"), "-q"], sh.np, env={"SHARDOPS_TEST_PAUSE": "read:2"})
    reached = job.wait_for("test pause at read")
    r = partition("/p8", 8)
    rc = job.finish()
    stitched = job.result(rc)
    t.suite.require(reached, "the stitch never paused", stitched)
    e2e.expect_success(t.suite, r, "the 8 partitions")
    t.suite.check(rc == 3 and "was written by another job while this job read it" in stitched.stderr,
                  "the stitch of a group written meanwhile: exit %s" % rc, stitched)
    t.suite.check(not os.path.exists(out), "the stitch wrote its output", stitched)
    r = sh.run(["dynamic-stitch", "--indices", e2e.ref(inp, "/pos4"), "--data", e2e.ref(groups, "/parts"), "--out",
                e2e.ref(out, "/s"), "-q"])
    t.suite.check(r.rc == 2 and "must name as many datasets" in r.stderr, "the retry: exit %s" % r.rc, r)


def fewer_partitions_keep_dimension_scales(t, sh):
    """--overwrite of a partition group with fewer partitions deletes the partitions beyond the
    new number, but never one that dimension scales tie to others (a scale attached to a
    dataset, or a partition with a scale attached): exit 2, the file byte-identical, where the
    partition was deleted and the other dataset's references pointed at it, deleted."""
    out = os.path.join(t.d, "dimparts.h5")
    inp = os.path.join(t.d, "dimparts_in.h5")
    e2e.write_h5(inp, {"/x": np.arange(6, dtype=np.float32), "/p": np.array([0, 1, 2, 0, 1, 2], np.int32),
                       "/q": np.array([0, 1, 0, 1, 0, 1], np.int32)}, mode="w")

    def partition(by, n):
        return sh.run(["dynamic-partition", "--data", e2e.ref(inp, "/x"), "--partitions", e2e.ref(inp, by),
                       "--num-partitions", str(n), "--out", e2e.ref(out, "/parts"), "--overwrite", "-q"])

    for tie in ("scale of another dataset", "scale attached"):
        if os.path.exists(out):
            os.remove(out)
        e2e.expect_success(t.suite, partition("/p", 3))
        with e2e.h5py.File(out, "a") as f:
            if tie == "scale of another dataset":
                f["y"] = np.zeros(2, np.float32)
                f["parts/2"].make_scale("p2")
                f["y"].dims[0].attach_scale(f["parts/2"])
            else:
                f["lat"] = np.zeros(2, np.float32)
                f["lat"].make_scale("lat")
                f["parts/2"].dims[0].attach_scale(f["lat"])
        before = e2e.file_state(out)
        r = partition("/q", 2)
        t.suite.check(r.rc == 2 and "its partition '/parts/2', beyond the partitions this job writes" in r.stderr,
                      "%s: exit %s, expected 2 naming /parts/2" % (tie, r.rc), r)
        t.suite.check(e2e.file_state(out) == before, "%s: the file changed" % tie, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def damaged_existing_target(t, sh):
    """An existing target damaged before the job (its root group's B-tree key points past the
    group's name heap, where h5py still lists the group): HDF5 takes the added dataset, and
    the file can no longer show it. The job reads the file back before the commit: exit 3
    naming the damage, the file byte-identical, nothing left (it was exit 0, "wrote", and
    h5py could not open the new dataset)."""
    out = os.path.join(t.d, "damaged.h5")
    with e2e.h5py.File(out, "w") as f:
        f.create_dataset("x", data=np.arange(400, dtype=np.float32).reshape(100, 4), chunks=(10, 4),
                         compression="gzip")
        f["c"] = np.arange(40, dtype=np.float32).reshape(10, 4)
        f["i"] = np.array([[3], [7]], np.int64)
        f.create_group("g")["y"] = np.arange(8.0)
    with open(out, "rb") as fh:
        data = bytearray(fh.read())
    tree = data.find(b"TREE")  # the root group's B-tree: its first key, a heap offset, at +24
    data[tree + 28], data[tree + 29] = 110, 197
    with open(out, "wb") as fh:
        fh.write(data)
    before = e2e.file_state(out)
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/c": np.arange(40, dtype=np.float32).reshape(10, 4), "/i": np.array([[3], [7]], np.int64)},
                 mode="w")
    r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/c"), "--indices", e2e.ref(inp, "/i"), "--out",
                e2e.ref(out, "/new"), "-q"])
    t.suite.check(r.rc == 3 and "cannot read the file back" in r.stderr and "damaged" in r.stderr,
                  "exit %s, expected 3 naming the damage" % r.rc, r)
    t.suite.check(e2e.file_state(out) == before, "the damaged file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def refused_overwrite_keeps_file(t, sh):
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "existing.h5")
    before = make_existing(out)
    r = sh.run(gather_args(inp, e2e.ref(out, "/b")))
    t.suite.check(r.rc == 2, "exit %s, expected 2" % r.rc, r)
    t.suite.check("--overwrite" in r.stderr, "the message does not suggest --overwrite", r)
    t.suite.check(e2e.file_state(out) == before, "the file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def acl_of(path):
    """getfacl's entries of path (without its name): what a user of the folder may do with it."""
    out = subprocess.run(["getfacl", "-c", "-p", path], capture_output=True, text=True, check=True).stdout
    return sorted(line for line in out.splitlines() if line.strip())


def permissions_as_h5py_gives(t, sh):
    """A new output and its report get the permissions of a file that h5py or Python makes in
    their folder. In a folder with a default ACL giving the group rw, Open MPI's new file had
    group r-- (it creates with 0666 less the umask as its mode, where the kernel ignores the
    umask), and the report 0644 always; under umask 002 and 077 the modes match as well."""
    inp, _ = make_inputs(t.d)
    shared = os.path.join(t.d, "shared")
    os.mkdir(shared)
    subprocess.run(["setfacl", "-d", "-m", "u::rw,g::rw,o::r", shared], check=True)
    for folder, mask in ((shared, 0o022), (t.d, 0o002), (t.d, 0o077)):
        old = os.umask(mask)
        try:
            out = os.path.join(folder, "out-%03o.h5" % mask)
            report = os.path.join(folder, "report-%03o.json" % mask)
            r = sh.run(gather_args(inp, e2e.ref(out, "/g")) + ["--report", report])
            made = os.path.join(folder, "h5py-%03o.h5" % mask)
            e2e.h5py.File(made, "w").close()
            python_made = os.path.join(folder, "python-%03o.json" % mask)
            with open(python_made, "w") as f:
                f.write("{}")
        finally:
            os.umask(old)
        if not t.suite.check(r.rc == 0, "exit %s under umask %03o" % (r.rc, mask), r):
            continue
        for got_path, want_path in ((out, made), (report, python_made)):
            want, got = stat.S_IMODE(os.stat(want_path).st_mode), stat.S_IMODE(os.stat(got_path).st_mode)
            t.suite.check(got == want, "umask %03o: %s has mode %03o, %s %03o" % (mask, got_path, got, want_path, want),
                          r)
            t.suite.check(acl_of(got_path) == acl_of(want_path), "umask %03o: %s has the ACL %s, %s %s" %
                          (mask, got_path, acl_of(got_path), want_path, acl_of(want_path)), r)
    t.suite.check(leftovers(t.d) == [] and leftovers(shared) == [], "left %s" % leftovers(shared))


def hard_linked_target(t, sh):
    """An existing target with a second name (a hard link): two jobs writing it under the two
    names took a lock each and wrote the file at once (datasets lost or wrong, the file left
    unreadable). Refused under either name, exit 3, the file as it was; a new file and a file
    with one name are written as usual."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "existing.h5")
    before = make_existing(out)
    other = os.path.join(t.d, "other_name.h5")
    os.link(out, other)
    for name in (out, other):
        r = sh.run(gather_args(inp, e2e.ref(name, "/g")))
        t.suite.check(r.rc == 3, "%s: exit %s, expected 3" % (name, r.rc), r)
        t.suite.check("has 2 names (hard links)" in r.stderr, "the message does not say why", r)
        t.suite.check(e2e.file_state(out) == before, "the file changed", r)
    os.remove(other)
    r = sh.run(gather_args(inp, e2e.ref(out, "/g")))
    e2e.expect_success(t.suite, r)
    e2e.same_array(t.suite, "g", e2e.read_h5(out, "/g"), expected, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


# ---------------------------------------------------------------------------------------------
# Concurrent writers


def concurrent_writers(t, sh, existing):
    """Two jobs add different datasets to one file at overlapping times: both are kept."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "shared.h5")
    if existing:
        make_existing(out)
    elif os.path.exists(out):
        os.remove(out)
    # The first pauses at the start of its commit, holding the lock, while the second starts.
    first = Job(sh, gather_args(inp, e2e.ref(out, "/one")), sh.np, env={"SHARDOPS_TEST_PAUSE": "commit:1.5"})
    t.suite.require(first.wait_for("test pause at commit"), "the first job never reached its commit",
                    first.result(first.finish()))
    second = Job(sh, gather_args(inp, e2e.ref(out, "/two")), 1)
    rc1, rc2 = first.finish(), second.finish()
    t.suite.check(rc1 == 0, "the first job exited %s" % rc1, first.result(rc1))
    t.suite.check(rc2 == 0, "the second job exited %s" % rc2, second.result(rc2))
    for name in ("/one", "/two"):
        e2e.same_array(t.suite, name, e2e.read_h5(out, name), expected)
    if existing:
        e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64))
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def updates_in_place_at_once(t, sh, rows, how):
    """Jobs that add into one dataset in place at the same time (`tensor-scatter-add --tensor
    acc.h5:/acc … --out acc.h5:/acc --overwrite`, or a deck doing the same): each read acc
    before any wrote it (all paused at the start of their write phase). One commits; the
    others fail with exit 3 ("run the job again") instead of each committing its sum over the
    same old acc, all exiting 0 with all but one update lost. rows: 1000 (copied into memory)
    or 100000 (mapped from the file's pages, which was checked already)."""
    jobs = 3
    acc = os.path.join(t.d, "acc.h5")
    upd = os.path.join(t.d, "one.h5")
    e2e.write_h5(acc, {"/acc": np.zeros((rows, 4), np.float32)}, mode="w")
    e2e.write_h5(upd, {"/i": np.arange(rows, dtype=np.int64).reshape(-1, 1), "/u": np.ones((rows, 4), np.float32)},
                 mode="w")
    if how == "op":
        argv = ["tensor-scatter-add", "--tensor", e2e.ref(acc, "/acc"), "--indices", e2e.ref(upd, "/i"),
                "--updates", e2e.ref(upd, "/u"), "--out", e2e.ref(acc, "/acc"), "--overwrite", "-q"]
    else:
        deck = os.path.join(t.d, "add.yaml")
        with open(deck, "w") as f:
            f.write("tensors:\n  acc: %s\nsteps:\n  - {op: add, x: acc, y: 1.0, out: sum}\n"
                    "outputs:\n  sum: %s\n" % (e2e.ref(acc, "/acc"), e2e.ref(acc, "/acc")))
        argv = ["run", deck, "--overwrite", "-q"]
    started = [Job(sh, argv, sh.np, env={"SHARDOPS_TEST_PAUSE": "write:2"}) for _ in range(jobs)]
    for j in started:
        t.suite.require(j.wait_for("test pause at write"), "a job never reached its write", j.result(j.finish()))
    codes = [j.finish() for j in started]
    for j, rc in zip(started, codes):
        t.suite.check(rc in (0, 3), "a job exited %s" % rc, j.result(rc))
        if rc == 3:
            t.suite.check("run the job again" in j.err.decode(errors="replace"), "exit 3 without saying why",
                          j.result(rc))
    ok = codes.count(0)
    t.suite.check(ok >= 1, "no job committed: %s" % codes)
    got = e2e.read_h5(acc, "/acc")
    t.suite.check(np.all(got == np.float32(ok)), "%d jobs exited 0 but acc holds %s: updates lost" %
                  (ok, np.unique(got)))
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def decks_writing_two_files_in_opposite_orders(t, sh):
    """Two decks write a.h5 and b.h5, one naming a.h5 first, the other b.h5: each took the lock
    of its first file, then waited for the other's until the lock timeout (exit 3, naming a
    holder that was itself waiting). The locks are taken in one order: both commit."""
    inp, expected = make_inputs(t.d)
    a, b = os.path.join(t.d, "a.h5"), os.path.join(t.d, "b.h5")
    for path in (a, b):
        make_existing(path)  # written in place: each job pauses there holding its first file's lock
    decks = []
    for name, first, second in (("ab", a, b), ("ba", b, a)):
        deck = os.path.join(t.d, name + ".yaml")
        with open(deck, "w") as f:
            f.write("tensors:\n  params: %s\n  idx: %s\n" % (e2e.ref(inp, "/params"), e2e.ref(inp, "/idx")))
            f.write("steps:\n  - {op: gather_nd, params: params, indices: idx, out: g}\n"
                    "  - {op: gather_nd, params: params, indices: idx, out: g_too}\n")
            f.write("outputs:\n  g: %s\n  g_too: %s\n" % (e2e.ref(first, "/" + name), e2e.ref(second, "/" + name)))
        decks.append(deck)
    env = {"SHARDOPS_TEST_PAUSE": "in-place:1.5", "SHARDOPS_LOCK_TIMEOUT": "20"}
    t0 = time.monotonic()
    started = [Job(sh, ["run", deck, "-q"], sh.np, env=env) for deck in decks]
    codes = [j.finish(timeout=90) for j in started]
    seconds = time.monotonic() - t0
    for j, rc in zip(started, codes):
        t.suite.check(rc == 0, "a deck exited %s" % rc, j.result(rc, seconds))
    t.suite.check(seconds < 20, "the decks took %.1f s: one waited for the lock timeout" % seconds)
    if codes == [0, 0]:
        for path in (a, b):
            for name in ("/ab", "/ba"):
                e2e.same_array(t.suite, path + ":" + name, e2e.read_h5(path, name), expected)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def open_in_another_program(t, sh):
    """A target h5py holds open (HDF5's file lock): exit 3 before any work, the file unchanged."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "open.h5")
    before = make_existing(out)
    with e2e.h5py.File(out, "r"):
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")))
    t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
    t.suite.check("open in another program" in r.stderr, "the message does not say why", r)
    t.suite.check(e2e.file_state(out) == before, "the file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def lock_timeout(t, sh):
    """A writer that holds the file longer than SHARDOPS_LOCK_TIMEOUT: exit 3 naming it."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "held.h5")
    before = make_existing(out)
    lock_path = os.path.join(t.d, ".held.h5.shardops-lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"the test's pid %d\n" % os.getpid())
        t0 = time.monotonic()
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")), env={"SHARDOPS_LOCK_TIMEOUT": "1"})
        t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
        t.suite.check("being written by the test's pid" in r.stderr, "the message does not name the holder", r)
        t.suite.check(time.monotonic() - t0 < 20, "waited far longer than the timeout", r)
        t.suite.check(e2e.file_state(out) == before, "the file changed", r)
        t.suite.check(leftovers(t.d) == [".held.h5.shardops-lock"], "left %s" % leftovers(t.d), r)
        # -v says what the job waits for (it showed only a slow write phase).
        r = sh.run(gather_args(inp, e2e.ref(out, "/g"))[:-1] + ["-v"], env={"SHARDOPS_LOCK_TIMEOUT": "2"})
        t.suite.check(r.rc == 3, "with -v: exit %s, expected 3" % r.rc, r)
        t.suite.check("waiting for '%s', which the test's pid" % os.path.realpath(out) in r.stderr,
                      "-v does not say what the job waits for", r)
    finally:
        os.unlink(lock_path)
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# Reading a file that another program writes


def reader_waits_for_writer(t, sh):
    """A job reading a file that another job is writing waits for its commit, then reads the new state."""
    inp, v2 = make_inputs(t.d)  # the writer's /p: the gather of in.h5 (2048 rows)
    shared = os.path.join(t.d, "shared.h5")
    e2e.write_h5(shared, {"/p": np.zeros_like(v2), "/b": np.arange(100, dtype=np.int64)}, mode="w")
    idx = np.arange(v2.shape[0] - 1, -1, -3, dtype=np.int64).reshape(-1, 1)
    e2e.write_h5(os.path.join(t.d, "idx.h5"), {"/i": idx}, mode="w")
    writer = Job(sh, gather_args(inp, e2e.ref(shared, "/p")) + ["--overwrite"], sh.np,
                 env={"SHARDOPS_TEST_PAUSE": "commit:2"})
    t.suite.require(writer.wait_for("test pause at commit"), "the writer never reached its commit",
                    writer.result(writer.finish()))
    out = os.path.join(t.d, "read.h5")
    reader = Job(sh, ["gather-nd", "--params", e2e.ref(shared, "/p"), "--indices",
                      e2e.ref(os.path.join(t.d, "idx.h5"), "/i"), "--out", e2e.ref(out, "/g"), "-q"], sh.np)
    rc_reader = reader.finish()
    rc_writer = writer.finish()
    t.suite.check(rc_writer == 0, "the writer exited %s" % rc_writer, writer.result(rc_writer))
    t.suite.check(rc_reader == 0, "the reader exited %s" % rc_reader, reader.result(rc_reader))
    if rc_reader == 0:
        e2e.same_array(t.suite, "the reader's output (the writer's /p)", e2e.read_h5(out, "/g"), v2[idx[:, 0]])
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def reader_lock_timeout(t, sh):
    """An input that a job holds for writing longer than SHARDOPS_LOCK_TIMEOUT: exit 3 naming the
    holder, nothing written."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "out.h5")
    lock_path = os.path.join(t.d, ".in.h5.shardops-lock")
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    data = os.open(inp, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.write(lock, b"the test's pid %d\n" % os.getpid())
        fcntl.flock(data, fcntl.LOCK_EX)  # HDF5's lock, as a writer holds it
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")), env={"SHARDOPS_LOCK_TIMEOUT": "1"})
        t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
        t.suite.check("is being written by the test's pid" in r.stderr, "the message does not name the holder", r)
        t.suite.check(not os.path.exists(out), "an output was written", r)
    finally:
        os.unlink(lock_path)
        os.close(data)
        os.close(lock)


def input_changed_while_read(t, sh, how):
    """The input file changes while the job uses its rows (mapped from the file until the
    commit). appended: another program adds a dataset: no harm, the job succeeds. overwritten:
    another job writes the dataset read anew (HDF5 puts it in the old one's place): exit 3,
    nothing written. read_twice: the same, where the job also read a few rows of that dataset
    into memory (which must not end the watch on the rows still mapped). appended_through_link:
    appended, the params read through an external link into their own file (the check of the
    changed file took that dataset for removed)."""
    # 4 MiB of params: mapped, read until the commit; 256 KiB (read_in_memory): read at once
    rows = 1 << 12 if how == "read_in_memory" else 1 << 16
    inp, expected = make_inputs(t.d, rows=rows)
    out = os.path.join(t.d, "out.h5")
    before = make_existing(out)
    argv = gather_args(inp, e2e.ref(out, "/g"))
    if how == "appended_through_link":
        with e2e.h5py.File(inp, "a") as f:
            f["own"] = e2e.h5py.ExternalLink(os.path.basename(inp), "/params")
        argv[argv.index("--params") + 1] = e2e.ref(inp, "/own")
        how = "appended"
    if how == "read_twice":
        # The params' first rows scattered back where they are: the output is the params.
        first = 64
        e2e.write_h5(os.path.join(t.d, "first.h5"), {"/i": np.arange(first, dtype=np.int64).reshape(-1, 1)}, mode="w")
        argv = ["tensor-scatter-update", "--tensor", e2e.ref(inp, "/params"), "--indices",
                e2e.ref(os.path.join(t.d, "first.h5"), "/i"), "--updates", e2e.ref(inp, "/params") + "[0:%d]" % first,
                "--out", e2e.ref(out, "/g"), "-q"]
        how = "overwritten"
    job = Job(sh, argv, sh.np, env={"SHARDOPS_TEST_PAUSE": "write:2"})
    reached = job.wait_for("test pause at write", count=sh.np)
    held = None
    if reached and how == "appended":
        e2e.write_h5(inp, {"/added": np.arange(10)})
    elif reached and how == "written_in_place":
        held = e2e.h5py.File(inp, "r+")  # h5py writes a row where it lies, and keeps the file open
        held["/params"][0] = np.full(held["/params"].shape[1], 99, np.float32)
        held.flush()
    elif reached:
        e2e.write_h5(os.path.join(t.d, "reverse.h5"),
                     {"/i": np.arange(rows - 1, -1, -1, dtype=np.int64).reshape(-1, 1)}, mode="w")
        other = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices",
                        e2e.ref(os.path.join(t.d, "reverse.h5"), "/i"), "--out", e2e.ref(inp, "/params"),
                        "--overwrite", "-q"], np=1)
        e2e.expect_success(t.suite, other)
    try:
        rc = job.finish()
    finally:
        if held is not None:
            held.close()
    r = job.result(rc)
    t.suite.require(reached, "the job never reached its write phase", r)
    if how == "written_in_place":
        t.suite.check(rc == 3, "exit %s, expected 3" % rc, r)
        t.suite.check("is open for writing in another program" in r.stderr, "the message does not say why", r)
        t.suite.check(e2e.file_state(out) == before, "the output file changed", r)
    elif how in ("appended", "read_in_memory"):
        e2e.expect_success(t.suite, r)
        if rc == 0:
            e2e.same_array(t.suite, "/g", e2e.read_h5(out, "/g"), expected, r)
    else:
        t.suite.check(rc == 3, "exit %s, expected 3" % rc, r)
        t.suite.check("'%s:/params' was written anew" % inp in r.stderr, "the message does not say why", r)
        t.suite.check(e2e.file_state(out) == before, "the output file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def adding_to_the_file_read(t, sh):
    """Two jobs read one file and add a dataset each to it, at overlapping times: both succeed."""
    inp, expected = make_inputs(t.d, rows=1 << 16)
    first = Job(sh, gather_args(inp, e2e.ref(inp, "/one")), sh.np, env={"SHARDOPS_TEST_PAUSE": "write:1.5"})
    t.suite.require(first.wait_for("test pause at write", count=sh.np), "the first job never reached its write phase",
                    first.result(first.finish()))
    second = sh.run(gather_args(inp, e2e.ref(inp, "/two")))
    rc = first.finish()
    e2e.expect_success(t.suite, second)
    e2e.expect_success(t.suite, first.result(rc))
    for name in ("/one", "/two"):
        e2e.same_array(t.suite, name, e2e.read_h5(inp, name), expected)
    with e2e.h5py.File(inp, "r") as f:
        comments = [f.id.get_comment(name.encode()).decode() for name in ("/one", "/two")]
        attributes = [dict(f[name].attrs) for name in ("/one", "/two")]
    # Each job's datasets say which job wrote them; their attributes do not change from job to job.
    t.suite.check(all(c.startswith("shardops: written ") for c in comments) and comments[0] != comments[1],
                  "the datasets' comments do not tell the jobs apart: %r" % comments)
    t.suite.check(str(attributes[0]) == str(attributes[1]), "the attributes differ: %r" % attributes)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def input_open_for_writing(t, sh):
    """An input h5py holds open for writing is not read (HDF5's rule); one held for reading is."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "out.h5")
    with e2e.h5py.File(inp, "r+"):
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")))
        t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
        t.suite.check("is open for writing in another program" in r.stderr, "the message does not say why", r)
        t.suite.check(not os.path.exists(out), "an output was written", r)
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")), env={"HDF5_USE_FILE_LOCKING": "FALSE"})
        t.suite.check(r.rc == 0, "with HDF5_USE_FILE_LOCKING=FALSE: exit %s" % r.rc, r)
    os.remove(out)
    with e2e.h5py.File(inp, "r"):
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")))
        t.suite.check(r.rc == 0, "held for reading: exit %s" % r.rc, r)
    if r.rc == 0:
        e2e.same_array(t.suite, "/g", e2e.read_h5(out, "/g"), expected)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def input_reached_deeper_open_for_writing(t, sh):
    """A file an input reaches two steps away (the middle of a chain of external links, the
    source of a virtual dataset's source, the file a virtual source's external link leads to)
    is an input too: held open for writing by h5py it is exit 3, as one step away already was
    (the job read it and exited 0)."""
    inp, expected = make_inputs(t.d)
    path = lambda name: os.path.join(t.d, name)
    with e2e.h5py.File(inp, "r") as f:
        params = f["params"][()]
    with e2e.h5py.File(path("leaf2.h5"), "w") as f:
        f["x"] = params
    with e2e.h5py.File(path("leaf.h5"), "w") as f:
        f["el"] = e2e.h5py.ExternalLink("leaf2.h5", "/x")
    with e2e.h5py.File(path("b.h5"), "w") as f:
        f["y"] = e2e.h5py.ExternalLink("leaf2.h5", "/x")
    with e2e.h5py.File(path("a.h5"), "w") as f:
        f["chain"] = e2e.h5py.ExternalLink("b.h5", "/y")

    def virtual(file, name, source_file, source_name):
        with e2e.h5py.File(path(file), "a") as f:
            layout = e2e.h5py.VirtualLayout(params.shape, params.dtype)
            layout[:] = e2e.h5py.VirtualSource(source_file, source_name, shape=params.shape)
            f.create_virtual_dataset(name, layout)

    virtual("mid.h5", "vl", "leaf.h5", "el")
    virtual("vv1.h5", "v1", "leaf2.h5", "x")
    virtual("vv.h5", "v2", "vv1.h5", "v1")
    out = path("out.h5")
    for source, held in (("a.h5:/chain", "b.h5"), ("mid.h5:/vl", "leaf2.h5"), ("vv.h5:/v2", "leaf2.h5")):
        file, dataset = source.split(":")
        argv = ["gather-nd", "--params", e2e.ref(path(file), dataset), "--indices", e2e.ref(inp, "/idx"), "--out",
                e2e.ref(out, "/g"), "-q"]
        with e2e.h5py.File(path(held), "r+"):
            r = sh.run(argv)
            t.suite.check(r.rc == 3, "%s with %s open for writing: exit %s, expected 3" % (source, held, r.rc), r)
            t.suite.check("is open for writing in another program" in r.stderr,
                          "%s: the message does not say why" % source, r)
            t.suite.check(not os.path.exists(out), "%s: an output was written" % source, r)
        r = sh.run(argv)
        t.suite.check(r.rc == 0, "%s, nothing held: exit %s" % (source, r.rc), r)
        if r.rc == 0:
            e2e.same_array(t.suite, source, e2e.read_h5(out, "/g"), expected)
            os.remove(out)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def input_of_a_killed_writer(t, sh):
    """A file whose h5py writer (libver='latest': the superblock that carries HDF5's write
    flag) was killed half way through a write is not read, as HDF5 refuses it: exit 3 saying
    why (it read a mix of old and new rows and exited 0); an SWMR writer's file alike. Nor is
    either written into, saying why (it said "truncated or corrupt file, or open in another
    program?"), the file left as it was."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "out.h5")
    script = ("import os, sys, h5py, numpy as np\n"
              "f = h5py.File(sys.argv[1], 'w', libver='latest')\n"
              "d = f.create_dataset('x', data=np.ones((20000, 4), np.float32))\n"
              "f.flush()\n"
              "if sys.argv[2] == 'swmr':\n"
              "    f.swmr_mode = True\n"
              "d[:] = 2.0\n"
              "os.kill(os.getpid(), 9)\n")
    # Read directly, through an external link from another file, and with HDF5's file
    # locking off (HDF5 refuses the file either way; the link skipped every check).
    linking = os.path.join(t.d, "linking.h5")
    for how in ("killed", "swmr"):
        crashed = os.path.join(t.d, how + ".h5")
        subprocess.run([sys.executable, "-c", script, crashed, how], capture_output=True, timeout=60)
        with e2e.h5py.File(linking, "a") as f:
            f[how] = e2e.h5py.ExternalLink(os.path.basename(crashed), "/x")
        for params, env in ((e2e.ref(crashed, "/x"), None), (e2e.ref(linking, "/" + how), None),
                            (e2e.ref(crashed, "/x"), {"HDF5_USE_FILE_LOCKING": "FALSE"})):
            argv = ["gather-nd", "--params", params, "--indices", e2e.ref(inp, "/idx"), "--out", e2e.ref(out, "/g"),
                    "-q"]
            r = sh.run(argv, env=env)
            t.suite.check(r.rc == 3, "%s writer, %s %s: exit %s, expected 3" % (how, params, env or "", r.rc), r)
            t.suite.check("marked as open for writing by an HDF5 program" in r.stderr, "the message does not say why",
                          r)
            t.suite.check(not os.path.exists(out), "an output was written", r)
        before = e2e.file_state(crashed)
        r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"), "--out",
                    e2e.ref(crashed, "/g"), "-q"])
        t.suite.check(r.rc == 3, "%s writer's file as the output: exit %s, expected 3" % (how, r.rc), r)
        t.suite.check("the existing output file" in r.stderr and "marked as open for writing by an HDF5 program" in
                      r.stderr, "%s writer's file as the output: the message does not say why" % how, r)
        t.suite.check(e2e.file_state(crashed) == before, "%s writer's file changed" % how, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def file_of_short_addresses(t, sh):
    """An existing file made with 2-byte addresses (H5Pset_sizes: room for 64 KiB of file)
    that the job's output would take past that: exit 3 saying so, the file as it was (the
    message blamed damage done before the job)."""
    out = os.path.join(t.d, "short.h5")
    fcpl = e2e.h5py.h5p.create(e2e.h5py.h5p.FILE_CREATE)
    fcpl.set_sizes(2, 2)
    fid = e2e.h5py.h5f.create(out.encode(), e2e.h5py.h5f.ACC_TRUNC, fcpl=fcpl)
    with e2e.h5py.File(fid) as f:
        f["pad"] = np.zeros(7000)
        f["idx"] = np.array([[0], [1]], np.int64)
        f["upd"] = np.ones((2, 1))
    before = e2e.file_state(out)
    r = sh.run(["scatter-nd", "--indices", e2e.ref(out, "/idx"), "--updates", e2e.ref(out, "/upd"), "--shape",
                "1000,1", "--out", e2e.ref(out, "/o"), "-q"])
    t.suite.check(r.rc == 3, "exit %s, expected 3" % r.rc, r)
    t.suite.check("stores its addresses in 2 bytes, room for 65536 bytes of file" in r.stderr,
                  "the message does not name the short addresses", r)
    t.suite.check(e2e.file_state(out) == before, "the file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


# ---------------------------------------------------------------------------------------------
# Signals and kills


def stopped_in_phase(t, sh, phase, sig, whom):
    """A stop signal in each phase: no leftovers, the target as it was (or complete, after the commit)."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    before = make_existing(out)
    pause = "0.4" if phase == "commit" else "5"
    env = {"SHARDOPS_TEST_PAUSE": "%s:%s" % (phase, pause)}
    if phase == "apply":
        # A streamed output's rows are made in the write phase: the op's own apply phase
        # is the one of an output held whole.
        env["SHARDOPS_STREAM_OUTPUTS"] = "0"
    job = Job(sh, gather_args(inp, e2e.ref(out, "/g")), sh.np, env=env)
    reached = job.wait_for("test pause at " + phase, count=sh.np)  # every rank is in it
    if not reached:
        rc = job.finish()
        t.suite.require(False, "the job never reached its %s phase" % phase, job.result(rc))
    t0 = time.monotonic()
    if whom == "mpirun":
        os.kill(job.proc.pid, sig)
    else:
        for pid in job.ranks():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
    rc = job.finish(timeout=30)
    took = time.monotonic() - t0
    r = job.result(rc, took)
    t.suite.require(rc is not None, "the job did not end after %s" % sig.name, r)
    t.suite.check(took < 4.0, "the job took %.1f s to end after %s" % (took, sig.name), r)
    t.suite.check(rc != 0, "the stopped job exited 0", r)
    # mpirun may end before it has passed on the ranks' last line: the message is checked
    # where the signal goes to the ranks; the files are checked always.
    after_commit = "after the commit" in r.stderr
    if whom == "ranks":
        if phase == "commit":
            t.suite.check(after_commit, "a signal during the commit should let it finish and say so", r)
        else:
            t.suite.check("nothing was committed" in r.stderr, "the message does not say nothing was committed", r)
    if whom == "mpirun" and leftovers(t.d) and not after_commit:
        # Open MPI's mpirun sends the ranks SIGCONT at once, SIGTERM a second later and
        # SIGKILL a few milliseconds after that: a handler may not get to its end. What it
        # leaves is what SIGKILL leaves, and the next job writing there must clean it up.
        r2 = sh.run(gather_args(inp, e2e.ref(out, "/next")))
        e2e.expect_success(t.suite, r2, "the next job")
        with e2e.h5py.File(out, "r") as f:
            t.suite.check("g" not in f, "the stopped job's dataset is in the file", r2)
        e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64), r2)
        t.suite.check(leftovers(t.d) == [], "the next job left %s" % leftovers(t.d), r2)
        return
    if after_commit or (phase == "commit" and e2e.file_state(out) != before):
        e2e.same_array(t.suite, "/g", e2e.read_h5(out, "/g"), expected, r)
        e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64), r)
    else:
        t.suite.check(e2e.file_state(out) == before, "the target changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)
    if whom == "ranks":
        t.suite.check("shardops: stopped by SIG" in r.stderr, "no message says the job was stopped", r)
        # mpirun reports the first rank's code; sent through mpirun, every rank gets SIGTERM
        # and mpirun itself exits 1.
        t.suite.check(("exit code %d" % STOP_CODES[sig]) in r.stderr or rc == STOP_CODES[sig],
                      "no rank exited %d for %s" % (STOP_CODES[sig], sig.name), r)


def sigpipe_is_ignored(t, sh):
    """SIGPIPE (what a write to a closed pipe raises, `… | head`) does not stop a job."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    job = Job(sh, gather_args(inp, e2e.ref(out, "/g")), sh.np, env={"SHARDOPS_TEST_PAUSE": "write:1"})
    reached = job.wait_for("test pause at write", count=sh.np)
    for pid in job.ranks() if reached else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGPIPE)
    rc = job.finish(timeout=30)
    r = job.result(rc)
    t.suite.require(reached, "the job never reached its write phase", r)
    t.suite.check(rc == 0, "exit %s after SIGPIPE, expected 0" % rc, r)
    if rc == 0:
        e2e.same_array(t.suite, "/g", e2e.read_h5(out, "/g"), expected, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


# The longest name a file may have (255 bytes): the hidden files beside it take a shorter stem.
LONGEST_NAME = "n" * 252 + ".h5"


def long_file_names(t, sh):
    """Inputs and outputs whose names are 236-255 bytes, through MPI-IO: Open MPI's lockedfile
    shared-file-pointer component aborted the process on such paths, its sm component failed
    to open names of about 240 bytes; both are left out before MPI starts."""
    for length in (236, 241, 242, 243, 255):
        inp = os.path.join(t.d, "i" * (length - 3) + ".h5")
        out = os.path.join(t.d, "o" * (length - 3) + ".h5")
        x = np.arange(40, dtype=np.float32).reshape(10, 4)
        e2e.write_h5(inp, {"/x": x, "/i": np.array([[3], [0]], np.int64)}, mode="w")
        r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/x"), "--indices", e2e.ref(inp, "/i"), "--out",
                    e2e.ref(out, "/g"), "-q"])
        e2e.expect_success(t.suite, r, "names of %d bytes" % length)
        if r.rc == 0:
            e2e.same_array(t.suite, "/g (%d bytes)" % length, e2e.read_h5(out, "/g"), x[[3, 0]], r)
        os.remove(inp)
        with contextlib.suppress(FileNotFoundError):
            os.remove(out)
    t.suite.check(leftovers(t.d) == [] and os.listdir(t.d) == [], "left %s" % os.listdir(t.d))


def job_reading(t, sh, params, index_rows):
    """A job that only reads rows `index_rows` of `params` (FILE:/dataset); its result, checked
    to have exited 0."""
    rows = os.path.join(t.d, "rows.h5")
    e2e.write_h5(rows, {"/i": np.array(index_rows, dtype=np.int64).reshape(-1, 1)}, mode="w")
    r = sh.run(["gather-nd", "--params", params, "--indices", e2e.ref(rows, "/i"), "--out", e2e.ref(rows, "/r"),
                "-q"])
    e2e.expect_success(t.suite, r, "a job reading the file")
    return r


def killed_then_cleaned(t, sh, where, name="target.h5"):
    """SIGKILL of a rank at the worst moments; the next job writing there cleans up."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, name)
    before = make_existing(out)
    kill_at(t, sh, gather_args(inp, e2e.ref(out, "/g")), where, 1)
    # A job that only reads the file first: it reads the file as it was, the killed job's
    # change undone (a reader used to read it changed, or, mid-journal, not as HDF5 at all).
    r = job_reading(t, sh, e2e.ref(out, "/keep/a"), [0, 5, 1023])
    t.suite.check(e2e.file_state(out) == before, "the file a job read is not as it was before the killed job", r)
    r = sh.run(gather_args(inp, e2e.ref(out, "/next")))
    e2e.expect_success(t.suite, r, "the next job")
    e2e.same_array(t.suite, "/next", e2e.read_h5(out, "/next"), expected, r)
    with e2e.h5py.File(out, "r") as f:
        t.suite.check("g" not in f, "the killed job's dataset is in the file: its commit was not undone", r)
    e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64), r)
    rng = np.random.default_rng(7)
    e2e.same_array(t.suite, "/keep/a", e2e.read_h5(out, "/keep/a"), rng.standard_normal((1024, 8)), r)
    t.suite.check(leftovers(t.d) == [], "the next job left %s" % leftovers(t.d), r)
    del before


FNV_OFFSET, FNV_PRIME = 1469598103934665603, 1099511628211


def fnv1a(data, h=FNV_OFFSET):
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


_XXHASH = []


def xxh3_64(data):
    """XXH3-64 of `data`, from the xxHash library that `scripts/setup.sh` installs."""
    if not _XXHASH:
        lib = ctypes.CDLL("libxxhash.so.0")
        lib.XXH3_64bits.restype = ctypes.c_uint64
        lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        _XXHASH.append(lib.XXH3_64bits)
    return _XXHASH[0](data, len(data))


def journal_records(raw, at):
    """[(address, body)] of a journal's records from offset `at`, each checked against the
    XXH3-64 that version 3 seals it with (body: the address, the length and the bytes)."""
    records = []
    while at < len(raw):
        addr, length = struct.unpack_from("<QQ", raw, at)
        body = raw[at:at + 16 + length]
        (sealed,) = struct.unpack_from("<Q", raw, at + 16 + length)
        if sealed != xxh3_64(body):
            raise AssertionError("record at %d: XXH3-64 %x, sealed %x" % (at, xxh3_64(body), sealed))
        records.append((addr, body))
        at += 16 + length + 8
    return records


def as_earlier_journal(raw, version):
    """A journal of this shardops (version 3) written again as an earlier shardops wrote it:
    version 2 (the same header, records sealed with FNV-1a) or version 1 (no fingerprint of
    the file's head, so no record of a complete change either)."""
    if raw[:8] != b"SHOPJRN3":
        raise AssertionError("the journal starts with %r, not version 3's magic" % raw[:8])
    device, inode, length, head_length, head_hash, checksum = struct.unpack_from("<6Q", raw, 8)
    if checksum != fnv1a(raw[:48]):
        raise AssertionError("the journal's header checksum does not match")
    records = journal_records(raw, 56)
    if version == 2:
        head = b"SHOPJRN2" + struct.pack("<5Q", device, inode, length, head_length, head_hash)
    else:
        head = b"SHOPJRN1" + struct.pack("<3Q", device, inode, length)
        records = [r for r in records if r[0] != 0xFFFFFFFFFFFFFFFF]
    out = head + struct.pack("<Q", fnv1a(head))
    for _, body in records:
        out += body + struct.pack("<Q", fnv1a(body))
    return out


def killed_leaving_an_earlier_journal(t, sh, version):
    """A job killed mid-commit under an earlier shardops left its journal in that version's
    format: the next job still rolls the file back with it (a journal it could no longer read
    would leave the killed job's half-made change in the file)."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    before = make_existing(out)
    kill_at(t, sh, gather_args(inp, e2e.ref(out, "/g")), "journaled", 1)
    journals = [n for n in leftovers(t.d) if ".shardops-journal." in n]
    t.suite.require(len(journals) == 1, "the killed job left journals %s" % journals)
    path = os.path.join(t.d, journals[0])
    with open(path, "rb") as f:
        raw = f.read()
    try:
        earlier = as_earlier_journal(raw, version)
    except AssertionError as e:
        t.suite.require(False, "the journal is not as docs/output-safety.md describes: %s" % e)
    t.suite.check(e2e.file_state(out) != before, "the killed job changed nothing (the test needs a change to undo)")
    with open(path, "wb") as f:
        f.write(earlier)
    r = job_reading(t, sh, e2e.ref(out, "/keep/a"), [0, 5, 1023])
    t.suite.check(e2e.file_state(out) == before,
                  "the version-%d journal did not undo the killed job's change" % version, r)
    t.suite.check(leftovers(t.d) == [], "the next job left %s" % leftovers(t.d), r)


def killed_between_journal_rounds(t, sh):
    """SIGKILL once the first 64 MiB round of a replaced dataset's old bytes was journaled and
    the new bytes written over them, the rest not yet: the next job reading the file finds it
    as it was, byte for byte, and the job run again replaces the dataset."""
    rows = (96 << 20) // 64  # 96 MiB of float32 rows of 16: two rounds and more
    rng = np.random.default_rng(11)
    params = rng.standard_normal((rows, 16)).astype(np.float32)
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/p": params, "/i": np.arange(rows, dtype=np.int64)[::-1].reshape(-1, 1).copy()}, mode="w")
    out = os.path.join(t.d, "target.h5")
    e2e.write_h5(out, {"/keep/a": np.arange(100, dtype=np.int64), "/big": params}, mode="w")
    before = e2e.file_state(out)
    argv = ["gather-nd", "--params", e2e.ref(inp, "/p"), "--indices", e2e.ref(inp, "/i"), "--out",
            e2e.ref(out, "/big"), "--overwrite", "-q"]
    kill_at(t, sh, argv, "journal round applied", 1)
    t.suite.check(e2e.file_state(out) != before, "the killed job changed nothing (the test needs a change to undo)")
    r = job_reading(t, sh, e2e.ref(out, "/keep/a"), [0, 99])
    t.suite.check(e2e.file_state(out) == before, "the file a job read is not as it was before the killed job", r)
    r = sh.run(argv)
    e2e.expect_success(t.suite, r, "the job run again")
    e2e.same_array(t.suite, "/big", e2e.read_h5(out, "/big"), params[::-1], r)
    e2e.same_array(t.suite, "/keep/a", e2e.read_h5(out, "/keep/a"), np.arange(100, dtype=np.int64), r)
    t.suite.check(leftovers(t.d) == [], "the next job left %s" % leftovers(t.d), r)


def alive(pid):
    """Whether the process runs (a zombie, which its stopped parent cannot reap, does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def paused_in_place(t, sh, seconds):
    """(inputs, expected rows, target, job): a gather-nd job into an existing target, paused
    for ``seconds`` with its rows written into the target past its end."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    make_existing(out)
    job = Job(sh, gather_args(inp, e2e.ref(out, "/g")), sh.np, env={"SHARDOPS_TEST_PAUSE": "in-place:%d" % seconds})
    if not job.wait_for("test pause at in-place"):
        t.suite.require(False, "the job never reached in-place", job.result(job.finish()))
    return inp, expected, out, job


def stopped_late_after_the_next_job(t, sh):
    """A rank that hears of its job's stop only after the next job committed (its host
    frozen, or cut off, while the rest of its job died; here: mpirun and that rank stopped,
    rank 0 killed, the next job run, then SIGTERM to the rank): its stop handler leaves the
    target alone. It cut the file back to its length before its job, under the next job's
    dataset (h5py: "truncated file")."""
    inp, expected, out, job = paused_in_place(t, sh, 60)
    with open(os.path.join(t.d, ".target.h5.shardops-lock")) as f:
        holder = int(re.search(r"pid (\d+)", f.read()).group(1))  # rank 0, which holds the lock
    late = [pid for pid in job.ranks() if pid != holder][-1]
    # mpirun stopped too: it would kill the rank, and the rank ends at once once mpirun is gone.
    for pid in (job.proc.pid, late):
        os.kill(pid, signal.SIGSTOP)
    os.kill(holder, signal.SIGKILL)
    r = None
    try:
        r = sh.run(gather_args(inp, e2e.ref(out, "/next")))
        e2e.expect_success(t.suite, r, "the next job")
        after_next = e2e.file_state(out)
        os.kill(late, signal.SIGTERM)
        os.kill(late, signal.SIGCONT)
        end = time.monotonic() + 15
        while alive(late) and time.monotonic() < end:
            time.sleep(0.05)
        t.suite.check(not alive(late), "the late rank did not end on SIGTERM", r)
    finally:
        for pid in (late, job.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        job.finish(timeout=30)
    t.suite.check(e2e.file_state(out) == after_next, "the late rank changed the target after the next job", r)
    e2e.same_array(t.suite, "/next", e2e.read_h5(out, "/next"), expected, r)
    e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64), r)


def target_replaced_during_the_job(t, sh, how):
    """Another program renames a new file over the existing target, or removes it, while the
    job writes into it: exit 3 saying so, the other program's file as it made it, nothing
    left. The message blamed a failed write ("it has 2128 bytes where 285225640 were written
    (a write failed: disk full?)")."""
    _, _, out, job = paused_in_place(t, sh, 2)
    if how == "renamed over":
        other = os.path.join(t.d, "other.h5")
        e2e.write_h5(other, {"/users_data": np.arange(10)}, mode="w")
        os.rename(other, out)
        theirs = e2e.file_state(out)
    else:
        os.unlink(out)
        theirs = None
    rc = job.finish(timeout=60)
    r = job.result(rc)
    t.suite.check(rc == 3, "exit %s, expected 3" % rc, r)
    t.suite.check("another program replaced or removed it" in r.stderr, "the message does not say why", r)
    t.suite.check(e2e.file_state(out) == theirs, "the other program's file changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def killed_then_changed_by_another_program(t, sh, how, user_block=0):
    """SIGKILL of a job with rows written into an existing file, then h5py changes the file (adds
    a dataset, or makes the file anew in place) before any shardops job comes: the next job,
    one that only reads the file, leaves that change as it is and removes what the killed job
    left. It used to cut the file back to its length before the killed job, which HDF5 then
    could not open (h5py: "truncated file"); past a user block of 64 KiB (the superblock,
    which h5py rewrites, beyond the bytes the journal looked at) it still did."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    make_existing(out)
    if user_block:
        with e2e.h5py.File(out, "w", userblock_size=user_block) as f:
            f["/b"] = np.arange(100, dtype=np.int64)
        with open(out, "r+b") as f:
            f.write(b"a user block of another program's" * 16)
    kill_at(t, sh, gather_args(inp, e2e.ref(out, "/g")), "in-place", 1)
    later = np.arange(50000, dtype=np.float64).reshape(-1, 2)
    with e2e.h5py.File(out, "a" if how == "added" else "w") as f:
        f["later"] = later
    after_change = e2e.file_state(out)
    rows = os.path.join(t.d, "rows.h5")
    e2e.write_h5(rows, {"/i": np.array([[0], [7]], dtype=np.int64)}, mode="w")
    r = sh.run(["gather-nd", "--params", e2e.ref(out, "/later"), "--indices", e2e.ref(rows, "/i"), "--out",
                e2e.ref(rows, "/r"), "-q"])
    e2e.expect_success(t.suite, r, "a job reading the changed file")
    e2e.same_array(t.suite, "/r", e2e.read_h5(rows, "/r"), later[[0, 7]], r)
    t.suite.check(e2e.file_state(out) == after_change, "the file changed after the killed job was changed again", r)
    e2e.same_array(t.suite, "/later", e2e.read_h5(out, "/later"), later, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def killed_then_cleaned_by_another_user(t, sh):
    """A job killed mid-commit, in a folder and on a target every user may write: a job of
    another user writing the target undoes the change and adds its dataset. The lock file
    and the journal the killed job left were its user's alone (0644, 0600): every other
    user's job failed, "cannot create the lock file: Permission denied", readers too."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        t.suite.skip("killed_then_cleaned_by_another_user", "needs root and setpriv to run a job as nobody")
        return
    os.chmod(t.d, 0o777)
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    make_existing(out)
    os.chmod(out, 0o666)
    kill_at(t, sh, gather_args(inp, e2e.ref(out, "/g")), "journaled", 1)
    as_nobody = (["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sh.mpiexec, "-n", str(sh.np)] +
                 sh.flags + [sh.binary] + gather_args(inp, e2e.ref(out, "/next")))
    p = subprocess.run(as_nobody, capture_output=True, text=True, timeout=sh.timeout, cwd=t.d,
                       env=dict(os.environ, HOME=t.d))
    t.suite.check(p.returncode == 0, "the job of another user: exit %s: %s" % (p.returncode, p.stderr[-600:]))
    if p.returncode == 0:
        e2e.same_array(t.suite, "/next", e2e.read_h5(out, "/next"), expected)
        with e2e.h5py.File(out, "r") as f:
            t.suite.check("g" not in f, "the killed job's dataset is in the file: its change was not undone")
        e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64))
    t.suite.check(leftovers(t.d) == [], "the job of another user left %s" % leftovers(t.d))


def as_user(user, group):
    """The command prefix that runs a job as `user` with `group` alone."""
    return ["setpriv", "--reuid=" + user, "--regid=" + group, "--clear-groups"]


def run_as(t, sh, prefix, argv):
    p = subprocess.run(prefix + [sh.mpiexec, "-n", str(sh.np)] + sh.flags + [sh.binary] + argv, capture_output=True,
                       text=True, timeout=sh.timeout, cwd=t.d, env=dict(sh.env, HOME=t.d))
    return p


def lock_and_side_file_modes(t, sh):
    """While a job writes into an existing file: its lock file is readable by every user whatever
    the umask (under umask 077 it was 0600: every other user's job failed at once, "cannot create
    the lock file: Permission denied", and readers took it for unheld), and its side file of new
    datasets is its own alone (it was 0666 less the umask: under umask 0, world-readable beside a
    0640 target). The target keeps its mode; the job completes."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "kept.h5")
    make_existing(out)
    os.chmod(out, 0o640)
    lock = os.path.join(t.d, ".kept.h5.shardops-lock")
    for umask, name in (("077", "/g1"), ("000", "/g2")):
        job = Job(sh, gather_args(inp, e2e.ref(out, name)) + ["--compression", "gzip"], sh.np,
                  env={"SHARDOPS_TEST_PAUSE": "journaled:2"}, prefix=["sh", "-c", 'umask %s; exec "$@"' % umask, "sh"])
        reached = job.wait_for("test pause at journaled")
        modes = {n: os.stat(os.path.join(t.d, n)).st_mode & 0o777 for n in leftovers(t.d)}
        rc = job.finish()
        r = job.result(rc)
        t.suite.check(reached, "umask %s: the job never paused" % umask, r)
        e2e.expect_success(t.suite, r, "the job under umask " + umask)
        t.suite.check(oct(modes.get(os.path.basename(lock), 0) & 0o444) == oct(0o444),
                      "umask %s: lock file mode %s" % (umask, oct(modes.get(os.path.basename(lock), 0))), r)
        side = [m for n, m in modes.items() if ".shardops-tmp." in n]
        t.suite.check(side != [] and all(m == 0o600 for m in side), "umask %s: side file modes %s" %
                      (umask, [oct(m) for m in side]), r)
        e2e.same_array(t.suite, name, e2e.read_h5(out, name), expected, r)
        t.suite.check(os.stat(out).st_mode & 0o777 == 0o640, "the target's mode changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def killed_root_job_on_a_users_file(t, sh):
    """root's job killed mid-commit on a user's private file (0600, in a folder every user may
    write): the journal was root's own (0600), which that user's jobs could not open. They
    passed it over: a read gave the killed job's uncommitted change, exit 0. The journal is now
    the file's owner's: the user's next job undoes the change."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        t.suite.skip("killed_root_job_on_a_users_file", "needs root and setpriv to run a job as nobody")
        return
    _, out, before = killed_writing_anothers_file(t, sh, 0o777, (65534, 65534, 0o600), "/b", "--overwrite")
    rows = os.path.join(t.d, "rows.h5")
    e2e.write_h5(rows, {"/i": np.array([[0], [7]], dtype=np.int64)}, mode="w")
    os.chmod(rows, 0o666)
    p = run_as(t, sh, as_user("nobody", "nogroup"), ["gather-nd", "--params", e2e.ref(out, "/b"), "--indices",
                                                     e2e.ref(rows, "/i"), "--out", e2e.ref(rows, "/r"), "-q"])
    t.suite.check(p.returncode == 0, "the owner's job reading the file: exit %s: %s" % (p.returncode, p.stderr[-600:]))
    if p.returncode == 0:
        e2e.same_array(t.suite, "/r", e2e.read_h5(rows, "/r"), np.array([0, 7], dtype=np.int64))
    t.suite.check(e2e.file_state(out) == before, "the file is not as it was before the killed job")
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


def killed_writing_anothers_file(t, sh, folder_mode, owner, dataset, *flags, prefix=()):
    """A job (of root's, or run after `prefix`: another user's) writing `dataset` into the file
    target.h5 of `owner` (uid, gid, mode), killed mid-commit in t.d (of `folder_mode`): the
    inputs, the target and the target as it was."""
    os.chmod(t.d, folder_mode)
    inp, _ = make_inputs(t.d)
    for name in os.listdir(t.d):
        os.chmod(os.path.join(t.d, name), 0o644)
    out = os.path.join(t.d, "target.h5")
    before = make_existing(out)
    os.chown(out, owner[0], owner[1])
    os.chmod(out, owner[2])
    kill_at(t, sh, gather_args(inp, e2e.ref(out, dataset)) + list(flags), "journaled", 1, prefix=prefix)
    return inp, out, before


def killed_writing_through_the_group(t, sh, folder_mode, dataset, *flags):
    """A job of daemon's, writing `dataset` into nobody's file (nobody:bin, 0660) through the
    group bin, killed mid-commit (killed_writing_anothers_file)."""
    return killed_writing_anothers_file(t, sh, folder_mode, (65534, 2, 0o660), dataset, *flags,
                                        prefix=as_user("daemon", "bin"))


def journal_left_in_a_sticky_folder(t, sh):
    """daemon's job (writing nobody's file through its group) killed mid-commit in a sticky folder:
    nobody's next job undoes the change but may not remove daemon's files, which stay. ls then
    said after every later job that the file "may hold a change that no shardops job committed";
    it says so only while the change is in the file."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        t.suite.skip("journal_left_in_a_sticky_folder", "needs root and setpriv to run jobs as other users")
        return
    inp, out, _ = killed_writing_through_the_group(t, sh, 0o1777, "/g")
    r = sh.run(["ls", out])
    t.suite.check("no shardops job committed" in r.stderr, "ls does not say the file holds an uncommitted change", r)
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--groups=bin"]
    p = run_as(t, sh, nobody, gather_args(inp, e2e.ref(out, "/next")))
    t.suite.check(p.returncode == 0, "nobody's job: exit %s: %s" % (p.returncode, p.stderr[-600:]))
    with e2e.h5py.File(out, "r") as f:
        t.suite.check("g" not in f and "next" in f, "the file holds %s" % sorted(f.keys()))
    t.suite.check(any(".shardops-journal." in n for n in leftovers(t.d)), "daemon's journal was removed: %s" %
                  leftovers(t.d))
    r = sh.run(["ls", out])
    e2e.expect_success(t.suite, r, "ls after nobody's job")
    t.suite.check("no shardops job committed" not in r.stderr, "ls still speaks of an uncommitted change", r)


def unreadable_journal_of_another_user(t, sh):
    """A job of one user (daemon, writing through the file's group) killed mid-commit on a file
    of another (nobody), who is not in that group: the journal is daemon's and the file's group's
    (0640), and nobody may not read it. nobody's jobs passed it over: a read gave the killed job's
    change (exit 0), and a write made it permanent. Now both fail (exit 3) naming daemon, and
    change nothing; daemon's next job undoes the change."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        t.suite.skip("unreadable_journal_of_another_user", "needs root and setpriv to run jobs as other users")
        return
    _, out, before = killed_writing_through_the_group(t, sh, 0o777, "/b", "--overwrite")
    changed = e2e.file_state(out)
    outs = os.path.join(t.d, "outs")
    os.mkdir(outs)
    os.chmod(outs, 0o777)
    rows = os.path.join(outs, "rows.h5")
    e2e.write_h5(rows, {"/i": np.array([[0], [7]], dtype=np.int64), "/j": np.array([[1]], dtype=np.int64)}, mode="w")
    os.chmod(rows, 0o666)
    nobody = as_user("nobody", "nogroup")
    for argv in (["gather-nd", "--params", e2e.ref(out, "/b"), "--indices", e2e.ref(rows, "/i"), "--out",
                  e2e.ref(rows, "/r"), "-q"],
                 ["gather-nd", "--params", e2e.ref(rows, "/i"), "--indices", e2e.ref(rows, "/j"), "--out",
                  e2e.ref(out, "/next"), "-q"]):
        p = run_as(t, sh, nobody, argv)
        t.suite.check(p.returncode == 3 and "cannot undo" in p.stderr and "daemon" in p.stderr,
                      "nobody's job %s: exit %s, expected 3 naming daemon: %s" % (argv[-2], p.returncode,
                                                                                  p.stderr[-600:]))
        t.suite.check(e2e.file_state(out) == changed, "nobody's job changed the file")
    with e2e.h5py.File(rows, "r") as f:
        t.suite.check("r" not in f, "nobody's job read the uncommitted change")
    p = run_as(t, sh, as_user("daemon", "bin"), ["gather-nd", "--params", e2e.ref(out, "/b"), "--indices",
                                                 e2e.ref(rows, "/i"), "--out", e2e.ref(os.path.join(outs, "d.h5"), "/r"),
                                                 "-q"])
    t.suite.check(p.returncode == 0, "daemon's job reading the file: exit %s: %s" % (p.returncode, p.stderr[-600:]))
    t.suite.check(e2e.file_state(out) == before, "daemon's job did not undo the change")
    p = run_as(t, sh, nobody, ["gather-nd", "--params", e2e.ref(rows, "/i"), "--indices", e2e.ref(rows, "/j"),
                               "--out", e2e.ref(out, "/next"), "-q"])
    t.suite.check(p.returncode == 0, "nobody's job writing after that: exit %s: %s" % (p.returncode, p.stderr[-600:]))


# ---------------------------------------------------------------------------------------------
# One job, several files: all or none (JobCommit)


def two_file_deck(d, inp):
    """A deck writing GatherNd's rows to two files: a.h5 (made existing by the caller) and b.h5."""
    deck = os.path.join(d, "two.yaml")
    a, b = os.path.join(d, "a.h5"), os.path.join(d, "b.h5")
    with open(deck, "w") as f:
        f.write("tensors:\n  params: %s\n  idx: %s\n" % (e2e.ref(inp, "/params"), e2e.ref(inp, "/idx")))
        f.write("steps:\n  - {op: gather_nd, params: params, indices: idx, out: g1}\n"
                "  - {op: gather_nd, params: params, indices: idx, out: g2}\n")
        f.write("outputs:\n  g1: %s\n  g2: %s\n" % (e2e.ref(a, "/g"), e2e.ref(b, "/g")))
    return deck, a, b


def two_files_written_together(t, sh):
    """Both files get their dataset; the existing one keeps its own; nothing is left."""
    inp, expected = make_inputs(t.d)
    deck, a, b = two_file_deck(t.d, inp)
    make_existing(a)
    r = sh.run(["run", deck, "-q"])
    e2e.expect_success(t.suite, r)
    e2e.same_array(t.suite, "a:/g", e2e.read_h5(a, "/g"), expected, r)
    e2e.same_array(t.suite, "b:/g", e2e.read_h5(b, "/g"), expected, r)
    e2e.same_array(t.suite, "a:/b", e2e.read_h5(a, "/b"), np.arange(100, dtype=np.int64), r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def two_files_fail_together(t, sh):
    """The second file cannot be committed (another program made it meanwhile): the first,
    already changed in place, is changed back, byte for byte."""
    inp, _ = make_inputs(t.d)
    deck, a, b = two_file_deck(t.d, inp)
    before = make_existing(a)
    job = Job(sh, ["run", deck, "-q"], sh.np, env={"SHARDOPS_TEST_PAUSE": "commit:2"})
    if not job.wait_for("test pause at commit", count=sh.np):
        rc = job.finish()
        t.suite.require(False, "the job never reached its commit", job.result(rc))
    e2e.write_h5(b, {"/other": np.arange(5)}, mode="w")
    other = e2e.file_state(b)
    rc = job.finish(timeout=60)
    r = job.result(rc)
    t.suite.check(rc == 3, "exit %s, expected 3" % rc, r)
    t.suite.check("none of the job's 2 output files was changed" in r.stderr, "the message does not say so", r)
    t.suite.check(e2e.file_state(a) == before, "a.h5 changed although the job failed", r)
    t.suite.check(e2e.file_state(b) == other, "the other program's b.h5 changed", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def two_existing_files_stopped_in_place(t, sh):
    """SIGHUP to every rank once both existing targets (of different lengths) hold rows
    written in place: each is cut back to its own length, byte for byte."""
    inp, _ = make_inputs(t.d)
    deck, a, b = two_file_deck(t.d, inp)
    before_a = make_existing(a, size_rows=4096)
    e2e.write_h5(b, {"/small": np.arange(3)}, mode="w")
    before_b = e2e.file_state(b)
    _, r = signal_at(t, sh, ["run", deck, "-q"], "in-place", 2 * sh.np, signal.SIGHUP)  # both files written in place
    t.suite.check(e2e.file_state(a) == before_a, "a.h5 is not as it was", r)
    t.suite.check(e2e.file_state(b) == before_b, "b.h5 is not as it was", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)


def signal_at(t, sh, argv, where, count, sig, prefix=()):
    """`sig` to every rank of a job running argv (after `prefix`: another user's) at the
    count-th pause at `where`; returns its exit code and result, after checking that it did
    not exit 0."""
    job = Job(sh, argv, sh.np, env={"SHARDOPS_TEST_PAUSE": "%s:5" % where}, prefix=prefix)
    if not job.wait_for("test pause at " + where, count=count):
        rc = job.finish()
        t.suite.require(False, "the job never reached %s" % where, job.result(rc))
    for pid in job.ranks():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    rc = job.finish(timeout=30)
    r = job.result(rc)
    t.suite.require(rc is not None and rc != 0, "the %s job exited %s" % (sig.name, rc), r)
    return rc, r


def stopped_as_the_journal_is_made(t, sh):
    """SIGTERM to every rank just after rank 0 made the journal of an existing target (before
    the file was opened through it): the stop handlers left the journal behind (3 runs in 60 of
    a random SIGTERM in the write phase), and ls then said the file may hold an uncommitted
    change. Nothing is left now, and the target is as it was."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    before = make_existing(out)
    rc, r = signal_at(t, sh, gather_args(inp, e2e.ref(out, "/g")), "journal made", 1, signal.SIGTERM)
    t.suite.check(rc == 143, "exit %s, expected 143" % rc, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)
    t.suite.check(e2e.file_state(out) == before, "the target changed", r)


def opened_by_h5py_as_the_job_opens_it(t, sh):
    """An h5py reader that opens the existing target just after the job looked for one (an h5py
    script polling the file): the job said the file "cannot be opened as HDF5 (truncated or
    corrupt file, or open in another program?)". It says the file is open in another program,
    as when the reader came first; nothing is left and the file is as it was."""
    inp, _ = make_inputs(t.d)
    out = os.path.join(t.d, "target.h5")
    before = make_existing(out)
    job = Job(sh, gather_args(inp, e2e.ref(out, "/g")), sh.np, env={"SHARDOPS_TEST_PAUSE": "journal made:2"})
    reached = job.wait_for("test pause at journal made")
    with e2e.h5py.File(out, "r"):
        rc = job.finish()
    r = job.result(rc)
    t.suite.require(reached, "the job never paused", r)
    t.suite.check(rc == 3 and "is open in another program" in r.stderr, "exit %s" % rc, r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)
    t.suite.check(e2e.file_state(out) == before, "the target changed", r)


def kill_at(t, sh, argv, where, count, prefix=()):
    """SIGKILL of every rank of a job running argv at the count-th pause at `where`."""
    signal_at(t, sh, argv, where, count, signal.SIGKILL, prefix)
    t.suite.check(leftovers(t.d) != [], "nothing was left to clean (the test did not kill at %s)" % where)


def two_files_killed_before_commit_point(t, sh):
    """Killed with both files changed but the commit point not passed: the next job writing
    each file undoes that file's change (a.h5 back byte for byte, b.h5 removed)."""
    inp, expected = make_inputs(t.d)
    deck, a, b = two_file_deck(t.d, inp)
    before = make_existing(a)
    kill_at(t, sh, ["run", deck, "-q"], "applied", 2)
    r = sh.run(gather_args(inp, e2e.ref(a, "/next")))
    e2e.expect_success(t.suite, r, "the next job writing a.h5")
    with e2e.h5py.File(a, "r") as f:
        t.suite.check("g" not in f, "the killed job's dataset is in a.h5: its change was not undone", r)
    e2e.same_array(t.suite, "a:/next", e2e.read_h5(a, "/next"), expected, r)
    r = sh.run(gather_args(inp, e2e.ref(b, "/next")))
    e2e.expect_success(t.suite, r, "the next job writing b.h5")
    with e2e.h5py.File(b, "r") as f:
        t.suite.check(list(f.keys()) == ["next"], "b.h5 holds %s: the killed job's file was kept" % list(f.keys()), r)
    r = sh.run(gather_args(inp, e2e.ref(a, "/next2")))  # a.h5 again: nothing of the killed job is left
    e2e.expect_success(t.suite, r, "a third job")
    e2e.same_array(t.suite, "a:/b", e2e.read_h5(a, "/b"), np.arange(100, dtype=np.int64), r)
    t.suite.check(leftovers(t.d) == [], "the next jobs left %s" % leftovers(t.d), r)
    del before


def readers_of_a_killed_commit(t, sh):
    """Killed with both files changed but the commit point not passed: a job that only READS
    them must not see that change (it read the killed job's dataset and exited 0). ls says
    the change was never committed; the first job reading each file undoes it, as a writer
    would: a.h5's own datasets read as they were, the killed job's /g and its new b.h5 are
    gone, and nothing is left beside them."""
    inp, _ = make_inputs(t.d)
    deck, a, b = two_file_deck(t.d, inp)
    before = make_existing(a)
    kill_at(t, sh, ["run", deck, "-q"], "applied", 2)
    r = sh.run(["ls", a])
    e2e.expect_success(t.suite, r, "ls of a.h5")
    t.suite.check("no shardops job committed" in r.stderr, "ls does not say that a.h5 holds an uncommitted change", r)
    rows = os.path.join(t.d, "rows.h5")
    e2e.write_h5(rows, {"/i": np.array([[0], [5], [1023]], dtype=np.int64)}, mode="w")
    out = os.path.join(t.d, "read.h5")

    def read_job(params):
        return sh.run(["gather-nd", "--params", params, "--indices", e2e.ref(rows, "/i"), "--out",
                       e2e.ref(out, "/r"), "--overwrite", "-q"])

    for killed in (e2e.ref(a, "/g"), e2e.ref(b, "/g")):
        r = read_job(killed)
        t.suite.check(r.rc == 2, "reading %s, which no job committed: exit %s, expected 2" %
                      (killed, r.rc), r)
    t.suite.check(not os.path.exists(b), "b.h5, which the killed job never committed, is still there")
    r = read_job(e2e.ref(a, "/keep/a"))
    e2e.expect_success(t.suite, r, "a job reading a.h5's own dataset")
    keep = np.random.default_rng(7).standard_normal((1024, 8))
    e2e.same_array(t.suite, "/r", e2e.read_h5(out, "/r"), keep[[0, 5, 1023]], r)
    t.suite.check(e2e.file_state(a) == before, "a.h5 is not as it was before the killed job", r)
    t.suite.check(leftovers(t.d) == [], "the readers left %s" % leftovers(t.d), r)


def reader_who_cannot_undo_a_killed_commit(t, sh):
    """Killed before its commit point, a job leaves a change in a.h5 that the first job reading
    it undoes; a user who may read a.h5 but not write it (nor its folder) cannot. Its job read
    the killed job's dataset and exited 0. Now it fails (exit 3) saying so, for the killed
    job's dataset and a.h5's own alike; a job of a user who may write it then undoes the change."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        t.suite.skip("reader_who_cannot_undo_a_killed_commit", "needs root and setpriv to run a job as nobody")
        return
    inp, _ = make_inputs(t.d)
    deck, a, _ = two_file_deck(t.d, inp)
    before = make_existing(a)
    kill_at(t, sh, ["run", deck, "-q"], "applied", 2)
    os.chmod(t.d, 0o755)
    os.chmod(a, 0o644)
    rows = os.path.join(t.d, "rows.h5")
    e2e.write_h5(rows, {"/i": np.array([[0], [5]], dtype=np.int64)}, mode="w")
    outs = os.path.join(t.d, "outs")
    os.mkdir(outs)
    os.chmod(outs, 0o777)
    for params in (e2e.ref(a, "/g"), e2e.ref(a, "/keep/a")):
        argv = ["gather-nd", "--params", params, "--indices", e2e.ref(rows, "/i"), "--out",
                e2e.ref(os.path.join(outs, "read.h5"), "/r"), "--overwrite", "-q"]
        p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sh.mpiexec, "-n",
                            str(sh.np)] + sh.flags + [sh.binary] + argv,
                           capture_output=True, text=True, timeout=sh.timeout, cwd=outs, env=dict(os.environ, HOME=outs))
        t.suite.check(p.returncode == 3, "nobody reading %s: exit %s, expected 3: %s" %
                      (params, p.returncode, p.stderr[-600:]))
        t.suite.check("cannot undo" in p.stderr, "nobody reading %s: the message does not say why: %s" %
                      (params, p.stderr[-600:]))
        t.suite.check(not os.path.exists(os.path.join(outs, "read.h5")), "nobody's job wrote its output")
    r = sh.run(["gather-nd", "--params", e2e.ref(a, "/keep/a"), "--indices", e2e.ref(rows, "/i"), "--out",
                e2e.ref(os.path.join(outs, "root.h5"), "/r"), "-q"])
    e2e.expect_success(t.suite, r, "a job of a user who may write a.h5")
    t.suite.check(e2e.file_state(a) == before, "a.h5 is not as it was before the killed job", r)


def two_files_killed_after_commit_point(t, sh):
    """Killed just after the commit point: both files keep the job's datasets, and the next
    jobs writing them drop what it left."""
    inp, expected = make_inputs(t.d)
    deck, a, b = two_file_deck(t.d, inp)
    make_existing(a)
    kill_at(t, sh, ["run", deck, "-q"], "committed", 1)
    for path in (a, b):
        r = sh.run(gather_args(inp, e2e.ref(path, "/next")))
        e2e.expect_success(t.suite, r, "the next job writing " + os.path.basename(path))
        e2e.same_array(t.suite, path + ":/g", e2e.read_h5(path, "/g"), expected, r)
        e2e.same_array(t.suite, path + ":/next", e2e.read_h5(path, "/next"), expected, r)
    e2e.same_array(t.suite, "a:/b", e2e.read_h5(a, "/b"), np.arange(100, dtype=np.int64), r)
    t.suite.check(leftovers(t.d) == [], "the next jobs left %s" % leftovers(t.d), r)


def stale_lock_removed_by_a_reader(t, sh):
    """The lock file of a job killed just after its commit (empty, held by no one) was left
    until the next job that wrote the file; a job that reads it removes it now. A lock a live
    job holds stays (a reader reads what was committed meanwhile, as before)."""
    inp, expected = make_inputs(t.d)
    out = os.path.join(t.d, "held.h5")
    make_existing(out)
    lock = os.path.join(t.d, ".held.h5.shardops-lock")
    rows = os.path.join(t.d, "rows.h5")
    e2e.write_h5(rows, {"/i": np.array([[0], [7]], dtype=np.int64)}, mode="w")
    read = ["gather-nd", "--params", e2e.ref(out, "/b"), "--indices", e2e.ref(rows, "/i"), "--out",
            e2e.ref(rows, "/r"), "--overwrite", "-q"]
    open(lock, "w").close()
    r = sh.run(read)
    e2e.expect_success(t.suite, r, "a job reading the file")
    t.suite.check(not os.path.exists(lock), "the stale lock file is still there", r)
    # A live holder (a job writing the file, its commit not begun): the reader leaves its lock be.
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               "f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX)\n"
                               "f.write('shardops pid %d on host test\\n' % os.getpid()); f.flush()\n"
                               "print('locked', flush=True); time.sleep(60)\n", lock], stdout=subprocess.PIPE)
    try:
        holder.stdout.readline()
        r = sh.run(read)
        e2e.expect_success(t.suite, r, "a job reading the file while another holds its lock")
        t.suite.check(os.path.exists(lock), "a held lock file was removed", r)
    finally:
        holder.kill()
        holder.wait()
    os.remove(lock)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d))


# ---------------------------------------------------------------------------------------------
# The report


def report_rules(t, sh):
    inp, expected = make_inputs(t.d)
    inp_before = e2e.file_state(inp)
    out = os.path.join(t.d, "r_out.h5")
    # A link to the output that the job is about to make: a report through it would replace it.
    to_out = os.path.join(t.d, "to_out.json")
    os.symlink(os.path.basename(out), to_out)
    for report, code, words in ((inp, 2, "this job reads or writes"), (out, 2, "this job reads or writes"),
                                (to_out, 2, "this job reads or writes"),
                                (os.path.join(t.d, "missing", "r.json"), 3, "does not exist"),
                                (t.d, 2, "directory")):
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")) + ["--report", report])
        t.suite.check(r.rc == code, "--report %s: exit %s, expected %d" % (report, r.rc, code), r)
        t.suite.check(words in r.stderr, "--report %s: the message does not say '%s'" % (report, words), r)
        t.suite.check(not os.path.exists(out), "--report %s: the output was written anyway" % report, r)
        t.suite.check(e2e.file_state(inp) == inp_before, "--report %s: the input changed" % report, r)
    good = os.path.join(t.d, "report.json")
    r = sh.run(gather_args(inp, e2e.ref(out, "/g")) + ["--report", good])
    e2e.expect_success(t.suite, r)
    with open(good) as f:
        doc = json.load(f)
    t.suite.check(doc.get("command") == "gather-nd", "the report does not name the command", r)
    t.suite.check(leftovers(t.d) == [], "left %s" % leftovers(t.d), r)
    # SIGKILL before the commit leaves no claimed report behind (a hidden empty one was
    # left for good: nothing removed it).
    killed = os.path.join(t.d, "killed.json")
    _, r = signal_at(t, sh, gather_args(inp, e2e.ref(out, "/k")) + ["--report", killed], "read", sh.np,
                     signal.SIGKILL)
    t.suite.check(not os.path.exists(killed), "the killed job's report exists", r)
    t.suite.check(leftovers(t.d) == [], "the killed job left %s" % leftovers(t.d), r)


def bind_mounted(src):
    """src mounted again under a new folder beside it (a second path to the same folder, as
    a site's bind mounts give): the folder, or None where mounting is not allowed here."""
    return mounted(tempfile.mkdtemp(dir=os.path.dirname(src), prefix="bind-"), ["--bind", src])


def bind_mount_aliases(t, sh):
    """One folder reached by two paths (a bind mount; a link to a folder resolves to one path):
    a report through the other path to an output the job is about to make is refused (it
    replaced the committed output, exit 0), and a deck writing one file under both names
    writes it once (its second name waited for the job's own lock, then failed)."""
    inp, expected = make_inputs(t.d)
    sub = os.path.join(t.d, "sub")
    os.makedirs(sub, exist_ok=True)
    with bind_mounted(sub) as alias:
        t.suite.require(alias is not None, "mount --bind failed")
        out = os.path.join(sub, "out.h5")
        r = sh.run(gather_args(inp, e2e.ref(out, "/g")) + ["--report", os.path.join(alias, "out.h5")])
        t.suite.check(r.rc == 2 and "this job reads or writes" in r.stderr, "--report through the alias: exit %s" %
                      r.rc, r)
        t.suite.check(not os.path.exists(out), "the output was written anyway", r)
        deck = os.path.join(t.d, "alias.yaml")
        with open(deck, "w") as f:
            f.write("tensors:\n  p: %s\n  i: %s\nsteps:\n  - {op: gather_nd, params: p, indices: i, out: g}\n"
                    "  - {op: gather_nd, params: p, indices: i, out: h}\noutputs:\n  g: %s\n  h: %s\n" % (e2e.ref(inp, "/params"), e2e.ref(inp, "/idx"),
                                                      e2e.ref(out, "/a"), e2e.ref(os.path.join(alias, "out.h5"), "/b")))
        r = sh.run(["run", deck, "-q"], timeout=60, env={"SHARDOPS_LOCK_TIMEOUT": "20"})
        t.suite.require(not r.timed_out, "the deck waited for its own lock", r)
        e2e.expect_success(t.suite, r, "deck writing one file under two names")
        if r.rc == 0:
            e2e.same_array(t.suite, "/a", e2e.read_h5(out, "/a"), expected, r)
            e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), expected, r)
        t.suite.check(leftovers(sub) == [], "left %s" % leftovers(sub), r)


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], 3,
                          lambda p: p.add_argument("--group", default="all",
                                                   help="all | disk | concurrent | signals"))
    sh = e2e.Shardops(args)
    suite = e2e.Suite("e2e output safety np=%d" % args.np, args)

    def run_case(name, fn, *a):
        e2e.run_cases(suite, args, sh, "safety", [(name, fn) + a])

    groups = args.group.split(",")
    everything = "all" in groups
    if everything or "disk" in groups:
        if os.geteuid() == 0 and can_mount():
            run_case("disk_full_new_file", disk_full_new_file)
            run_case("inodes_run_out", inodes_run_out)
            run_case("disk_full_existing_file_during_write", disk_full_existing_file, "write")
            run_case("disk_full_existing_file_during_merge", disk_full_existing_file, "merge")
            run_case("disk_small_output_fits", fits_exactly_enough)
            run_case("disk_full_dense_scatter", disk_full_dense_scatter)
        else:
            suite.skip("disk_full_*", "needs root to mount a small tmpfs")
        for kind in ("new", "compressed", "stored", "existing", "existing_compressed", "strings", "fixed_strings"):
            run_case("file_size_limit_%s_file" % kind, file_size_limit_case, kind)
        run_case("file_size_limit_output_fits", file_size_limit_fits)
        if args.np > 1:
            run_case("file_size_limit_below_mpis_own_files", file_size_limit_below_mpis_own_files)
        if args.np > 1:
            run_case("settings_differ_between_ranks", settings_differ_between_ranks)
        run_case("longest_file_name", longest_file_name)
        run_case("file_name_too_long", file_name_too_long)
    if everything or "concurrent" in groups:
        run_case("append_in_place", append_in_place)
        run_case("overwrite_is_bounded", overwrite_is_bounded)
        run_case("no_room_kept_past_the_end", no_room_kept_past_the_end)
        run_case("refused_overwrite_keeps_file", refused_overwrite_keeps_file)
        if shutil.which("setfacl") and shutil.which("getfacl"):
            run_case("permissions_as_h5py_gives", permissions_as_h5py_gives)
        else:
            suite.skip("permissions_as_h5py_gives", "needs setfacl and getfacl (Debian's acl, scripts/setup.sh)")
        run_case("hard_linked_target", hard_linked_target)
        run_case("overwrite_partition_group", overwrite_partition_group)
        run_case("group_rewritten_while_stitched", group_rewritten_while_stitched)
        run_case("overwrite_dimension_scale", overwrite_dimension_scale)
        run_case("fewer_partitions_keep_dimension_scales", fewer_partitions_keep_dimension_scales)
        run_case("damaged_existing_target", damaged_existing_target)
        run_case("concurrent_writers_existing_file", concurrent_writers, True)
        run_case("concurrent_writers_new_file", concurrent_writers, False)
        run_case("lock_timeout", lock_timeout)
        run_case("updates_in_place_at_once_copied", updates_in_place_at_once, 1000, "op")
        run_case("updates_in_place_at_once_mapped", updates_in_place_at_once, 100000, "op")
        run_case("updates_in_place_at_once_deck", updates_in_place_at_once, 1000, "deck")
        run_case("decks_writing_two_files_in_opposite_orders", decks_writing_two_files_in_opposite_orders)
        run_case("open_in_another_program", open_in_another_program)
        run_case("reader_waits_for_writer", reader_waits_for_writer)
        run_case("reader_lock_timeout", reader_lock_timeout)
        run_case("input_appended_while_read", input_changed_while_read, "appended")
        run_case("input_appended_while_read_through_a_link", input_changed_while_read, "appended_through_link")
        run_case("input_overwritten_while_read", input_changed_while_read, "overwritten")
        run_case("input_written_in_place_while_read", input_changed_while_read, "written_in_place")
        run_case("input_overwritten_after_it_was_read", input_changed_while_read, "read_in_memory")
        run_case("input_overwritten_while_also_read_in_memory", input_changed_while_read, "read_twice")
        run_case("adding_to_the_file_read", adding_to_the_file_read)
        run_case("input_open_for_writing", input_open_for_writing)
        run_case("input_reached_deeper_open_for_writing", input_reached_deeper_open_for_writing)
        run_case("input_of_a_killed_writer", input_of_a_killed_writer)
        run_case("file_of_short_addresses", file_of_short_addresses)
        run_case("stale_lock_removed_by_a_reader", stale_lock_removed_by_a_reader)
        run_case("report_rules", report_rules)
        if os.geteuid() == 0 and can_mount():
            run_case("bind_mount_aliases", bind_mount_aliases)
        else:
            suite.skip("bind_mount_aliases", "mounting needs root")
        run_case("two_files_written_together", two_files_written_together)
        run_case("two_files_fail_together", two_files_fail_together)
    if everything or "signals" in groups:
        # in-place: the new rows are in the existing target, past its end, before the commit.
        phases = ["read", "validate", "apply", "write", "in-place", "commit"] + (["route"] if args.np > 1 else [])
        run_case("sigterm_as_the_journal_is_made", stopped_as_the_journal_is_made)
        run_case("opened_by_h5py_as_the_job_opens_it", opened_by_h5py_as_the_job_opens_it)
        for phase in phases:
            run_case("sigterm_to_mpirun_in_%s" % phase, stopped_in_phase, phase, signal.SIGTERM, "mpirun")
            run_case("sigint_to_mpirun_in_%s" % phase, stopped_in_phase, phase, signal.SIGINT, "mpirun")
            run_case("sighup_to_every_rank_in_%s" % phase, stopped_in_phase, phase, signal.SIGHUP, "ranks")
        # The other signals whose default action ends a process (Slurm's --signal sends
        # SIGUSR1 ahead of a time limit; `ulimit -t` sends SIGXCPU; Ctrl-\ SIGQUIT): the same
        # clean end (SIGQUIT and the last five left every file behind).
        for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGXCPU, signal.SIGALRM, signal.SIGQUIT, signal.SIGPROF,
                    signal.SIGVTALRM, signal.SIGPWR, signal.SIGSTKFLT, signal.SIGIO):
            run_case("%s_to_every_rank_in_write" % sig.name.lower(), stopped_in_phase, "write", sig, "ranks")
        run_case("sigusr1_to_every_rank_in_in-place", stopped_in_phase, "in-place", signal.SIGUSR1, "ranks")
        run_case("sigusr1_to_mpirun_in_write", stopped_in_phase, "write", signal.SIGUSR1, "mpirun")
        run_case("sigpipe_is_ignored", sigpipe_is_ignored)
        run_case("sigkill_before_the_commit", killed_then_cleaned, "commit")
        run_case("sigkill_after_rows_written_in_place", killed_then_cleaned, "in-place")
        run_case("sigkill_after_journaled_changes", killed_then_cleaned, "journaled")
        run_case("sigkill_between_journal_rounds", killed_between_journal_rounds)
        for version in (1, 2):
            run_case("sigkill_leaving_a_version_%d_journal" % version, killed_leaving_an_earlier_journal, version)
        run_case("sigkill_then_cleaned_longest_name", killed_then_cleaned, "in-place", LONGEST_NAME)
        run_case("sigkill_then_dataset_added_by_h5py", killed_then_changed_by_another_program, "added")
        run_case("sigkill_then_file_made_anew_by_h5py", killed_then_changed_by_another_program, "made anew")
        run_case("sigkill_then_dataset_added_by_h5py_past_a_user_block", killed_then_changed_by_another_program,
                 "added", 65536)
        for how in ("renamed over", "removed"):
            run_case("target_%s_during_the_job" % how.replace(" ", "_"), target_replaced_during_the_job, how)
        if args.np > 1:
            run_case("rank_stopped_late_after_the_next_job", stopped_late_after_the_next_job)
        run_case("sigkill_then_cleaned_by_another_user", killed_then_cleaned_by_another_user)
        run_case("lock_and_side_file_modes", lock_and_side_file_modes)
        run_case("killed_root_job_on_a_users_file", killed_root_job_on_a_users_file)
        run_case("unreadable_journal_of_another_user", unreadable_journal_of_another_user)
        run_case("journal_left_in_a_sticky_folder", journal_left_in_a_sticky_folder)
        run_case("long_file_names", long_file_names)
        run_case("two_existing_files_stopped_in_place", two_existing_files_stopped_in_place)
        run_case("two_files_killed_before_commit_point", two_files_killed_before_commit_point)
        run_case("two_files_killed_after_commit_point", two_files_killed_after_commit_point)
        run_case("readers_of_a_killed_commit", readers_of_a_killed_commit)
        run_case("reader_who_cannot_undo_a_killed_commit", reader_who_cannot_undo_a_killed_commit)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
