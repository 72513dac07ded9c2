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
import inspect
import json

import numpy as _np

from mpi4py import MPI  # noqa: F401 - initializes MPI before the extension starts Kokkos

from ._errors import Error, InternalError, InvalidArgumentError, IOError  # noqa: A004
from . import _shardops

__version__ = _shardops.__version__

atexit.register(_shardops._finalize)

_REGISTRY = json.loads(_shardops.op_registry_json())


def op_registry():
    """Every op shardops has (its deck, command-line, TensorFlow and Python names, inputs,
    attributes and the dtypes TensorFlow has kernels for), as ``shardops --list-ops``
    prints it: a list of dicts."""
    return json.loads(json.dumps(_REGISTRY))


def _make_op(spec):
    """The Python function of one op of the registry: its inputs and attributes in order
    (positional or keyword), then the keywords ``comm`` and, where TensorFlow's op has a
    bad_indices_policy, ``bad_indices``."""
    run = getattr(_shardops, spec["python"])
    lists = [i["name"] for i in spec["inputs"] if i["list"]]
    ints = [a["name"] for a in spec["attrs"] if a["kind"] == "int"]
    P = inspect.Parameter
    params = [P(i["name"], P.POSITIONAL_OR_KEYWORD) for i in spec["inputs"]]
    params += [P(a["name"], P.POSITIONAL_OR_KEYWORD) for a in spec["attrs"]]
    params.append(P("comm", P.KEYWORD_ONLY, default=None))
    if spec["bad_indices"]:
        params.append(P("bad_indices", P.KEYWORD_ONLY, default="error"))
    signature = inspect.Signature(params)

    def op(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        for name in lists:
            values[name] = list(values[name])
        for name in ints:
            values[name] = int(values[name])
        return run(*[values[p.name] for p in params])

    op.__name__ = op.__qualname__ = spec["python"]
    op.__module__ = __name__
    op.__signature__ = signature
    op.__doc__ = spec["summary"] + "."
    return op


# The ops: one function per entry of the registry with a Python name.
_OPS = [spec["python"] for spec in _REGISTRY if spec["python"]]
for _spec in _REGISTRY:
    if _spec["python"]:
        globals()[_spec["python"]] = _make_op(_spec)
del _spec

__all__ = _OPS + ["op_registry", "read", "write", "row_block", "empty", "aligned", "Error", "InvalidArgumentError", "IOError",
                  "InternalError"]


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


# Rows of the ops' usual widths (16 float32 = 64 bytes) each fill one cache line only when the
# array starts on a 64-byte boundary; NumPy aligns its buffers to 16 bytes, so a row then
# spans two lines and ops that visit rows in index order move twice the cache lines.
_ALIGNMENT = 64


def empty(shape, dtype):
    """A NumPy array like ``numpy.empty(shape, dtype)`` whose buffer starts on a 64-byte
    boundary (what the ops' own buffers and ``read``'s arrays have). For the dtypes the ops
    take, the buffer is one the library allocates as it does its outputs' (a large one on
    huge pages, which random row reads need: NumPy's own large buffers get 4 KiB pages here)."""
    dtype = _np.dtype(dtype)
    shape = tuple(int(n) for n in (shape if _np.iterable(shape) else (shape,)))
    if not dtype.hasobject and dtype.kind not in "SUV":
        try:
            return _shardops.empty(list(shape), dtype)
        except InvalidArgumentError:
            pass  # a dtype the ops do not have: NumPy's memory, aligned here
    nbytes = int(_np.prod(shape, dtype=_np.int64)) * dtype.itemsize
    raw = _np.empty(nbytes + _ALIGNMENT, _np.uint8)
    start = (-raw.ctypes.data) % _ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def aligned(array):
    """``array`` itself if its buffer starts on a 64-byte boundary and is C-contiguous, else a
    copy that does: inputs such as ``gather_nd``'s params are read faster from one."""
    a = _np.asarray(array)
    if a.dtype.hasobject or (a.flags.c_contiguous and a.ctypes.data % _ALIGNMENT == 0):
        return a
    out = empty(a.shape, a.dtype)
    out[...] = a
    return out


def row_block(num_rows, comm=None):
    """``(start, stop)`` of this rank's rows in the balanced layout of ``num_rows`` rows
    (the layout ``read`` returns and DynamicStitch and ScatterNd produce)."""
    return _shardops.row_block(int(num_rows), comm)
