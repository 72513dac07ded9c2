#!/usr/bin/python3
"""End-to-end benchmark: the standard workloads W1-W5 (docs/performance.md) as whole jobs.

For each size (multiples of the standard N = 2^20 rows, M = 2^21 updates of 16 float32) and each
rank count it times, interleaved over the repetitions (medians are printed):
  - shardops: the whole `mpirun -n R shardops OP ...` process (start-up, HDF5 in and out),
    with the phases from its --report;
  - h5py + NumPy / PyTorch / TensorFlow scripts doing the same job (job_peer.py: read with
    h5py, the op with R threads, write with h5py and fsync; timed after their imports);
    a peer that is not installed is skipped with a note;
  - the job's floor: `mpirun -n R true`, the input datasets' bytes mapped (as shardops maps
    them) and a POSIX write + fsync of the output's bytes (R processes, each its share), and
    the warm kernel (build/bench/shardops_bench at the same size and rank count);
  - start-up: `mpirun -n R shardops --version` against `mpirun -n R true`.
Every output of the first repetition is compared with the NumPy script's. Prints markdown
tables (and writes them with --markdown FILE). Not a ctest test: --quick is its smoke test.

Usage: job_bench.py [--quick] [--sizes 1,4] [--ranks 1,2] [--reps 3] [--ops w1,w2,w3,w4,w5]
                    [--updates-per-row 2] [--peers numpy,torch,tensorflow] [--markdown FILE] [--work DIR]
"""

import argparse
import ctypes
import fractions
import json
import mmap
import multiprocessing
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_SCRIPT = os.path.join(REPO, "scripts", "bench", "job_peer.py")
BASE_ROWS, COLS, PARTITIONS = 1 << 20, 16, 16
WORKLOADS = {"w1": "scatter_nd(sum)", "w2": "tensor_scatter_update", "w3": "gather_nd", "w4": "dynamic_partition",
             "w5": "dynamic_stitch"}
# The input datasets of each workload (what its floor reads).
INPUTS = {"w1": ["idx", "upd"], "w2": ["base", "idx", "upd"], "w3": ["base", "idx"], "w4": ["base", "parts"],
          "w5": ["pos", "piece"]}
# Open MPI on one machine, possibly as root, with ob1 over shared memory only (no other
# transport starts up).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_pml": "ob1",
           "OMPI_MCA_btl": "self,vader", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
