"""How calls behave around the ops: a mistake on one rank of a distributed call raises the
same exception on every rank (never a rank left waiting), what is not collective, the
communicators a call refuses, and a process in an unusual state (MPI not running, a daemon
thread inside an op at exit)."""

import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import shardops
from shards import own_mpi_env, run_python


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
        (lambda: shardops.write([1, 2] if odd else {os.devnull + ".h5:/x": x}, comm=comm), "TypeError",
         "outputs must be a dict {\"FILE:/path\": array}, not list"),
        # Pairs are not a dict: a bytes name must not become the file "b'x.h5".
        (lambda: shardops.write([(b"x.h5:/d", x)], comm=comm), "TypeError", "outputs must be a dict"),
        (lambda: shardops.dynamic_partition(x, [0, 0, 0, 0], 2 ** 31, comm=comm), "ValueError",
         "Number of outputs is too big: 2147483648"),
        (lambda: shardops.dynamic_partition(x, [0, 0, 0, 0], 2 ** 63, comm=comm), "ValueError",
         "Number of outputs is too big: 9223372036854775808"),
    ]
    for call, cls, text in cases:
        name, message = raised_on_every_rank(comm, call)
        assert name == cls and text in message, (name, message)
    # The communicator still works: no rank was left inside a call.
    assert comm.allreduce(1) == comm.Get_size()


def test_gather_nd_batch_dims_arguments():
    """tf.gather_nd's checks of batch_dims (TensorFlow's texts), on every rank alike, and ranks
    that pass different batch_dims (one rank's plain call and another's batched one would
    wait on each other)."""
    comm = world()
    rank, size = comm.Get_rank(), comm.Get_size()
    params = np.arange(24.0).reshape(2, 3, 4)[:1 if rank == 0 else 2 if rank == 1 else 0]
    indices = np.zeros((params.shape[0], 2, 1), np.int32)
    odd = rank == size - 1
    cases = [
        (lambda: shardops.gather_nd(params, indices, batch_dims=-1, comm=comm), "ValueError",
         "tf.gather_nd does not allow negative batch_dims."),
        (lambda: shardops.gather_nd(params, indices, batch_dims=3, comm=comm), "ValueError",
         "Argument `batch_dims` = 3 must be less than rank(`indices`) = 3"),
        (lambda: shardops.gather_nd(params, indices[..., 0], batch_dims=2, comm=comm), "ValueError",
         "Argument `batch_dims` = 2 must be less than rank(`indices`) = 2"),
        (lambda: shardops.gather_nd(params[:, 0], np.zeros((params.shape[0], 1, 1, 1), np.int32), batch_dims=2,
                                    comm=comm), "ValueError", "Argument `batch_dims` = 2 must be less than rank(`params`) = 2"),
        (lambda: shardops.gather_nd(params, indices, batch_dims="1", comm=comm), "TypeError",
         "Expected int for argument 'batch_dims' not '1'."),
    ]
    if size > 1:
        cases.append((lambda: shardops.gather_nd(params, indices, batch_dims=0 if odd else 1, comm=comm),
                      "InvalidArgumentError", "gather_nd: the ranks' calls differ: rank 0 passed batch_dims=1"))
        # A call without batch_dims is the plain op, which agrees without the batched one's
        # allgather: the two meet and both sides raise.
        cases.append((lambda: shardops.gather_nd(params, indices, comm=comm, **({} if odd else {"batch_dims": 1})),
                      "InvalidArgumentError", "gather_nd: the ranks' calls differ: rank 0 passed batch_dims; rank %d "
                      "passed none" % (size - 1)))
    for call, cls, text in cases:
        name, message = raised_on_every_rank(comm, call)
        assert name == cls and text in message, (name, message)
    # A float that is an integer is taken (TensorFlow's int(batch_dims)); Python indices are int32.
    got = shardops.gather_nd(params, indices.tolist(), batch_dims=1.0, comm=comm)
    assert got.shape == (params.shape[0], 2, 4) and np.array_equal(got, np.repeat(params[:, :1], 2, axis=1))
    assert comm.allreduce(1) == size


