"""pytest under mpirun (ctest python_np_N): every rank runs the same tests in the same
order, so each test's collective calls match across ranks. Tests make all their calls
first and assert afterwards, so that a failed check on one rank cannot leave the others
waiting in a collective. TensorFlow (a separate venv with its own NumPy) runs once per
session on rank 0, through tests/e2e/tf_worker.py; without it the TensorFlow tests are
skipped and the session exits 77 (ctest's SKIP_RETURN_CODE) if nothing failed."""

import os
import sys
import tempfile

import pytest
from mpi4py import MPI

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

import test_tf_oracle  # noqa: E402  (the TF cases, worker and message rules of the e2e oracle test)

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
        import shutil
        shutil.rmtree(path, ignore_errors=True)


def tf_cases():
    t = test_tf_oracle
    return t.dtype_cases() + t.bad_index_cases() + t.empty_and_shape_cases() + t.string_cases()


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
                results, outputs = test_tf_oracle.run_tf(tf_python, d, cases)
                answer = (None, results, {k: outputs[k] for k in outputs.files})
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