# The shardops variants of each job: as the command runs it, and with its outputs made whole
# before they are written (SHARDOPS_STREAM_OUTPUTS=0).
SHARDOPS_VARIANTS = ["shardops", "held"]
# Issue 16's targets: vs the best script at 4x size, vs the floor and start-up at every size.
TARGET_VS_SCRIPT, TARGET_SIZE, TARGET_VS_FLOOR, TARGET_STARTUP_S = 1.3, 4, 1.25, 0.05


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="smoke run: sizes 1/64, one repetition (checks the pipeline; the numbers mean little)")
    p.add_argument("--sizes", default="1,4", help="multiples of the standard sizes, e.g. 1,4 or 1/16 (default 1,4)")
    p.add_argument("--ranks", default="1,2", help="rank counts (default 1,2)")
    p.add_argument("--reps", type=int, default=3, help="repetitions, interleaved; medians (default 3)")
    p.add_argument("--ops", default="w1,w2,w3,w4,w5", help="workloads (default all)")
    p.add_argument("--updates-per-row", default="2",
                   help="index rows (M) per row of the tensor (N), e.g. 1/4 for sparse scatters (default 2: "
                   "the standard M = 2N)")
    p.add_argument("--peers", default="numpy,torch,tensorflow", help="scripts to compare with (default all)")
    p.add_argument("--shardops", default=os.path.join(REPO, "build", "apps", "shardops", "shardops"))
    p.add_argument("--kernel-bench", default=os.path.join(REPO, "build", "bench", "shardops_bench"),
                   help="shardops_bench, for the warm kernel times of the floor")
    p.add_argument("--mpi-init-only", default=os.path.join(REPO, "build", "bench", "mpi_init_only"),
                   help="a program that only calls MPI_Init and MPI_Finalize (MPI's share of the start-up)")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--python", default="/usr/bin/python3", help="python with numpy, h5py (and torch)")
    p.add_argument("--tf-python", default=None,
                   help="python with tensorflow and h5py (default: the first of $SHARDOPS_TF_VENV, "
                   "REPO/.venv-tf, /opt/tfvenv that exists)")
    p.add_argument("--work", default=None, help="folder for the inputs and outputs (default: a temporary one)")
    p.add_argument("--markdown", default=None, help="also write the tables to this file")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 unless every job of every available peer was timed and every output was checked "
                   "against NumPy's and matched (the smoke test uses it)")
    a = p.parse_args()
    if a.quick:
        a.sizes, a.reps = "1/64", 1
    a.sizes = [fractions.Fraction(s) for s in a.sizes.split(",")]
    a.updates_per_row = fractions.Fraction(a.updates_per_row)
    a.ranks = [int(r) for r in a.ranks.split(",")]
    a.ops = a.ops.split(",")
    a.peers = a.peers.split(",")
    for w in a.ops:
        if w not in WORKLOADS:
            p.error("unknown workload %r" % w)
    if a.tf_python is None:
        venvs = [os.environ.get("SHARDOPS_TF_VENV"), os.path.join(REPO, ".venv-tf"), "/opt/tfvenv"]
        pythons = [os.path.join(v, "bin", "python") for v in venvs if v]
        a.tf_python = next((py for py in pythons if os.access(py, os.X_OK)), pythons[0])
    return a


def size_label(s):
    return "%sx" % s


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# ------------------------------------------------------------------ inputs


class Inputs:
    """One size's input file and the byte ranges of its datasets (all contiguous)."""

    def __init__(self, path, rows, updates):
        self.path, self.rows, self.updates = path, rows, updates
        self.ranges = {}  # dataset or group name -> [(offset, bytes)]
        with h5py.File(path, "r") as f:
            for name, obj in f.items():
                members = [obj[str(k)] for k in range(len(obj))] if isinstance(obj, h5py.Group) else [obj]
                self.ranges[name] = [(d.id.get_offset(), d.id.get_storage_size()) for d in members]

    def read_ranges(self, workload):
        return [r for name in INPUTS[workload] for r in self.ranges[name]]


def make_inputs(work, size, updates_per_row, seed=7):
    """Writes (once) the inputs of every workload at this size with h5py, contiguous."""
    rows = int(BASE_ROWS * size)
    updates = int(rows * updates_per_row)
    path = os.path.join(work, "inputs-%dx%d.h5" % (rows, updates))
    if not os.path.exists(path):
        rng = np.random.default_rng(seed)
        base = rng.standard_normal((rows, COLS), dtype=np.float32)
        parts = rng.integers(0, PARTITIONS, rows).astype(np.int32)
        tmp = path + ".tmp"
        with h5py.File(tmp, "w") as f:
            f.attrs["rows"], f.attrs["partitions"] = rows, PARTITIONS
            f["idx"] = rng.integers(0, rows, (updates, 1)).astype(np.int64)
            f["upd"] = rng.standard_normal((updates, COLS), dtype=np.float32)
            f["base"] = base
            f["parts"] = parts
            for k in range(PARTITIONS):  # W5 stitches W4's pieces back with the rows they came from
                where = np.flatnonzero(parts == k)
                f["pos/%d" % k] = where.astype(np.int32)
                f["piece/%d" % k] = base[where]
        os.replace(tmp, path)
    return Inputs(path, rows, updates)


def output_bytes(workload, inputs):
    return (inputs.updates if workload == "w3" else inputs.rows) * COLS * 4