def test_tensorflow_name_is_taken():
    # tf.gather_nd(params, indices, name="g") and the like: the name is TensorFlow's for the op
    # in a graph; taken and not used, on every op (it was an unexpected keyword).
    comm = world()
    x = np.arange(6.0).reshape(3, 2)
    rows = shardops.row_block(3, comm)
    mine = x[rows[0]:rows[1]]
    indices = np.array([[2], [0]] if comm.Get_rank() == 0 else np.zeros((0, 1)), np.int64)
    got = shardops.gather_nd(mine, indices, comm=comm, name="g")
    want = x[[2, 0]] if comm.Get_rank() == 0 else np.zeros((0, 2))
    assert np.array_equal(got, want), got
    for op in ("dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch", "scatter_nd", "gather_nd",
               "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
               "tensor_scatter_nd_max"):
        assert "name" in getattr(shardops, op).__signature__.parameters, op
    # TensorFlow takes any name in an eager call (5 too), and so does shardops.
    assert np.array_equal(shardops.gather_nd(mine, indices, comm=comm, name=5), want)


# TensorFlow 2.21's Python functions: their arguments after the inputs and attributes, in order.
TF_TRAILING = {
    "dynamic_partition": ["name"], "dynamic_stitch": ["name"], "parallel_dynamic_stitch": ["name"],
    "gather_nd": ["batch_dims", "name", "bad_indices_policy"], "scatter_nd": ["bad_indices_policy", "name"],
    "tensor_scatter_nd_update": ["name"], "tensor_scatter_nd_add": ["bad_indices_policy", "name"],
    "tensor_scatter_nd_sub": ["bad_indices_policy", "name"], "tensor_scatter_nd_min": ["bad_indices_policy", "name"],
    "tensor_scatter_nd_max": ["bad_indices_policy", "name"]}


def test_tensorflow_positional_arguments_and_bad_indices_policy():
    """Calls written for TensorFlow run as they are: its arguments in its order (positional
    batch_dims, name and bad_indices_policy), its policy values and texts for a bad policy, on
    every rank alike."""
    comm = world()
    for op, trailing in TF_TRAILING.items():
        positional = [p.name for p in getattr(shardops, op).__signature__.parameters.values()
                      if p.kind == p.POSITIONAL_OR_KEYWORD]
        assert positional[-len(trailing):] == trailing, (op, positional)
    first = comm.Get_rank() == 0
    index = [[0], [5]] if first else np.zeros((0, 1), np.int32)
    update = [1.0, 2.0] if first else np.zeros(0, np.float32)
    want = np.array([1.0, 0, 0], np.float32)
    rows = shardops.row_block(3, comm)
    assert np.array_equal(shardops.scatter_nd(index, update, [3], "IGNORE", "s", comm=comm), want[rows[0]:rows[1]])
    assert np.array_equal(shardops.scatter_nd(index, update, [3], bad_indices_policy=b"IGNORE", comm=comm),
                          want[rows[0]:rows[1]])
    x = np.arange(4.0)
    assert shardops.gather_nd(x, [[1], [9]], 0, "g", "IGNORE").tolist() == [1.0, 0.0]
    got = shardops.tensor_scatter_nd_add(x, [[9]], [1.0], "IGNORE")
    assert np.array_equal(got, x), got
    assert shardops.dynamic_stitch([[1, 0]], [[1.0, 2.0]], "s").tolist() == [2.0, 1.0]
    cases = [
        (lambda: shardops.scatter_nd([[0]], [1.0], [3], "ignore", comm=comm), "InvalidArgumentError",
         "Unknown bad indices handling attribute: ignore"),
        # GatherNd's kernels are registered per policy: TensorFlow finds none (NotFoundError).
        (lambda: shardops.gather_nd(x, [[1]], bad_indices_policy="ignore", comm=comm), "NotFoundError",
         'Could not find device for node: {{node GatherNd}} = GatherNd[Tindices=DT_INT32, Tparams=DT_DOUBLE, '
         'bad_indices_policy="ignore"]'),
        (lambda: shardops.scatter_nd([[0]], [1.0], [3], bad_indices_policy=5, comm=comm), "TypeError",
         "Expected string for argument 'bad_indices_policy' not 5."),
        (lambda: shardops.scatter_nd([[0]], [1.0], [3], "IGNORE", bad_indices="ignore", comm=comm), "TypeError",
         "not both"),
        (lambda: shardops.gather_nd(x, [[1]], 0, batch_dims=0, comm=comm), "TypeError",
         "multiple values for argument 'batch_dims'"),
        (lambda: shardops.gather_nd(x, [[1]], 0, "g", "", "extra", comm=comm), "TypeError", "too many positional"),
        (lambda: shardops.dynamic_partition(x, [0, 0, 0, 0], -2 ** 40, comm=comm), "ValueError",
         "Number of outputs is too big: -1099511627776"),
        (lambda: shardops.dynamic_partition(x, [0, 0, 0, 0], np.array([2]), comm=comm), "TypeError",
         "Expected int for argument 'num_partitions' not array([2])."),
    ]
    for call, cls, text in cases:
        name, message = raised_on_every_rank(comm, call)
        assert name == cls and text in message, (name, message)


