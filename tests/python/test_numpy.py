"""Every op on every dtype shardops has (including those TensorFlow has no kernel for)
and strings against the NumPy reference (tests/e2e/npref.py), on whole tensors and on
ragged row blocks; the input forms (S, U and object strings, strided, big-endian,
read-only, lists); inputs never written, outputs never aliasing them; a bad input on one
rank raising on all."""

import re
import time

import numpy as np
import pytest

import gen
import shardops
from e2e_common import ALL_DTYPES, OPS
from shards import Split, distributable, outcomes, same
from test_tf_oracle import rng_for


def numpy_cases():
    cases = []
    for op in OPS:
        for j, dtype in enumerate(ALL_DTYPES + ["S"]):
            if dtype != "S" and not gen.supported(op, dtype):
                continue
            # The reference's string support: gathers and partitions (fixed-width NumPy strings
            # would truncate stitched, scattered or concatenated ones); TensorFlow checks the rest.
            if dtype == "S" and op not in ("gather-nd", "dynamic-partition"):
                continue
            name = "np_%s_%s" % (op, dtype)
            cases.append(gen.random_case(name, rng_for(name), op, dtype, "int32" if j % 2 else "int64"))
    return cases


def test_ops_against_numpy(comm):
    runs = []
    for case in numpy_cases():
        if comm is not None and not distributable(case):
            continue
        split = Split(case, comm)
        before = {k: v.copy() for k, v in case.arrays.items()}
        runs.append((case, split, split.run(), before))
    assert len(runs) > 100
    for case, split, got, before in runs:
        expected = case.expected()
        assert len(got) == len(expected), case.name
        for k, actual in enumerate(got):
            same(actual, split.expected_block(k, expected[k]))
            for name, a in case.arrays.items():
                assert not np.shares_memory(actual, a), "%s: output %d aliases input %s" % (case.name, k, name)
        for name, a in case.arrays.items():
            assert a.tobytes() == before[name].tobytes(), "%s: input %s was written" % (case.name, name)


def test_string_input_forms(comm):
    """S, U and object arrays (bytes or str) give the same strings; outputs are bytes."""
    words = ["", "a", "bc", "\u00f6l", "\u65e5\u672c", "x y"]
    forms = [np.array([w.encode() for w in words], dtype="S"), np.array(words, dtype="U"),
             np.array(words, dtype=object), np.array([w.encode() for w in words], dtype=object)]
    idx = np.array([[5], [0], [3], [3], [1]], np.int64)
    results = []
    for params in forms:
        case = gen.Case("forms", "gather-nd", {"params": params, "indices": idx})
        split = Split(case, comm)
        results.append((split, split.run()[0]))
    expected = np.array([words[i].encode() for i in idx[:, 0]], dtype=object)
    for split, got in results:
        same(got, split.expected_block(0, expected))
        assert all(type(v) is bytes for v in got.tolist())


def test_numeric_input_forms(comm):
    """Strided, big-endian and read-only inputs give the contiguous array's result; a list
    of Python floats is float32, as TensorFlow converts it."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((12, 6)).astype(np.float64)
    idx = rng.integers(0, 12, (9, 1)).astype(np.int32)
    strided = np.asfortranarray(base)
    big = base.astype(">f8")
    readonly = base.copy()
    readonly.flags.writeable = False
    forms = [base, strided, big, readonly, base.tolist()]
    results = []
    for params in forms:
        case = gen.Case("numeric_forms", "gather-nd", {"params": np.asarray(params), "indices": idx})
        split = Split(case, comm)
        case.arrays["params"] = params if comm is None else np.asarray(params)
        results.append((split, split.run()[0]))
    expected = base[idx[:, 0]]
    for (split, got), params in zip(results, forms):
        same(got, split.expected_block(0, expected if isinstance(params, np.ndarray) or comm is not None
                                             else expected.astype(np.float32)))


def test_scalars_on_whole_tensors():
    """0-d inputs and outputs (comm=None)."""
    got = shardops.dynamic_stitch([np.int32(2), np.array([0, 1], np.int32)],
                                  [np.float32(5), np.array([1, 2], np.float32)])
    same(got, np.array([1, 2, 5], np.float32))
    same(shardops.gather_nd(np.arange(6, dtype=np.int16).reshape(2, 3), np.array([1, 2])), np.int16(5))


def test_scalars_in_row_blocks():
    """A 0-d input is rank 0's; a 0-d output comes back on rank 0, empty elsewhere."""
    comm = shardops_world()
    rank = comm.Get_rank()
    params = np.arange(6, dtype=np.int16).reshape(3, 2)
    idx = np.array([2, 1], np.int64)
    got = shardops.gather_nd(params[slice(*shardops.row_block(3, comm))], idx[slice(*shardops.row_block(2, comm))],
                             comm=comm)
    stitched = shardops.dynamic_stitch([np.int32(2), np.array([0, 1], np.int32)[slice(*shardops.row_block(2, comm))]],
                                       [np.float32(5), np.array([1, 2], np.float32)[slice(*shardops.row_block(2, comm))]],
                                       comm=comm)
    same(got, np.int16(5) if rank == 0 else np.zeros((0,), np.int16))
    same(stitched, np.array([1, 2, 5], np.float32)[slice(*shardops.row_block(3, comm))])