def shardops_argv(workload, inputs, out):
    src = inputs.path
    if workload == "w1":
        return ["scatter-nd", "--indices", src + ":/idx", "--updates", src + ":/upd", "--shape",
                "%d,%d" % (inputs.rows, COLS), "--out", out + ":/out"]
    if workload == "w2":
        return ["tensor-scatter-update", "--tensor", src + ":/base", "--indices", src + ":/idx", "--updates",
                src + ":/upd", "--out", out + ":/out"]
    if workload == "w3":
        return ["gather-nd", "--params", src + ":/base", "--indices", src + ":/idx", "--out", out + ":/out"]
    if workload == "w4":
        return ["dynamic-partition", "--data", src + ":/base", "--partitions", src + ":/parts", "--num-partitions",
                str(PARTITIONS), "--out", out + ":/out"]
    return (["dynamic-stitch", "--indices"] + ["%s:/pos/%d" % (src, k) for k in range(PARTITIONS)] + ["--data"] +
            ["%s:/piece/%d" % (src, k) for k in range(PARTITIONS)] + ["--out", out + ":/out"])


# ------------------------------------------------------------------ running things


class Runner:
    def __init__(self, args):
        self.args = args
        self.env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false", TF_CPP_MIN_LOG_LEVEL="3",
                        PYTHONDONTWRITEBYTECODE="1")
        self.env.update(MPI_ENV)

    def run(self, cmd, env=None, timeout=600):
        """(seconds of the whole process, stdout); raises on failure."""
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or self.env,
                              timeout=timeout, universal_newlines=True)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError("%s: exit %d\n%s" % (" ".join(shlex.quote(c) for c in cmd), proc.returncode,
                                                   proc.stderr[-3000:]))
        return seconds, proc.stdout

    def mpirun(self, ranks, argv):
        return [self.args.mpirun, "-n", str(ranks)] + argv


def peer_python(args, peer):
    return args.tf_python if peer == "tensorflow" else args.python


def available_peers(args, runner):
    """The peers whose python imports them; a note for each one that does not."""
    ok, notes = [], []
    for peer in args.peers:
        python = peer_python(args, peer)
        module = {"numpy": "numpy", "torch": "torch", "tensorflow": "tensorflow"}.get(peer)
        if module is None:
            notes.append("unknown peer %r skipped" % peer)
            continue
        if not os.access(python, os.X_OK):
            notes.append("%s skipped: %s does not exist" % (peer, python))
            continue
        try:
            runner.run([python, "-c", "import h5py, numpy, %s" % module], timeout=120)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            notes.append("%s skipped: %s cannot import it (%s)" % (peer, python, str(e).splitlines()[-1][:200]))
            continue
        ok.append(peer)
    return ok, notes


def remove_output(path):
    if os.path.exists(path):
        os.remove(path)


# ------------------------------------------------------------------ the floor: mapped read, POSIX write


MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)  # Linux 5.14; Python 3.11 lacks the name


def _read_share(path, ranges, rank, ranks, barrier):
    """Maps this worker's share of every byte range (privately, every page mapped at once),
    as shardops maps its inputs, or, where the OS lacks MADV_POPULATE_READ, reads it into
    fresh memory. Both are what the least a job can pay for bytes in the page cache."""
    share = []
    for offset, size in ranges:
        lo, hi = size * rank // ranks, size * (rank + 1) // ranks
        share.append((offset + lo, hi - lo))
    barrier.wait()
    t0 = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    held = []
    for offset, size in share:
        if size == 0:
            continue
        start = offset - offset % mmap.ALLOCATIONGRANULARITY
        m = mmap.mmap(fd, size + offset - start, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE,
                      offset=start)
        try:
            m.madvise(MADV_POPULATE_READ)
        except OSError:  # an older kernel: read the bytes instead
            buffer = np.empty(size, np.uint8)
            done = 0
            while done < size:  # one read moves at most 2 GiB
                n = os.preadv(fd, [memoryview(buffer)[done:]], offset + done)
                if n <= 0:
                    raise OSError("short read of %s" % path)
                done += n
            m.close()
            m = buffer
        held.append(m)
    os.close(fd)
    barrier.wait()
    seconds = time.perf_counter() - t0
    for m in held:
        if isinstance(m, mmap.mmap):
            m.close()
    return seconds