def test_scatter_nd_writes_true_as_one():
    """TensorFlow's ScatterNd adds bools as numbers: a true it writes is the byte 1 whatever
    byte the update held (NumPy takes any non-zero byte as true); a move keeps the byte."""
    comm = world()
    first = comm.Get_rank() == 0
    updates = np.frombuffer(bytes([2, 4, 1]) if first else b"", np.bool_)
    indices = np.array([[0], [0], [1]] if first else np.zeros((0, 1)), np.int32)
    got = shardops.scatter_nd(indices, updates, [3], comm=comm)
    rows = shardops.row_block(3, comm)
    assert got.view(np.uint8).tolist() == [1, 1, 0][rows[0]:rows[1]], got.view(np.uint8)
    moved = shardops.gather_nd(updates, [[0]] if first else np.zeros((0, 1), np.int32), comm=comm)
    assert moved.view(np.uint8).tolist() == ([2] if first else []), moved.view(np.uint8)


def test_numbers_as_strings_are_parsed_as_tensorflow_does():
    """An array of byte or text strings where the op takes numbers is parsed by NumPy, as
    TensorFlow converts it (updates, partition ids, DynamicStitch's indices); a string that
    is no number is NumPy's ValueError."""
    got = shardops.tensor_scatter_nd_update(np.zeros(3, np.float32), [[1]], np.array(["1.5"]))
    assert got.dtype == np.float32 and got.tolist() == [0, 1.5, 0]
    parts = shardops.dynamic_partition(np.array([1.0, 2.0]), np.array([b"1", b"0"]), 2)
    assert [p.tolist() for p in parts] == [[2.0], [1.0]]
    assert shardops.dynamic_stitch([np.array(["1", "0"])], [np.array([1.0, 2.0])]).tolist() == [2.0, 1.0]
    with pytest.raises(ValueError, match="could not convert string to float"):
        shardops.tensor_scatter_nd_update(np.zeros(3, np.float32), [[1]], np.array(["x"]))


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


def test_sigterm_during_write_leaves_the_file_as_it_was(tmp_path):
    # SIGTERM (Slurm's scancel) while write() has rows in an existing file: the process ends as
    # SIGTERM's default action would end it, but as the command line does: the file cut back,
    # no temporary file, journal or lock left (it left what SIGKILL leaves).
    if world().Get_rank() != 0:
        return
    target = tmp_path / "o.h5"
    with h5py.File(str(target), "w") as f:
        f["keep"] = np.arange(5)
    before = target.read_bytes()
    script = textwrap.dedent("""
        import numpy as np, shardops
        shardops.write({%r: np.ones((4096, 64))}, overwrite=True)
    """ % (str(target) + ":/a"))
    child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True,
                             env=own_mpi_env(SHARDOPS_TEST_PAUSE="in-place:60"))
    try:
        for line in child.stderr:
            if "test pause at in-place" in line:
                break
        child.send_signal(15)
        err = child.stderr.read()
        code = child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert code == 143 and "stopped by SIGTERM" in err, (code, err)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.h5"]


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


def test_what_does_not_fit_is_resource_exhausted():
    """A call whose output does not fit this rank's memory raises TensorFlow's class,
    ResourceExhaustedError (also an InvalidArgumentError: exit code 2, and a MemoryError),
    on every rank, before any work; an op without a kernel for its dtypes NotFoundError."""
    comm = world()
    name, message = raised_on_every_rank(comm, lambda: shardops.scatter_nd(
        np.zeros((1 if comm.Get_rank() == 0 else 0, 1), np.int64), np.ones(1 if comm.Get_rank() == 0 else 0),
        [2 ** 40], comm=comm))
    assert name == "ResourceExhaustedError" and "memory budget" in message, (name, message)
    assert issubclass(shardops.ResourceExhaustedError, shardops.InvalidArgumentError)
    assert issubclass(shardops.ResourceExhaustedError, MemoryError)
    name, message = raised_on_every_rank(comm, lambda: shardops.tensor_scatter_nd_add(
        np.zeros(2, bool), [[0]], [True]))
    assert name == "NotFoundError" and message.startswith("Could not find device for node: "), (name, message)