def test_library_time_is_part_of_the_call(comm):
    """_last_op_seconds (python_bench's split of a call into the library's op and what the
    binding adds) is set by every op family, and is never more than the whole call."""
    start, stop = shardops.row_block(1 << 16, comm) if comm is not None else (0, 1 << 16)
    params = np.ones((stop - start, 8), np.float32)
    idx = np.zeros((stop - start, 1), np.int64)
    parts = np.zeros(stop - start, np.int32)
    calls = [lambda: shardops.gather_nd(params, idx, comm=comm),
             lambda: shardops.scatter_nd(idx, params, (4, 8), comm=comm),
             lambda: shardops.tensor_scatter_nd_add(params, idx, params, comm=comm),
             lambda: shardops.dynamic_partition(params, parts, 2, comm=comm),
             lambda: shardops.dynamic_stitch([np.arange(start, stop, dtype=np.int32)], [params], comm=comm)]
    seen = []
    for call in calls:
        shardops._shardops._last_op_seconds_reset()
        t = time.perf_counter()
        call()
        t = time.perf_counter() - t
        seen.append((shardops._shardops._last_op_seconds(), t))
    for library, whole in seen:
        assert 0 < library <= whole, seen


def test_bad_input_on_one_rank_raises_on_all():
    """A dtype, a rank, a trailing dim, an unconvertible string or an op argument on one
    rank only: every rank raises
    InvalidArgumentError with the same text (and no rank is left waiting)."""
    comm = shardops_world()
    last = comm.Get_rank() == comm.Get_size() - 1
    data = np.arange(8, dtype=np.float64 if last else np.float32).reshape(4, 2)
    parts = np.array([0, 1, 0, 1], np.int32)
    bad_strings = np.array([b"a", 3] if last else [b"a", b"b"], dtype=object)
    calls = [
        lambda: shardops.dynamic_partition(data, parts, 2, comm=comm),
        lambda: shardops.gather_nd(np.zeros((4, 2) if not last else (4,), np.int8), np.zeros((2, 1), np.int32),
                                   comm=comm),
        lambda: shardops.gather_nd(bad_strings, np.zeros((1, 1), np.int32), comm=comm),
        lambda: shardops.gather_nd(np.zeros((2, 3 if last else 2)), np.zeros((1, 1), np.int32), comm=comm),
        lambda: shardops.scatter_nd(np.zeros((1, 1), np.int32), np.ones(1, np.float32), [3 if last else 2],
                                    comm=comm),
    ]
    errors = outcomes(calls)
    texts = [comm.allgather(str(e)) for e in errors]
    if comm.Get_size() == 1:
        # One rank: only the object array of an int is a bad input.
        assert isinstance(errors[2], shardops.InvalidArgumentError), errors
        return
    for e, t in zip(errors, texts):
        assert isinstance(e, shardops.InvalidArgumentError), errors
        assert len(set(t)) == 1, t


