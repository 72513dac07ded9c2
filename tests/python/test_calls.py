"""How calls behave around the ops: a mistake on one rank of a distributed call raises the
same exception on every rank (never a rank left waiting), what is not collective, the
communicators a call refuses, and a process in an unusual state (MPI not running, a daemon
thread inside an op at exit)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import shardops


def world():
    from mpi4py import MPI
    return MPI.COMM_WORLD


def raised_on_every_rank(comm, call):
    """The (class name, message) every rank raised from call(); fails unless all raised the same."""
    try:
        call()
        mine = None
    except Exception as e:  # noqa: B902 - the test checks the class
        mine = (type(e).__name__, str(e))
    every = comm.allgather(mine)
    assert None not in every and len(set(every)) == 1, every
    return every[0]


def test_a_mistake_on_one_rank_raises_everywhere():
    comm = world()
    odd = comm.Get_rank() == comm.Get_size() - 1
    x = np.arange(4.0)
    cases = [
        (lambda: shardops.dynamic_stitch(5 if odd else [[0]], [[1.0]], comm=comm), "TypeError", "not iterable"),
        (lambda: shardops.gather_nd(x, [[1]], comm=comm, bad_indices=None if odd else "error"), "TypeError",
         "bad_indices must be a str"),
        (lambda: shardops.gather_nd(x, [[1]], comm=comm, **({"bad_indice": "x"} if odd else {})), "TypeError",
         "unexpected keyword argument 'bad_indice'"),
        (lambda: shardops.write({os.devnull + ".h5:/x": x}, comm=comm, attributes={"k": 5} if odd else {}),
         "InvalidArgumentError", "attributes: names and values must be str"),
        (lambda: shardops.write({os.devnull + ".h5:/x": x}, comm=comm, attributes={"op": "mine"}),
         "InvalidArgumentError", "'op' is set by shardops itself"),
        (lambda: shardops.write([1, 2] if odd else {os.devnull + ".h5:/x": x}, comm=comm), "InvalidArgumentError",
         ""),
    ]
    for call, cls, text in cases:
        name, message = raised_on_every_rank(comm, call)
        assert name == cls and text in message, (name, message)
    # The communicator still works: no rank was left inside a call.
    assert comm.allreduce(1) == comm.Get_size()


def test_an_empty_python_block_takes_the_string_dtype():
    # [] is float64 to NumPy; as a rank's empty block of string data it takes the others'
    # dtype, as an empty block of numbers does (the ranks' calls differed).
    comm = world()
    if comm.Get_size() == 1:
        pytest.skip("needs two ranks")
    last = comm.Get_rank() == comm.Get_size() - 1
    indices = [] if last else [comm.Get_rank()]
    data = [] if last else [b"r%d" % comm.Get_rank()]
    out = shardops.dynamic_stitch([indices], [data], comm=comm)
    whole = np.concatenate(comm.allgather(out))
    assert whole.tolist() == [b"r%d" % r for r in range(comm.Get_size() - 1)], whole


def test_row_block_is_not_collective():
    comm = world().Dup()
    try:
        if comm.Get_rank() == 0:
            assert shardops.row_block(10, comm) == (0, -(-10 // comm.Get_size()))
        assert comm.allreduce(1) == comm.Get_size()
    finally:
        comm.Free()


def test_an_intercommunicator_is_refused():
    comm = world()
    if comm.Get_size() < 2:
        pytest.skip("an intercommunicator needs two groups")
    half = comm.Get_rank() % 2
    local = comm.Split(half)
    inter = local.Create_intercomm(0, comm, 1 - half, tag=7)
    try:
        name, message = raised_on_every_rank(comm, lambda: shardops.gather_nd(np.arange(3.0), [[1]], comm=inter))
        assert name == "TypeError" and "intracommunicator" in message, message
    finally:
        inter.Free()
        local.Free()


def test_empty_is_like_numpy():
    for shape in (-1, (3, -2)):
        with pytest.raises(ValueError, match="negative dimensions"):
            shardops.empty(shape, np.float32)
    with pytest.raises(TypeError):
        shardops.empty(2.7, np.float32)
    assert shardops.empty(3, ">f4").dtype == np.dtype(">f4")
    assert shardops.empty(2, object).dtype == np.dtype(object)
    a = shardops.empty((2, 3), np.float32)
    assert a.shape == (2, 3) and a.ctypes.data % 64 == 0


def run_python(script):
    """Runs ``script`` in a fresh Python process (not under mpiexec: a singleton MPI)."""
    # Not this rank's launcher settings: the child is an MPI program of its own.
    keep = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_pml", "OMPI_MCA_btl")
    env = {k: v for k, v in os.environ.items() if k in keep or not k.startswith(("OMPI_", "PMIX_", "OPAL_", "PMI_"))}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env,
                          timeout=120)


def test_in_processes_of_their_own():
    if world().Get_rank() != 0:
        return  # one rank starts them
    # MPI not started (mpi4py.rc.initialize = False) or finalized: an op on whole tensors runs,
    # a file is a clear error.
    for setup in ("import mpi4py; mpi4py.rc.initialize = False; import shardops",
                  "import shardops; from mpi4py import MPI; MPI.Finalize()"):
        r = run_python(setup + """
            import numpy as np
            print(shardops.gather_nd(np.arange(3.0), [[1]]))
            try:
                shardops.read("nowhere.h5:/x")
            except shardops.InvalidArgumentError as e:
                print("refused:", e)
            from mpi4py import MPI
            try:  # MPI aborted the process when the communicator was asked its size
                shardops.gather_nd(np.arange(3.0), [[1]], comm=MPI.COMM_WORLD)
            except shardops.InvalidArgumentError as e:
                print("comm refused:", e)
            try:  # row_block asked it too
                shardops.row_block(5, MPI.COMM_WORLD)
            except shardops.InvalidArgumentError as e:
                print("row_block refused:", e)
            """.replace("\n            ", "\n"))
        assert r.returncode == 0 and "[1.]" in r.stdout and "refused: " in r.stdout, (r.stdout, r.stderr)
        assert "comm refused: " in r.stdout and "shardops needs MPI running" in r.stdout, (r.stdout, r.stderr)
        assert "row_block refused: " in r.stdout, (r.stdout, r.stderr)
    # A daemon thread still inside an op when the interpreter exits: the process exits cleanly.
    r = run_python("""
        import threading, time
        import numpy as np
        import shardops
        big = np.random.rand(1 << 20, 4).astype(np.float32)
        idx = np.random.randint(0, 1 << 20, size=(1 << 20, 1))
        def work():
            while True:
                shardops.gather_nd(big, idx)
        threading.Thread(target=work, daemon=True).start()
        time.sleep(0.2)
        print("exiting")
        """)
    assert r.returncode == 0 and "exiting" in r.stdout and "terminate" not in r.stderr, (r.returncode, r.stderr)
