"""shardops: TensorFlow's data-movement ops on NumPy arrays, on one process or across the
ranks of an mpi4py communicator, and HDF5 datasets in and out (see docs/python.md).

With ``comm=None`` (or a one-rank communicator) arrays are whole tensors. With an mpi4py
communicator every call is collective: each rank passes its own row block (axis 0) of each
input, blocks in rank order and possibly uneven, and gets back its block of each output:
DynamicPartition's outputs stay where their rows were, DynamicStitch and ScatterNd are
balanced (``row_block``), TensorScatter* keep the layout of ``tensor``, GatherNd the layout
of ``indices``. A 0-d input is taken from rank 0; a 0-d output is returned on rank 0 (the
other ranks get an empty array).
"""

import atexit

from mpi4py import MPI  # noqa: F401 - initializes MPI before the extension starts Kokkos

from ._errors import Error, InternalError, InvalidArgumentError, IOError  # noqa: A004
from . import _shardops

__version__ = _shardops.__version__
__all__ = ["dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch", "scatter_nd",
           "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
           "tensor_scatter_nd_min", "tensor_scatter_nd_max", "gather_nd", "read", "write", "row_block",
           "Error", "InvalidArgumentError", "IOError", "InternalError"]

atexit.register(_shardops._finalize)


def dynamic_partition(data, partitions, num_partitions, *, comm=None):
    """``tf.dynamic_partition``: a list of ``num_partitions`` arrays, output ``p`` holding
    the rows of ``data`` whose partition id is ``p``, in order."""
    return _shardops.dynamic_partition(data, partitions, int(num_partitions), comm)


def dynamic_stitch(indices, data, *, comm=None):
    """``tf.dynamic_stitch``: ``merged[indices[m][i]] = data[m][i]``; the last ``(m, i)``
    wins; rows no index names are zero."""
    return _shardops.dynamic_stitch(list(indices), list(data), comm)


def parallel_dynamic_stitch(indices, data, *, comm=None):
    """``tf.raw_ops.ParallelDynamicStitch``: the same result as ``dynamic_stitch`` (one of
    the outcomes TensorFlow allows for duplicate indices)."""
    return _shardops.dynamic_stitch(list(indices), list(data), comm)


def scatter_nd(indices, updates, shape, *, comm=None, bad_indices="error"):
    """``tf.scatter_nd``: zeros of ``shape``, then ``output[index] += update`` per index
    row (strings: concatenated in index order)."""
    return _shardops.scatter_nd(indices, updates, shape, comm, bad_indices)


def tensor_scatter_nd_update(tensor, indices, updates, *, comm=None, bad_indices="error"):
    """``tf.tensor_scatter_nd_update``: a copy of ``tensor``, each index row assigned in
    order (the last duplicate wins)."""
    return _shardops.tensor_scatter_nd_update(tensor, indices, updates, comm, bad_indices)


def tensor_scatter_nd_add(tensor, indices, updates, *, comm=None, bad_indices="error"):
    """``tf.tensor_scatter_nd_add``."""
    return _shardops.tensor_scatter_nd_add(tensor, indices, updates, comm, bad_indices)


def tensor_scatter_nd_sub(tensor, indices, updates, *, comm=None, bad_indices="error"):
    """``tf.tensor_scatter_nd_sub``."""
    return _shardops.tensor_scatter_nd_sub(tensor, indices, updates, comm, bad_indices)


def tensor_scatter_nd_min(tensor, indices, updates, *, comm=None, bad_indices="error"):
    """``tf.tensor_scatter_nd_min``."""
    return _shardops.tensor_scatter_nd_min(tensor, indices, updates, comm, bad_indices)


def tensor_scatter_nd_max(tensor, indices, updates, *, comm=None, bad_indices="error"):
    """``tf.tensor_scatter_nd_max``."""
    return _shardops.tensor_scatter_nd_max(tensor, indices, updates, comm, bad_indices)


def gather_nd(params, indices, *, comm=None, bad_indices="error"):
    """``tf.gather_nd``: ``output[i] = params[indices[i]]`` (slices when the index depth
    is below the rank of ``params``; with ``bad_indices="ignore"`` bad rows are zeros)."""
    return _shardops.gather_nd(params, indices, comm, bad_indices)


def read(dataset, *, comm=None):
    """This rank's block (``row_block`` of its rows) of the HDF5 dataset ``"FILE:/path"``;
    strings come back as an object array of bytes."""
    return _shardops.read(str(dataset), comm)


def write(outputs, *, comm=None, overwrite=False, attributes=None):
    """Writes ``{"FILE:/path": array}`` (each rank its row block) as the command line
    does: all datasets of a file appear together or not at all, existing datasets are
    refused unless ``overwrite``, and every dataset gets provenance attributes (``op``,
    ``writer``, ``shardops_version`` and the string pairs of ``attributes``)."""
    return _shardops.write(dict(outputs), comm, bool(overwrite), dict(attributes or {}))


def row_block(num_rows, comm=None):
    """``(start, stop)`` of this rank's rows in the balanced layout of ``num_rows`` rows
    (the layout ``read`` returns and DynamicStitch and ScatterNd produce)."""
    return _shardops.row_block(int(num_rows), comm)