def test_python_values_take_tensorflows_dtypes():
    """Lists and Python numbers are converted as TensorFlow converts them: integers to int32,
    floats to float32, or to the dtype an earlier array input set; a value that would change
    is left as it is, and the op refuses its dtype."""
    same(shardops.dynamic_partition([1., 2., 3.], [0, 1, 0], 2)[0], np.array([1., 3.], np.float32))
    same(shardops.dynamic_stitch([[0, 2], [1]], [[1.0, 2.0], [3.0]]), np.array([1., 3., 2.], np.float32))
    same(shardops.scatter_nd([[1]], [5], [3]), np.array([0, 5, 0], np.int32))
    same(shardops.gather_nd([[1, 2], [3, 4]], [[1]]), np.array([[3, 4]], np.int32))
    same(shardops.gather_nd(np.arange(4.0), [[2 ** 40]], bad_indices="ignore"), np.zeros(1))  # int64 indices
    same(shardops.tensor_scatter_nd_update(np.zeros(3), [[1]], [7]), np.array([0., 7., 0.]))  # float64, as tensor
    same(shardops.tensor_scatter_nd_add(np.zeros(3, np.int8), [[2]], [-3]), np.array([0, 0, -3], np.int8))
    # Lists of NumPy values, as TensorFlow converts them: floats keep their dtype, ints are int32.
    same(shardops.gather_nd([np.arange(2.0), np.arange(2.0, 4.0)], [[1]]), np.array([[2.0, 3.0]]))
    same(shardops.gather_nd([np.arange(2), np.arange(2, 4)], [[1]]), np.array([[2, 3]], np.int32))
    # ScatterNd's shape is a tensor of the indices' dtype in TensorFlow.
    with pytest.raises(TypeError, match=re.escape("Cannot convert (4.5,) to EagerTensor of dtype int32")):
        shardops.scatter_nd([[1]], [1.0], (4.5,))
    same(shardops.scatter_nd([[1]], [1.0], np.array([3.0])), np.array([0, 1, 0], np.float32))
    for shape in (3, [[3]]):
        with pytest.raises(shardops.InvalidArgumentError, match="Shape must be a vector"):
            shardops.scatter_nd([[1]], [1.0], shape)
    # Indices of a dtype the op refuses: a Python shape that cannot take it is TensorFlow's
    # TypeError first (ints into bool or string); one that can is the refusal of the dtype.
    for indices, shape, text in [(np.array([[True]]), [2], "Cannot convert [2] to EagerTensor of dtype bool"),
                                 ([[True]], (2,), "Cannot convert (2,) to EagerTensor of dtype bool"),
                                 (np.array([[b"a"]]), [2], "Cannot convert [2] to EagerTensor of dtype string")]:
        with pytest.raises(TypeError, match=re.escape(text)):
            shardops.scatter_nd(indices, [1.0], shape)
    for indices, shape, dtype in [(np.array([[True]]), np.array([2]), "bool"), (np.array([[1.5]]), [2], "double"),
                                  (np.array([[1 + 0j]]), [2], "complex128")]:
        with pytest.raises(shardops.InvalidArgumentError, match="Value for attr 'Tindices' of " + dtype):
            shardops.scatter_nd(indices, [1.0], shape)
    same(shardops.dynamic_partition([1.0], [0], np.int16(1))[0], np.array([1.0], np.float32))


def test_python_values_into_a_dtype():
    """A Python value converted to the op's dtype as TensorFlow 2.21 converts it
    (tf.convert_to_tensor(value, dtype)): floats rounded into floats, integers wrapped into
    any integer dtype, never a float into an integer dtype or an integer into bool."""
    same(shardops.tensor_scatter_nd_update(np.zeros(3, np.float32), [[1]], [0.1]), np.array([0, 0.1, 0], np.float32))
    same(shardops.tensor_scatter_nd_update(np.zeros(2, np.float32), [[1]], [1e40]), np.array([0, np.inf], np.float32))
    same(shardops.tensor_scatter_nd_update(np.zeros(2, np.uint8), [[0], [1]], [300, -1]), np.array([44, 255], np.uint8))
    same(shardops.tensor_scatter_nd_update(np.zeros(1, np.complex64), [[0]], [1.5]), np.array([1.5], np.complex64))
    same(shardops.tensor_scatter_nd_update(np.zeros(1, np.int32), [[0]], [True]), np.array([1], np.int32))
    for tensor, updates, text in [(np.zeros(3, np.int32), [7.5], "Cannot convert [7.5] to EagerTensor of dtype int32"),
                                  (np.zeros(3, np.int64), [7.0], "Cannot convert [7.0] to EagerTensor of dtype int64"),
                                  (np.zeros(3, bool), [1], "Cannot convert [1] to EagerTensor of dtype bool"),
                                  (np.zeros(3, np.float32), [1 + 2j], "Cannot convert [(1+2j)] to EagerTensor of dtype float"),
                                  (np.array([b"a", b"b", b"c"]), [5], "Cannot convert [5] to EagerTensor of dtype string"),
                                  (np.array(["a", "b", "c"], object), [5.5],
                                   "Cannot convert [5.5] to EagerTensor of dtype string")]:
        with pytest.raises(TypeError, match=re.escape(text)):
            shardops.tensor_scatter_nd_update(tensor, [[1]], updates)
    # Integer attributes: int(value), as TensorFlow's eager ops take them; never a string.
    assert len(shardops.dynamic_partition([1.0], [0], 2.5)) == 2
    with pytest.raises(TypeError, match="Expected int for argument 'num_partitions' not '2'."):
        shardops.dynamic_partition([1.0], [0], "2")


