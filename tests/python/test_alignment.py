"""shardops.empty and shardops.aligned: 64-byte-aligned arrays, and the ops give the same
answers on them as on NumPy's own (16-byte-aligned) arrays."""

import numpy as np
import pytest

import shardops


@pytest.mark.parametrize("shape,dtype", [((5, 3), np.float32), (7, np.int8), ((0, 4), np.float64),
                                         ((2, 3, 4), np.complex128)])
def test_empty_is_aligned(shape, dtype):
    a = shardops.empty(shape, dtype)
    assert a.size == 0 or a.ctypes.data % 64 == 0
    assert a.shape == (shape if isinstance(shape, tuple) else (shape,))
    assert a.dtype == np.dtype(dtype) and a.flags.c_contiguous and a.flags.writeable


def test_aligned_copies_only_when_needed():
    raw = np.arange(1 + 64 * 4, dtype=np.float32)
    misaligned = raw[1:].reshape(64, 4)
    assert misaligned.ctypes.data % 64 != 0
    copy = shardops.aligned(misaligned)
    assert copy.ctypes.data % 64 == 0 and np.array_equal(copy, misaligned)
    assert shardops.aligned(copy) is copy
    strided = shardops.aligned(copy[:, ::2])
    assert strided.flags.c_contiguous and np.array_equal(strided, copy[:, ::2])


def test_ops_agree_on_aligned_and_numpy_arrays():
    rng = np.random.default_rng(3)
    params = rng.standard_normal((1000, 16)).astype(np.float32)
    idx = rng.integers(0, 1000, (3000, 1)).astype(np.int64)
    upd = rng.standard_normal((3000, 16)).astype(np.float32)
    a = shardops.aligned(params)
    assert np.array_equal(shardops.gather_nd(a, idx), shardops.gather_nd(params, idx))
    assert np.array_equal(shardops.gather_nd(a, idx), params[idx[:, 0]])
    assert np.array_equal(shardops.tensor_scatter_nd_add(a, idx, upd),
                          shardops.tensor_scatter_nd_add(params, idx, upd))
