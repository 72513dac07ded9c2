"""pytest under mpirun (ctest python_np_N): every rank runs the same tests in the same
order, so each test's collective calls match across ranks. Tests make all their calls
first and assert afterwards, so that a failed check on one rank cannot leave the others
waiting in a collective. TensorFlow (a separate venv with its own NumPy) runs once per
session on rank 0, through tests/e2e/tf_worker.py; without it the TensorFlow tests are
skipped and the session exits 77 (ctest's SKIP_RETURN_CODE) if nothing failed.
TensorFlow's answers are kept in $SHARDOPS_TF_CACHE (ctest: the build folder) under a hash
of the cases' inputs, the worker and the TensorFlow python, so the runs at 1-4 ranks start
TensorFlow once."""

import hashlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

import e2e_common  # noqa: E402
import shardops  # noqa: E402
import shards  # noqa: E402
import test_tf_oracle  # noqa: E402  (the TF cases, worker and message rules of the e2e oracle test)

# The ops the cases run over, from the module's op registry (the e2e tests ask the command).
e2e_common.load_ops(shardops.op_registry())

WORLD = MPI.COMM_WORLD
_tf_missing = []


@pytest.fixture(params=["whole", "distributed"])
def comm(request):
    """None (whole tensors on every rank) or MPI.COMM_WORLD (row blocks)."""
    return None if request.param == "whole" else WORLD


@pytest.fixture(scope="session")
def shared_dir():
    """A folder every rank sees (rank 0 makes it, removes it at the end)."""
    path = tempfile.mkdtemp(prefix="shardops-pytest-") if WORLD.Get_rank() == 0 else None
    path = WORLD.bcast(path, root=0)
    yield path
    WORLD.Barrier()
    if WORLD.Get_rank() == 0:
        shutil.rmtree(path, ignore_errors=True)


def tf_cases():
    t = test_tf_oracle
    return t.dtype_cases() + t.bad_index_cases() + t.empty_and_shape_cases() + t.string_cases() + shards.batch_dims_cases()


def cache_key(tf_python, cases):
    h = hashlib.sha256(tf_python.encode())
    with open(os.path.join(REPO, "tests", "e2e", "tf_worker.py"), "rb") as f:
        h.update(f.read())
    for c in cases:
        h.update(repr((c.name, c.op, c.num_partitions, c.shape, c.bad_indices, c.batch_dims)).encode())
        for k, v in c.arrays.items():
            v = np.asarray(v)
            h.update(repr((k, v.dtype.str, v.shape)).encode())
            h.update(np.ascontiguousarray(v).tobytes())
    return h.hexdigest()[:24]


def run_tf_cached(tf_python, d, cases):
    """test_tf_oracle.run_tf, its answers kept in $SHARDOPS_TF_CACHE when set."""
    cache = os.environ.get("SHARDOPS_TF_CACHE")
    kept = os.path.join(cache, cache_key(tf_python, cases)) if cache else None
    if not (kept and os.path.isdir(kept)):
        test_tf_oracle.run_tf(tf_python, d, cases)
        if kept:
            os.makedirs(cache, exist_ok=True)
            staging = tempfile.mkdtemp(dir=cache)
            for name in ("results.json", "outputs.npz"):
                shutil.copy(os.path.join(d, name), staging)
            try:
                os.rename(staging, kept)  # another run may have kept the same answers first
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
    src = kept if kept else d
    with open(os.path.join(src, "results.json")) as f:
        results = json.load(f)
    with np.load(os.path.join(src, "outputs.npz")) as outputs:
        return results, {k: outputs[k] for k in outputs.files}


@pytest.fixture(scope="session")
def tf_oracle(shared_dir):
    """(cases, results, outputs): TensorFlow's verdict and outputs for every case."""
    cases = tf_cases()
    answer = None
    if WORLD.Get_rank() == 0:
        tf_python, tried = test_tf_oracle.find_tf_python(REPO)
        if tf_python is None:
            answer = ("no Python with TensorFlow (tried: %s)" % "; ".join(tried), None, None)
        else:
            d = os.path.join(shared_dir, "tf")
            os.makedirs(d)
            try:
                results, outputs = run_tf_cached(tf_python, d, cases)
                answer = (None, results, outputs)
            except BaseException as e:  # noqa: B902 - run_tf exits on a worker failure: tell every rank
                answer = (None, "the TensorFlow worker failed: %s" % e, None)
    missing, results, outputs = WORLD.bcast(answer, root=0)
    if isinstance(results, str):
        pytest.fail(results)
    if missing:
        _tf_missing.append(missing)
        pytest.skip(missing)
    return cases, results, outputs


def pytest_sessionfinish(session, exitstatus):
    if _tf_missing and exitstatus == 0:
        print("\nSKIP: %s; scripts/setup.sh makes the venv (SHARDOPS_TF_VENV)" % _tf_missing[0])
        session.exitstatus = 77