def test_python_integers_out_of_range():
    """TensorFlow refuses a Python integer outside int64 where it picks the dtype (NumPy would
    wrap it, or make floats), and takes one up to 2**64 - 1 into a uint64 tensor."""
    text = "Can't convert Python sequence with out-of-range integer to Tensor."
    for call in [lambda: shardops.dynamic_stitch([[0]], [[2 ** 64 - 1]]),
                 lambda: shardops.gather_nd([2 ** 63, 1], [[0]]),
                 lambda: shardops.gather_nd(np.arange(3.0), [[2 ** 63]]),
                 lambda: shardops.gather_nd([np.uint64(2 ** 64 - 1)], [[0]]),
                 lambda: shardops.gather_nd([-2 ** 63 - 1], [[0]])]:
        with pytest.raises(ValueError, match=re.escape(text)):
            call()
    # TensorFlow reads the shape from the first element at each depth: a sequence where it
    # found a number is an element of no kind, a number where it found a sequence is ragged.
    with pytest.raises(ValueError, match="Can't convert Python sequence with mixed types to Tensor."):
        shardops.gather_nd([1, [2]], [[0]])
    with pytest.raises(ValueError, match="Can't convert non-rectangular Python sequence to Tensor."):
        shardops.gather_nd([[1], 2], [[0]])
    same(shardops.gather_nd([2 ** 63 - 1], [[0]]), np.array([2 ** 63 - 1], np.int64))
    # Into a uint64 tensor, TensorFlow takes them (the tensor gives the dtype, not the value);
    # into any other integer tensor it refuses them.
    for big in (2 ** 64 - 1, 2 ** 63):
        same(shardops.tensor_scatter_nd_update(np.zeros(2, np.uint64), [[0]], [big]), np.array([big, 0], np.uint64))
        with pytest.raises(ValueError, match=re.escape(text)):
            shardops.tensor_scatter_nd_update(np.zeros(2, np.int64), [[0]], [big])


def test_python_floats_after_a_numpy_one():
    """A sequence's first element decides its float dtype, as in TensorFlow 2.21: a NumPy float
    keeps its dtype whatever follows, a Python number makes float32 whatever NumPy floats
    follow (NumPy's promotion made float64 of most of these)."""
    for params, dtype in (([np.float32(1.5), 2.0], np.float32), ([1.5, np.float64(2)], np.float32),
                          ([np.float16(1.5), 2.0], np.float16), ((np.float16(1.5), 2.0), np.float16),
                          ([1, np.float16(2)], np.float32), ([np.float16(1.5), np.float32(2)], np.float16),
                          ([np.float64(1.5), 2.0], np.float64), ([[np.float16(1.5)], [2.0]], np.float16),
                          ([np.int8(1), 2.5], np.float32)):
        got = shardops.gather_nd(params, [[1]])
        assert got.dtype == dtype, (params, got.dtype)


def test_python_sequences_of_mixed_kinds():
    """TensorFlow types a Python sequence by its first element: bools take only bools and
    strings only strings, integers and reals take bools, integers and reals, complex numbers
    any number; NumPy would find a common dtype for any of them."""
    text = "Can't convert Python sequence with mixed types to Tensor."
    for params in ([True, 2], [True, 2.5], [1, 1j], [2.5, 1j], [1, "a"], ["a", 1], [[True], [2]]):
        with pytest.raises(ValueError, match=re.escape(text)):
            shardops.gather_nd(params, [[0]])
    same(shardops.gather_nd([1, 2.5, True], [[2]]), np.array([1.0], np.float32))
    same(shardops.gather_nd([[1], [True]], [[1]]), np.array([[1]], np.int32))
    same(shardops.gather_nd([1j, 1, True], [[1]]), np.array([1], np.complex128))
    same(shardops.gather_nd(np.arange(6.0).reshape(3, 2), [[2, True]]), np.array([5.0]))  # int32 indices


def test_empty_python_indices_and_array_likes():
    """[] has no dtype to TensorFlow (float32): as indices it is refused with TensorFlow's text,
    as partition ids or DynamicStitch's indices it is int32. An array-like whose __array__
    raises raises that, as indices as well as data."""
    x = np.ones((3, 2), np.float32)
    for call in (lambda: shardops.gather_nd(x, []), lambda: shardops.scatter_nd([], [], [3])):
        with pytest.raises(shardops.InvalidArgumentError, match="Value for attr 'Tindices' of float"):
            call()
    same(shardops.dynamic_stitch([[]], [[]]), np.zeros(0, np.float32))

    class Refuses:
        def __array__(self, *args, **kwargs):
            raise RuntimeError("no array here")

    for call in (lambda: shardops.gather_nd(x, Refuses()), lambda: shardops.gather_nd(Refuses(), [[0]])):
        with pytest.raises(RuntimeError, match="^no array here$"):
            call()


