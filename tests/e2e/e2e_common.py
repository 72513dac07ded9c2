"""Shared helpers of the end-to-end tests of the shardops command.

Runs the real binary under mpiexec (with a timeout: a hang is a failure), writes inputs
and reads outputs with h5py, compares arrays byte for byte, and collects failures so
that one run reports every broken case. Run by Debian's /usr/bin/python3 (numpy, h5py).
"""

import argparse
import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

try:
    import numpy as np
    import h5py
except ImportError as e:  # pragma: no cover - a setup problem, not a test result
    sys.stderr.write(
        "e2e: %s: the end-to-end tests need numpy and h5py (Debian: apt-get install python3-numpy "
        "python3-h5py; scripts/setup.sh installs them) and run with /usr/bin/python3\n" % e)
    sys.exit(1)

# Every dtype shardops supports, by NumPy name.
ALL_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "bool", "complex64", "complex128"]
COMPLEX_DTYPES = ["complex64", "complex128"]
INDEX_DTYPES = ["int32", "int64"]
# The ops, from the op registry (src/shardops/ops/OpRegistry.cpp, the one list of them):
# parse_args() fills these from `shardops --list-ops`, the pytest suite (tests/python) from
# the module's op_registry(). They are filled in place, so `from e2e_common import OPS`
# sees them.
REGISTRY = []  # the entries as --list-ops prints them
OPS = []  # the subcommands, in the registry's order
TENSOR_SCATTER_OPS = []  # the subcommands of the TensorScatter family


def load_ops(entries):
    """Fills REGISTRY, OPS and TENSOR_SCATTER_OPS from the registry's entries."""
    REGISTRY[:] = entries
    OPS[:] = [e["command"] for e in entries if e["command"]]
    TENSOR_SCATTER_OPS[:] = [e["command"] for e in entries if e["family"] == "tensor_scatter"]
    if not OPS:
        raise RuntimeError("e2e: the op registry lists no op commands")


def load_ops_from(shardops_binary):
    """load_ops of what `shardops --list-ops` prints (answered before MPI starts)."""
    import json
    out = subprocess.run([shardops_binary, "--list-ops"], check=True, stdout=subprocess.PIPE, timeout=60).stdout
    load_ops(json.loads(out))


def op_info(command):
    """The registry's entry of an op subcommand ("tensor-scatter-add")."""
    for e in REGISTRY:
        if e["command"] == command:
            return e
    raise KeyError("%s is not an op of the registry (%d ops loaded)" % (command, len(REGISTRY)))


def has_kernel(command, dtype):
    """Whether TensorFlow's CPU has a kernel of the op for dtype (a NumPy dtype or name; "S"
    for strings), as the registry says."""
    e = op_info(command)
    name = "string" if np.dtype(dtype).kind in "SUO" else np.dtype(dtype).name
    return name not in e["no_kernel_dtypes"]
SKIP_RC = 77  # ctest SKIP_RETURN_CODE of these tests

# Open MPI on one machine, possibly as root, ob1 over shared memory only (no other transport
# starts up); one thread per rank.
MPI_ENV_DEFAULTS = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,vader",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMP_NUM_THREADS": "1",
    "OMP_PROC_BIND": "false",
}


def parse_args(description, default_np, extra=None):
    p = argparse.ArgumentParser(description=description)
    if extra:
        extra(p)
    p.add_argument("--shardops", required=True, help="path of the shardops binary")
    p.add_argument("--mpiexec", default="mpiexec", help="mpiexec / mpirun to launch it with")
    p.add_argument("--mpiexec-flags", default="--oversubscribe",
                   help="extra mpiexec flags, one string (default: --oversubscribe)")
    p.add_argument("--np", type=int, default=default_np, help="number of MPI ranks")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one shardops run may take")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.add_argument("-v", "--verbose", action="store_true", help="print every command and its time")
    p.add_argument("--filter", default="",
                   help="run only cases whose name contains this text (or one of several, comma-separated)")
    args = p.parse_args()
    load_ops_from(args.shardops)
    return args


class Result:
    """What one shardops run did."""

    def __init__(self, cmd, rc, stdout, stderr, seconds, timed_out):
        self.cmd, self.rc, self.stdout, self.stderr = cmd, rc, stdout, stderr
        self.seconds, self.timed_out = seconds, timed_out

    def command_line(self):
        return " ".join(_quote(c) for c in self.cmd)

    def describe(self, tail=2500):
        text = "    $ %s\n    exit %s after %.2f s%s\n" % (self.command_line(), self.rc, self.seconds,
                                                        " (TIMED OUT)" if self.timed_out else "")
        if self.stdout.strip():
            text += "    stdout: " + self.stdout[-tail:].rstrip().replace("\n", "\n            ") + "\n"
        if self.stderr.strip():
            text += "    stderr: " + self.stderr[-tail:].rstrip().replace("\n", "\n            ") + "\n"
        return text


