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

# The extension sets what MPI's start-up needs (route/MpiStartup.hpp), has mpi4py start
# MPI, then starts Kokkos.
from . import _shardops
from ._errors import Error, InternalError, InvalidArgumentError, IOError  # noqa: A004

__version__ = _shardops.__version__

atexit.register(_shardops._finalize)

_REGISTRY = json.loads(_shardops.op_registry_json())


def op_registry():
    """Every op shardops has (its deck, command-line, TensorFlow and Python names, inputs,
    attributes and the dtypes TensorFlow has kernels for), as ``shardops --list-ops``
    prints it: a list of dicts."""
    return json.loads(json.dumps(_REGISTRY))


# The inputs of one dtype (TensorFlow's type attr T): the rest are indices or partition ids.
_VALUE_ROLES = ("data", "tensor", "params", "updates")
_INT32 = _np.iinfo(_np.int32)


def _python_value(value):
    """Whether ``value`` is a plain Python value (a number, a list or tuple of them), not an
    array or a NumPy scalar: TensorFlow picks such a value's dtype itself."""
    return not isinstance(value, (_np.ndarray, _np.generic)) and not hasattr(value, "__array__")


def _tf_default(value, index):
    """``value`` as TensorFlow converts a Python value of no given dtype: integers to int32
    (int64 when one does not fit), floats to float32; bools, complex numbers and strings as
    NumPy makes them. An empty index list is int32 (a rank's empty block of indices). A list
    of NumPy floats (arrays or scalars) keeps their dtype, as TensorFlow keeps it; its
    integers still become int32 where they fit, as TensorFlow makes them."""
    a = _np.asarray(value)
    if a.dtype.kind in "iu" and a.size and (a.min() < _INT32.min or a.max() > _INT32.max):
        return a.astype(_np.int64)
    if index and a.size == 0:
        return a.astype(_np.int32)
    if isinstance(value, (list, tuple)) and any(isinstance(x, (_np.ndarray, _np.generic)) for x in value):
        return a.astype(_np.int32) if a.dtype.kind in "iu" else a
    return a.astype({"i": _np.int32, "u": _np.int32, "f": _np.float32}.get(a.dtype.kind, a.dtype))


def _to_dtype(value, dtype):
    """A Python value as an array of ``dtype`` (the op's dtype, set by an earlier input), as
    TensorFlow converts it; a value that would change is left in NumPy's dtype (which is
    then the op's dtype error)."""
    a = _np.asarray(value)
    if a.dtype.kind in "SUO" or dtype.kind in "SUO" or dtype == a.dtype:
        return a
    with _np.errstate(all="ignore"):
        converted = a.astype(dtype)
        kept = (a.dtype.kind != "c" or dtype.kind == "c") and bool(
            _np.all((converted == a) | ((converted != converted) & (a != a))))
    return converted if kept else a


def _convert_python_values(spec, values):
    """TensorFlow's conversion of the op's inputs that are plain Python values, in the op's
    input order: the first of the value inputs (data, tensor, params, updates) sets the dtype
    the later ones are converted to; a Python value that comes first takes TensorFlow's default
    dtype; indices and partition ids become int32 (int64 where one does not fit). Arrays are
    never converted: a mismatch among them is the op's error, as in TensorFlow. Nothing here
    raises: a value NumPy cannot take is left to the extension, whose conversion errors every
    rank of a distributed call agrees on (raising here, on one rank, would leave the others
    waiting in the call)."""
    dtype = None
    for i in spec["inputs"]:
        name, value_role = i["name"], i["role"] in _VALUE_ROLES
        items = values[name] if i["list"] else [values[name]]
        out = []
        for v in items:
            if _python_value(v):
                try:
                    v = _to_dtype(v, dtype) if value_role and dtype is not None else _tf_default(v, not value_role)
                except Exception:  # noqa: B902 - the extension reports it, on every rank
                    pass
            if value_role and dtype is None and isinstance(v, (_np.ndarray, _np.generic)):
                dtype = v.dtype
            out.append(v)
        values[name] = out if i["list"] else out[0]


def _make_op(spec):
    """The Python function of one op of the registry: its inputs and attributes in order
    (positional or keyword), then the keywords ``comm`` and, where TensorFlow's op has a
    bad_indices_policy, ``bad_indices``."""
    run = getattr(_shardops, spec["python"])
    lists = [i["name"] for i in spec["inputs"] if i["list"]]
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
        _convert_python_values(spec, values)
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