# Larger writes get large page-cache folios, which are slow to fault in on a VM that
# reports free memory to its host; small ones cost nothing elsewhere.
WRITE_PIECE = 256 << 10
# What has been written is handed to the disk every 8 MiB (sync_file_range
# SYNC_FILE_RANGE_WRITE), so the fsync has little left to wait for.
WRITEBACK_SLICE = 8 << 20
_LIBC = ctypes.CDLL(None, use_errno=True)


def _write_share(path, total, rank, ranks, barrier):
    """Writes this worker's share of a new file; worker 0 fsyncs the file after all wrote."""
    lo, hi = total * rank // ranks, total * (rank + 1) // ranks
    buffer = np.ones(hi - lo, np.uint8)  # computed data is in memory already
    barrier.wait()
    t0 = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    done = flushed = 0
    while done < hi - lo:  # in pieces of 256 KiB, as shardops writes (docs/design.md#memory)
        done += os.pwritev(fd, [memoryview(buffer)[done:done + WRITE_PIECE]], lo + done)
        if done - flushed >= WRITEBACK_SLICE or done == hi - lo:  # start the disk writes, as shardops does
            _LIBC.sync_file_range(fd, ctypes.c_int64(lo + flushed), ctypes.c_int64(done - flushed), 2)
            flushed = done
    barrier.wait()
    if rank == 0:
        os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - t0


def _worker(kind, job, rank, ranks, barrier, queue):
    try:
        if kind == "read":
            seconds = _read_share(job["path"], job["ranges"], rank, ranks, barrier)
        else:
            seconds = _write_share(job["path"], job["bytes"], rank, ranks, barrier)
        queue.put((rank, seconds, None))
    except Exception as e:  # reported by the parent
        barrier.abort()
        queue.put((rank, None, repr(e)))


def posix_floor(kind, job, ranks):
    """Seconds of rank 0 (it waits for the others) reading or writing with `ranks` processes."""
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(ranks), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(kind, job, r, ranks, barrier, queue)) for r in range(ranks)]
    for p in procs:
        p.start()
    results = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    errors = [e for _, _, e in results if e]
    if errors:
        raise RuntimeError("POSIX %s floor failed: %s" % (kind, errors[0]))
    return dict((r, s) for r, s, _ in results)[0]


# ------------------------------------------------------------------ the floor: warm kernels


def warm_kernels(args, runner, inputs, ranks):
    """{workload: seconds of a warm call} from shardops_bench at this size and rank count."""
    if not os.access(args.kernel_bench, os.X_OK):
        return {}, "warm kernel: %s not built (cmake --build build --target shardops_bench)" % args.kernel_bench
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        path = tmp.name
    try:
        reps = ["--repeats", "1", "--warmup", "1"] if args.quick else ["--repeats", "3", "--warmup", "1"]
        runner.run(runner.mpirun(ranks, [args.kernel_bench, "--rows", str(inputs.rows), "--updates",
                                         str(inputs.updates), "--ops", ",".join(args.ops), "--json", path] + reps))
        with open(path) as f:
            report = json.load(f)
        return {w["id"].lower(): w["time_s"] for w in report["workloads"]}, None
    finally:
        os.remove(path)


# ------------------------------------------------------------------ comparing outputs