def _quote(s):
    s = str(s)
    if s and all(c.isalnum() or c in "-_./:=,+@" for c in s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


class Shardops:
    """Launches the binary under mpiexec."""

    def __init__(self, args):
        self.binary = os.path.abspath(args.shardops)
        self.mpiexec = args.mpiexec
        self.flags = args.mpiexec_flags.split()
        self.np = args.np
        self.timeout = args.timeout
        self.verbose = args.verbose
        self.runs = 0
        self.seconds = 0.0
        self.env = dict(os.environ)
        for k, v in MPI_ENV_DEFAULTS.items():
            self.env.setdefault(k, v)
        if not os.access(self.binary, os.X_OK):
            raise SystemExit("e2e: shardops binary %s does not exist or is not executable (build target "
                             "shardops_app first)" % self.binary)

    def run(self, argv, np=None, timeout=None, cwd=None, env=None, rlimits=None):
        """Runs shardops with argv on np ranks (default --np); env adds/overrides variables;
        rlimits: {resource.RLIMIT_…: value} set for the job, as `ulimit` would."""
        cmd = [self.mpiexec, "-n", str(np or self.np)] + self.flags + [self.binary] + [str(a) for a in argv]
        limit = None
        if rlimits:
            def limit():
                for which, value in rlimits.items():
                    resource.setrlimit(which, (value, value))
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(self.env, **(env or {})),
                                cwd=cwd, preexec_fn=limit,
                                start_new_session=True, universal_newlines=True, errors="replace")
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout or self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the process group of this mpiexec only
            out, err = proc.communicate()
        seconds = time.monotonic() - t0
        self.runs += 1
        self.seconds += seconds
        r = Result(cmd, None if timed_out else proc.returncode, out, err, seconds, timed_out)
        if self.verbose:
            print("  [%.2f s, exit %s] %s" % (seconds, r.rc, r.command_line()), flush=True)
        return r


class CaseFailed(Exception):
    pass


class Suite:
    """Runs named cases, records failures with details, prints a summary."""

    def __init__(self, name, args):
        self.name = name
        self.args = args
        self.failures = []
        self.passed = 0
        self.skipped = []
        self.t0 = time.monotonic()
        self._current = None
        self._notes = []

    def wanted(self, case_name):
        return not self.args.filter or any(part in case_name for part in self.args.filter.split(","))

    def case(self, case_name, fn, *a, **kw):
        """Runs fn(*a, **kw) as one case; an exception or a failed check fails the case."""
        if not self.wanted(case_name):
            return
        self._current, self._notes = case_name, []
        t0 = time.monotonic()
        try:
            fn(*a, **kw)
        except CaseFailed as e:
            self.failures.append((case_name, str(e)))
        except Exception:  # a bug in the test or an unreadable output: report it as this case's failure
            self.failures.append((case_name, "exception in the test:\n" + traceback.format_exc()))
        else:
            if self._notes:
                self.failures.append((case_name, "\n".join(self._notes)))
            else:
                self.passed += 1
        if self.failures and self.failures[-1][0] == case_name:
            print("FAIL %s (%.2f s)\n%s" % (case_name, time.monotonic() - t0, _indent(self.failures[-1][1])),
                  flush=True)
        elif self.args.verbose:
            print("ok   %s (%.2f s)" % (case_name, time.monotonic() - t0), flush=True)
        self._current = None

    def check(self, cond, message, result=None):
        """A soft check: records the message (and the run) and lets the case go on."""
        if not cond:
            self._notes.append(message + ("\n" + result.describe() if result is not None else ""))
        return bool(cond)

    def require(self, cond, message, result=None):
        """A hard check: ends the case."""
        if not cond:
            self._notes.append(message + ("\n" + result.describe() if result is not None else ""))
            raise CaseFailed("\n".join(self._notes))

    def skip(self, case_name, why):
        self.skipped.append((case_name, why))

    def finish(self, runner=None):
        dt = time.monotonic() - self.t0
        runs = " in %d shardops runs (%.1f s of them)" % (runner.runs, runner.seconds) if runner else ""
        print("%s: %d passed, %d failed, %d skipped%s; %.1f s" % (self.name, self.passed, len(self.failures),
                                                                 len(self.skipped), runs, dt))
        for name, why in self.skipped:
            print("  skipped %s: %s" % (name, why))
        if self.failures:
            print("FAILED cases:")
            for name, _ in self.failures:
                print("  " + name)
        return 1 if self.failures else 0