def test_arrays_cast_as_tensorflow_casts():
    """TensorFlow's eager ops cast a NumPy array to the dtype the op takes (the first value
    input's, or int32 for partition ids and DynamicStitch's indices) as NumPy casts it."""
    same(shardops.tensor_scatter_nd_update(np.zeros(3, np.float32), [[1]], np.array([0.1])),
         np.array([0, 0.1, 0], np.float32))
    same(shardops.tensor_scatter_nd_update(np.zeros(2), [[1]], np.array([0.1], np.float32)),
         np.array([0, np.float32(0.1)]))
    same(shardops.dynamic_stitch([[0], [1]], [np.array([1.0], np.float32), np.array([2.0])]),
         np.array([1, 2], np.float32))
    same(shardops.dynamic_stitch([np.array([1], np.int64), np.array([0], np.uint8)], [[5], [6]]), np.array([6, 5], np.int32))
    parts = shardops.dynamic_partition(np.arange(4.0), np.array([0, 1, 0, 1], np.int64), 2)
    same(parts[0], np.array([0.0, 2.0]))
    same(shardops.tensor_scatter_nd_update(np.zeros(1), [[0]], np.array([2 + 3j])), np.array([2.0]))
    # Index dtypes are the op's own (a Tindices attr): not cast.
    with pytest.raises(shardops.InvalidArgumentError, match="Value for attr 'Tindices' of uint8"):
        shardops.gather_nd(np.arange(3.0), np.array([[1]], np.uint8))


def test_python_values_in_row_blocks():
    """Each rank's block as Python lists; a list TensorFlow cannot take, a string for an int
    attribute, or a float for an int tensor, on one rank only raises on every rank, with the
    same exception."""
    comm = shardops_world()
    rank, size = comm.Get_rank(), comm.Get_size()
    start, stop = shardops.row_block(5, comm)
    data = [[float(r), float(r) + 0.5] for r in range(start, stop)]
    parts = [r % 2 for r in range(start, stop)]
    got = shardops.dynamic_partition(data, parts, 2, comm=comm)
    same(got[0], np.array([d for d, p in zip(data, parts) if p == 0], np.float32).reshape(-1, 2))
    last = rank == size - 1
    ragged = [[1.0, 2.0], [3.0]] if last else [[1.0, 2.0]]
    count = "2" if last else 2
    updates = [7.5] if last else [7]
    errors = outcomes([lambda: shardops.gather_nd(ragged, [[0]], comm=comm),
                       lambda: shardops.dynamic_partition(data, parts, count, comm=comm),
                       lambda: shardops.tensor_scatter_nd_update(np.zeros(2, np.int32), [[0]], updates, comm=comm)],
                      Exception)
    for e, (cls, expected) in zip(errors, [(ValueError, "Can't convert non-rectangular Python sequence to Tensor."),
                                           (TypeError, "Expected int for argument 'num_partitions' not '2'."),
                                           (TypeError, "Cannot convert [7.5] to EagerTensor of dtype int32")]):
        texts = comm.allgather((type(e).__name__, str(e)))
        assert isinstance(e, cls), errors
        assert len(set(texts)) == 1 and expected in texts[0][1], texts


def test_python_values_with_empty_blocks():
    """The ranks' blocks of a Python value are typed as TensorFlow types the whole: a rank
    whose block is empty takes the others' dtype, and int32 on one rank with int64 on another
    is int64."""
    comm = shardops_world()
    rank = comm.Get_rank()
    got = shardops.dynamic_stitch([[0, 1]] if rank == 0 else [[]], [[5, 6]] if rank == 0 else [[]], comm=comm)
    same(np.concatenate(comm.allgather(got)), np.array([5, 6], np.int32))
    size = comm.Get_size()
    got = shardops.dynamic_stitch([[rank]], [[2 ** 40 if rank == size - 1 else rank]], comm=comm)
    same(np.concatenate(comm.allgather(got)), np.array(list(range(size - 1)) + [2 ** 40], np.int64))


def test_bad_indices_policy_is_checked():
    with pytest.raises(shardops.InvalidArgumentError):
        shardops.gather_nd(np.zeros(3), np.zeros((1, 1), np.int32), bad_indices="sometimes")


def shardops_world():
    from mpi4py import MPI
    return MPI.COMM_WORLD