def output_arrays(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
        f.visititems(visit)
    return out


def duplicate_winners_only(got, ref, inputs):
    """True when every value where an update output differs from NumPy's lies in a row that
    several updates target and equals that column of one of them: which duplicate wins is
    left undefined by TF (and a multi-threaded copy may take columns from different ones)."""
    rows = np.flatnonzero((got != ref).reshape(got.shape[0], -1).any(axis=1))
    with h5py.File(inputs.path, "r") as f:
        idx, upd = f["idx"][()][:, 0], f["upd"]
        if np.any(np.bincount(idx, minlength=got.shape[0])[rows] < 2):
            return False
        candidates = np.flatnonzero(np.isin(idx, rows))
        candidates = candidates[np.argsort(idx[candidates], kind="stable")]
        targets = idx[candidates]
        equal = (upd[()][candidates] == got[targets]).astype(np.uint8)
    starts = np.flatnonzero(np.r_[True, targets[1:] != targets[:-1]])
    covered = np.maximum.reduceat(equal, starts, axis=0).astype(bool)  # per target row, per column
    target_rows = targets[starts]
    return bool(np.all(covered | (got[target_rows] == ref[target_rows])))


def compare(got_path, ref_path, workload, inputs):
    """'equal', 'close (max rel. error E)', 'equal but for duplicates' or 'DIFFERS: why'
    against the NumPy output."""
    got, ref = output_arrays(got_path), output_arrays(ref_path)
    if sorted(got) != sorted(ref):
        return "DIFFERS: datasets %s, NumPy wrote %s" % (sorted(got)[:4], sorted(ref)[:4])
    worst = 0.0
    for name in ref:
        a, b = got[name], ref[name]
        if a.shape != b.shape or a.dtype != b.dtype:
            return "DIFFERS: %s is %s %s, NumPy's %s %s" % (name, a.dtype, a.shape, b.dtype, b.shape)
        if a.tobytes() == b.tobytes():
            continue
        if workload == "w2" and duplicate_winners_only(a, b, inputs):
            return "equal but for which duplicate update wins (undefined in TF)"
        if not np.allclose(a, b, rtol=1e-5, atol=1e-5):
            return "DIFFERS: %s, %d of %d values" % (name, int(np.count_nonzero(a != b)), a.size)
        scale = np.maximum(np.abs(b), 1e-30)
        worst = max(worst, float(np.max(np.abs(a - b) / scale)))
    return "equal" if worst == 0.0 else "close (max rel. error %.1e)" % worst


# ------------------------------------------------------------------ the benchmark


class Bench:
    def __init__(self, args, runner, work, peers):
        self.args, self.runner, self.work, self.peers = args, runner, work, peers
        self.times = {}  # (size, ranks, workload, what) -> [seconds]
        self.phases = {}  # (size, ranks, workload) -> [report seconds]
        self.startup = {}  # (ranks, what) -> [seconds]
        self.checks = {}  # (size, ranks, workload, who) -> comparison
        self.kernels = {}  # (size, ranks) -> {workload: seconds}
        self.streamed = {}  # (size, ranks, workload) -> whether the job's report says its outputs were streamed
        self.notes = []

    def add(self, key, seconds):
        self.times.setdefault(key, []).append(seconds)

    def run_shardops(self, size, ranks, w, inputs, out, held=False):
        """The job; held: with SHARDOPS_STREAM_OUTPUTS=0, its outputs made whole before they are
        written (what it costs where the op would stream them)."""
        report = os.path.join(self.work, "report.json")
        for p in (out, report):
            if os.path.exists(p):
                os.remove(p)
        env = dict(self.runner.env, SHARDOPS_STREAM_OUTPUTS="0") if held else None
        seconds, _ = self.runner.run(self.runner.mpirun(ranks, [self.args.shardops] +
                                                        shardops_argv(w, inputs, out) + ["-q", "--report", report]),
                                     env=env)
        self.add((size, ranks, w, "held" if held else "shardops"), seconds)
        if held:
            return
        with open(report) as f:
            doc = json.load(f)
        self.phases.setdefault((size, ranks, w), []).append(doc["seconds"])
        self.streamed[(size, ranks, w)] = any(o.get("streamed") for o in doc["outputs"])

    def run_peer(self, size, ranks, w, inputs, peer, out):
        remove_output(out)
        env = dict(self.runner.env, OMP_NUM_THREADS=str(ranks))
        _, stdout = self.runner.run([peer_python(self.args, peer), PEER_SCRIPT, peer, w, inputs.path, out,
                                     "--threads", str(ranks)], env=env)
        self.add((size, ranks, w, peer), json.loads(stdout.strip().splitlines()[-1])["seconds"])

    def run_floor(self, size, ranks, w, inputs):
        self.add((size, ranks, w, "read"), posix_floor("read", {"path": inputs.path,
                                                                 "ranges": inputs.read_ranges(w)}, ranks))
        target = os.path.join(self.work, "floor-write.bin")
        remove_output(target)
        self.add((size, ranks, w, "write"), posix_floor("write", {"path": target,
                                                                   "bytes": output_bytes(w, inputs)}, ranks))
        os.remove(target)

    def run_startup(self, ranks):
        programs = {"true": ["true"], "version": [self.args.shardops, "--version"]}
        if os.access(self.args.mpi_init_only, os.X_OK):
            programs["mpi_init"] = [self.args.mpi_init_only]
        elif not any("mpi_init_only" in n for n in self.notes):
            self.notes.append("start-up: %s not built (cmake --build build --target mpi_init_only)" %
                              self.args.mpi_init_only)
        for what, argv in programs.items():
            self.startup.setdefault((ranks, what), []).append(self.runner.run(self.runner.mpirun(ranks, argv))[0])

    def job(self, rep, size, ranks, w, inputs):
        """Every variant of one job once, in an order that rotates with the repetition."""
        outs = {who: os.path.join(self.work, "out-%s.h5" % who) for who in SHARDOPS_VARIANTS + self.peers}
        variants = SHARDOPS_VARIANTS + self.peers + ["floor"]
        k = rep % len(variants)
        for who in variants[k:] + variants[:k]:
            if who in SHARDOPS_VARIANTS:
                self.run_shardops(size, ranks, w, inputs, outs[who], held=who == "held")
            elif who == "floor":
                self.run_floor(size, ranks, w, inputs)
            else:
                self.run_peer(size, ranks, w, inputs, who, outs[who])
        if rep == 0:
            if "numpy" in self.peers:
                for who in SHARDOPS_VARIANTS + [p for p in self.peers if p != "numpy"]:
                    self.checks[(size, ranks, w, who)] = compare(outs[who], outs["numpy"], w, inputs)
            else:
                self.notes.append("outputs not checked: the NumPy script is not available")
        for path in outs.values():
            remove_output(path)

    def run(self, sizes):
        self.inputs = {size: make_inputs(self.work, size, self.args.updates_per_row) for size in sizes}
        for size in sizes:
            for ranks in self.args.ranks:
                kernels, note = warm_kernels(self.args, self.runner, self.inputs[size], ranks)
                self.kernels[(size, ranks)] = kernels
                if note and note not in self.notes:
                    self.notes.append(note)
        self.loads = [load()]
        for rep in range(self.args.reps):
            for ranks in self.args.ranks:
                self.run_startup(ranks)
            for size in sizes:
                for ranks in self.args.ranks:
                    for w in self.args.ops:
                        self.job(rep, size, ranks, w, self.inputs[size])
                        self.loads.append(load())
            print("job_bench: repetition %d of %d done (load %.2f)" % (rep + 1, self.args.reps, load()),
                  file=sys.stderr, flush=True)


# ------------------------------------------------------------------ tables


def med(values):
    return statistics.median(values) if values else None


def fmt(v, digits=3):
    return "-" if v is None else ("%.*f" % (digits, v))


def tables(b, sizes):
    args = b.args
    lines = []
    head = ["size", "ranks", "workload", "shardops s", "outputs held s"] + ["%s s" % p for p in b.peers] + [
        "best script", "best / shardops", "floor s", "shardops / floor", "outputs vs NumPy"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * 3 + "---:|" * (len(head) - 4) + "---|"]
    misses = []
    checked = SHARDOPS_VARIANTS + [p for p in b.peers if p != "numpy"]
    for size in sizes:
        for ranks in args.ranks:
            for w in args.ops:
                s = med(b.times.get((size, ranks, w, "shardops"), []))
                peer_times = {p: med(b.times.get((size, ranks, w, p), [])) for p in b.peers}
                known = {p: t for p, t in peer_times.items() if t is not None}
                best = min(known, key=known.get) if known else None
                floor = floor_seconds(b, size, ranks, w)
                vs_best = known[best] / s if best and s else None
                vs_floor = s / floor if floor and s else None
                checks = [b.checks.get((size, ranks, w, who)) for who in checked]
                check_text = "; ".join("%s %s" % (who, c) for who, c in zip(checked, checks) if c)
                # The job with its outputs held whole, where the job itself streamed them.
                held = med(b.times.get((size, ranks, w, "held"), [])) if b.streamed.get((size, ranks, w)) else None
                row = [size_label(size), str(ranks), "%s %s" % (w.upper(), WORKLOADS[w]), fmt(s), fmt(held)]
                row += [fmt(peer_times[p]) for p in b.peers]
                row += [best or "-", "%sx" % fmt(vs_best, 2) if vs_best else "-", fmt(floor),
                        "%sx" % fmt(vs_floor, 2) if vs_floor else "-", check_text or "-"]
                lines.append("| " + " | ".join(row) + " |")
                if args.quick:
                    continue  # sizes too small for the targets
                if vs_best is not None and vs_best < TARGET_VS_SCRIPT and size >= TARGET_SIZE:
                    misses.append("%s %s at %d ranks: %.2fx the best script (%s), target >= %.1fx" %
                                  (w.upper(), size_label(size), ranks, vs_best, best, TARGET_VS_SCRIPT))
                if vs_floor is not None and vs_floor > TARGET_VS_FLOOR:
                    misses.append("%s %s at %d ranks: %.2fx its floor, target <= %.2fx" %
                                  (w.upper(), size_label(size), ranks, vs_floor, TARGET_VS_FLOOR))
    lines += ["", "Where the time goes (medians, seconds): the shardops job's phases from its --report "
              "(read, kernel = validate + route + apply, write; rest = the process less those: start-up, "
              "opening files, commit, exit) and the floor's parts.", ""]
    head = ["size", "ranks", "workload", "job", "read", "kernel", "write", "rest", "floor: mpirun true",
            "mapped read", "MB read", "warm kernel", "POSIX write+fsync", "MB written"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * 3 + "---:|" * (len(head) - 3)]
    for size in sizes:
        for ranks in args.ranks:
            for w in args.ops:
                ph = b.phases.get((size, ranks, w), [])
                job = med(b.times.get((size, ranks, w, "shardops"), []))
                read = med([p["read"] for p in ph])
                kernel = med([p["validate"] + p["route"] + p["apply"] for p in ph])
                write = med([p["write"] for p in ph])
                rest = job - read - kernel - write if None not in (job, read, kernel, write) else None
                inputs = b.inputs[size]
                row = [size_label(size), str(ranks), w.upper(), fmt(job), fmt(read), fmt(kernel), fmt(write),
                       fmt(rest), fmt(med(b.startup.get((ranks, "true"), []))),
                       fmt(med(b.times.get((size, ranks, w, "read"), []))),
                       "%.0f" % (sum(n for _, n in inputs.read_ranges(w)) / 1e6),
                       fmt(b.kernels.get((size, ranks), {}).get(w)),
                       fmt(med(b.times.get((size, ranks, w, "write"), []))), "%.0f" % (output_bytes(w, inputs) / 1e6)]
                lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Start-up (medians, seconds): target `shardops --version` within %.2f s of `mpirun true`; "
              "MPI_Init + MPI_Finalize = bench/tools/mpi_init_only, what any MPI program pays." % TARGET_STARTUP_S, "",
              "| ranks | mpirun true | mpirun MPI_Init + MPI_Finalize | mpirun shardops --version | "
              "--version less true | --version less MPI_Init + MPI_Finalize |", "|---:|---:|---:|---:|---:|---:|"]
    for ranks in args.ranks:
        t, m, v = (med(b.startup.get((ranks, what), [])) for what in ("true", "mpi_init", "version"))
        diff = v - t if None not in (t, v) else None
        lines.append("| %d | %s | %s | %s | %s | %s |" % (ranks, fmt(t), fmt(m), fmt(v), fmt(diff),
                                                          fmt(v - m if None not in (v, m) else None)))
        if diff is not None and diff > TARGET_STARTUP_S and not args.quick:
            misses.append("start-up at %d ranks: --version %.3f s after mpirun true, target <= %.2f s" %
                          (ranks, diff, TARGET_STARTUP_S))
    return lines, misses