class CaseFolder:
    """What a case of run_cases() gets: the suite and its own scratch folder."""

    def __init__(self, suite, d):
        self.suite, self.d = suite, d


def run_cases(suite, args, sh, tag, cases):
    """Runs each (name, fn, *extra) the filter wants as one case, fn(CaseFolder, sh, *extra),
    in a fresh scratch folder (kept with --keep)."""
    for name, fn, *extra in cases:
        if not suite.wanted(name):
            continue
        with work_dir(args, tag) as d:
            suite.case(name, fn, CaseFolder(suite, d), sh, *extra)


def _indent(text, prefix="  "):
    return "\n".join(prefix + line for line in text.splitlines())


@contextlib.contextmanager
def work_dir(args, tag):
    d = tempfile.mkdtemp(prefix="shardops-e2e-%s-" % tag)
    try:
        yield d
    finally:
        if args.keep:
            print("kept " + d)
        else:
            shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# HDF5 in and out


def ref(path, dataset):
    """The FILE:/path name of a dataset."""
    return "%s:%s" % (path, dataset if dataset.startswith("/") else "/" + dataset)


def gather_inputs(d, rows, index_rows, cols=16, index_dtype=np.int32, seed=1):
    """GatherNd's inputs in d/in.h5: /params [rows, cols] float32 and /idx [index_rows, 1] of
    index_dtype. Returns the file's path and the rows gather-nd gives (NumPy's)."""
    rng = np.random.default_rng(seed)
    params = rng.standard_normal((rows, cols)).astype(np.float32)
    idx = rng.integers(0, rows, size=(index_rows, 1)).astype(index_dtype)
    path = os.path.join(d, "in.h5")
    write_h5(path, {"/params": params, "/idx": idx}, mode="w")
    return path, params[idx[:, 0]]


def write_h5(path, datasets, mode="a", **create_kw):
    """Writes {"/name": array} into path with h5py (h5py's own type mapping)."""
    with h5py.File(path, mode) as f:
        for name, arr in datasets.items():
            arr = np.asarray(arr)
            if name in f:
                del f[name]
            kw = dict(create_kw)
            if arr.dtype == object:  # bytes objects: variable-length strings
                kw.setdefault("dtype", h5py.string_dtype())
            if arr.size == 0 or arr.ndim == 0:
                kw.pop("chunks", None)
                kw.pop("compression", None)
            f.create_dataset(name, data=arr, **kw)


def read_h5(path, dataset):
    with h5py.File(path, "r") as f:
        ds = f[dataset]
        if not isinstance(ds, h5py.Dataset):
            raise CaseFailed("%s:%s is not a dataset" % (path, dataset))
        return np.asarray(ds[()], dtype=ds.dtype).reshape(ds.shape)


def read_attrs(path, dataset):
    with h5py.File(path, "r") as f:
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f[dataset].attrs.items()}


def file_state(path):
    """Bytes of a file (None if absent): to show an output path was not touched."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def dir_listing(path):
    try:
        return sorted(os.listdir(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def first_difference(actual, expected):
    a = np.ascontiguousarray(actual).reshape(-1)
    e = np.ascontiguousarray(expected).reshape(-1)
    ab = a.view(np.uint8).reshape(a.size, -1) if a.size else a
    eb = e.view(np.uint8).reshape(e.size, -1) if e.size else e
    diff = np.flatnonzero((ab != eb).any(axis=1)) if a.size else []
    if len(diff) == 0:
        return "no element differs"
    i = int(diff[0])
    pos = np.unravel_index(i, expected.shape) if expected.ndim else ()
    return "%d of %d elements differ; first at %s: got %r, expected %r" % (len(diff), e.size, list(pos), a[i], e[i])


def same_array(suite, what, actual, expected, result=None):
    """Byte-exact comparison of dtype, shape and contents (soft check)."""
    expected = np.asarray(expected)
    if not suite.check(actual.dtype == expected.dtype,
                       "%s: dtype %s, expected %s" % (what, actual.dtype, expected.dtype), result):
        return False
    if not suite.check(actual.shape == expected.shape,
                       "%s: shape %s, expected %s" % (what, list(actual.shape), list(expected.shape)), result):
        return False
    ok = np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes()
    return suite.check(ok, "%s: contents differ: %s" % (what, first_difference(actual, expected)), result)


def expect_success(suite, result, what="shardops"):
    suite.require(not result.timed_out, "%s hung (killed after the timeout)" % what, result)
    suite.require(result.rc == 0, "%s failed (exit %s)" % (what, result.rc), result)


def error_lines(stderr):
    return [line for line in stderr.splitlines() if "shardops: error" in line or "shardops: internal error" in line]