def floor_seconds(b, size, ranks, w):
    parts = [med(b.startup.get((ranks, "true"), [])), med(b.times.get((size, ranks, w, "read"), [])),
             b.kernels.get((size, ranks), {}).get(w), med(b.times.get((size, ranks, w, "write"), []))]
    return None if None in parts else sum(parts)


def header(args, started, loads):
    commit = subprocess.run(["git", "-C", REPO, "log", "-1", "--format=%h %s"], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout.strip()
    return ["Run %s UTC, commit %s, %d core(s); load average (1 min) %.2f-%.2f over the run." %
            (started, commit[:72], os.cpu_count(), min(loads), max(loads)),
            "Command: `%s`" % " ".join(shlex.quote(a) for a in sys.argv),
            "Sizes: %s of N = 2^20 rows, M = %s N updates (index rows), 16 float32 columns, %d partitions; median "
            "of %d interleaved repetitions; scripts run with as many threads as the job has ranks, timed after their "
            "imports; shardops and the floor include their whole processes." %
            (", ".join(size_label(s) for s in args.sizes), args.updates_per_row, PARTITIONS, args.reps), ""]


def main():
    args = parse_args()
    runner = Runner(args)
    if not os.access(args.shardops, os.X_OK):
        print("job_bench: %s is not built (bash scripts/build.sh)" % args.shardops, file=sys.stderr)
        return 2
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    peers, notes = available_peers(args, runner)
    work = args.work or tempfile.mkdtemp(prefix="shardops-job-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        b = Bench(args, runner, work, peers)
        b.notes += notes
        b.run(args.sizes)
        lines, misses = tables(b, args.sizes)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    text = header(args, started, b.loads) + lines + [""]
    text += ["Note: " + n for n in b.notes]
    if args.quick:
        text.append("Targets not checked (--quick).")
    else:
        text += ["Missed target: " + m for m in misses] or ["Every target met."]
    print("\n".join(text))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(text) + "\n")
    problems = incomplete(b, args.sizes)
    for problem in problems:
        print("job_bench: " + problem, file=sys.stderr)
    return 1 if args.strict and problems else 0


def incomplete(b, sizes):
    """What a --strict run must not have: a job without a time, an output unchecked or differing."""
    problems = []
    for size in sizes:
        for ranks in b.args.ranks:
            for w in b.args.ops:
                where = "%s %s at %d ranks" % (w.upper(), size_label(size), ranks)
                for who in SHARDOPS_VARIANTS + b.peers:
                    if not b.times.get((size, ranks, w, who)):
                        problems.append("%s: no time for %s" % (where, who))
                    check = b.checks.get((size, ranks, w, who), "equal" if who == "numpy" else None)
                    if check is None or check.startswith("DIFFERS"):
                        problems.append("%s: %s output %s" % (where, who, check or "not checked against NumPy's"))
    return problems


if __name__ == "__main__":
    sys.exit(main())
