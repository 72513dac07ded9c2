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

import atexit as _atexit
import builtins as _builtins
import collections.abc as _abc
import inspect as _inspect
import json as _json
import operator as _operator
import os as _os
import warnings as _warnings

import numpy as _np

# The extension sets what MPI's start-up needs (route/MpiStartup.hpp), has mpi4py start
# MPI, then starts Kokkos.
from . import _batch_dims, _shardops
from . import _python_values as _pv
from ._errors import (Error, InternalError, InvalidArgumentError, IOError, NotFoundError,  # noqa: A004
                      ResourceExhaustedError)

__version__ = _shardops.__version__

_atexit.register(_shardops._finalize)

_REGISTRY = _json.loads(_shardops.op_registry_json())


def op_registry():
    """Every op shardops has (its deck, command-line, TensorFlow and Python names, inputs,
    attributes and the dtypes TensorFlow has kernels for), as ``shardops --list-ops``
    prints it: a list of dicts."""
    return _json.loads(_json.dumps(_REGISTRY))


# The inputs of one dtype (TensorFlow's type attr T): the rest are indices or partition ids.
_VALUE_ROLES = ("data", "tensor", "params", "updates")
_INT32 = _np.iinfo(_np.int32)
def _python_value(value):
    """Whether ``value`` is a plain Python value (a number, a list or tuple of them), not an
    array or a NumPy scalar: TensorFlow picks such a value's dtype itself."""
    return not isinstance(value, (_np.ndarray, _np.generic)) and not hasattr(value, "__array__")


def _array_to(value, dtype):
    """An array as TensorFlow converts one to ``dtype`` (NumPy's cast: any number into any
    number, and an array of byte or text strings into a number by NumPy's parsing, with its
    ValueError for one that is no number); other strings are left as they are (the op
    checks them)."""
    a = _np.asarray(value)
    if a.dtype.kind in "SU" and dtype.kind not in _pv.STRING_KINDS:
        return a.astype(dtype)
    if a.dtype == dtype or a.dtype.kind in _pv.STRING_KINDS or dtype.kind in _pv.STRING_KINDS:
        return a
    with _np.errstate(all="ignore"), _warnings.catch_warnings():
        _warnings.simplefilter("ignore", _np.ComplexWarning)  # TensorFlow drops the imaginary parts too
        return a.astype(dtype)


def _to(value, dtype):
    """``value``, an array or a Python value, as TensorFlow converts it to ``dtype``."""
    if not _python_value(value):
        return _array_to(value, dtype)
    items, shape = _pv.flatten(value)
    return _pv.convert(items, shape, *_pv.plan(_pv.summary(items, shape), dtype, value))


def _inputs_of(spec, values):
    """(input spec, value) for every tensor the op takes, in its input order (a list input's
    elements one by one)."""
    for i in spec["inputs"]:
        for v in values[i["name"]] if i["list"] else [values[i["name"]]]:
            yield i, v


def _python_blocks(spec, values):
    """For each tensor the op takes that is a Python value, this rank's summary of its block
    (_python_values.summary: what the ranks agree on before converting, None where it is an
    array), and the block's (elements, shape, summary)."""
    blocks = [_pv.flatten(v) if _python_value(v) else None for _, v in _inputs_of(spec, values)]
    blocks = [None if b is None else b + (_pv.summary(*b),) for b in blocks]
    return [None if b is None else b[2] for b in blocks], blocks


def _whole_values(mine, every):
    """The summary of each Python value as a whole, from this rank's _python_blocks
    summaries (``mine``) and every rank's, in rank order. Ranks whose calls differ in the
    number of tensors keep their own (the op refuses the call)."""
    if any(rank is None or len(rank) != len(mine) for rank in every):
        return mine
    return [None if m is None else _pv.merge([rank[k] for rank in every if rank[k] is not None])
            for k, m in enumerate(mine)]


def _convert(spec, values, wholes, blocks):
    """TensorFlow's conversion of the op's inputs (its eager op wrappers'), in the op's input
    order: the first value input (data, tensor, params, updates) sets the op's dtype, its own
    (an array's) or the one TensorFlow gives a Python value; the later value inputs are
    converted to it, arrays by NumPy's cast, Python values as TensorFlow converts them
    (_python_values, on ``wholes``: their summaries as whole values; ``blocks``: this rank's
    elements, shapes and summaries). Partition ids and DynamicStitch's indices are int32 inputs,
    converted likewise; the other indices keep an array's dtype or take the one TensorFlow
    gives a Python value. Raises TensorFlow's TypeError or ValueError for a value it cannot
    convert."""
    dtype = None
    k = 0
    for i in spec["inputs"]:
        value_role = i["role"] in _VALUE_ROLES
        fixed_int32 = not value_role and not spec["tindices"]
        items = values[i["name"]] if i["list"] else [values[i["name"]]]
        out = []
        for v in items:
            target = dtype if value_role else _np.dtype(_np.int32) if fixed_int32 else None
            if blocks[k] is not None:
                try:
                    conversion = _pv.plan(wholes[k], target, v)
                except TypeError as e:
                    raise _named_elsewhere(e, blocks[k][2], target, v) from None
                v = _pv.convert(blocks[k][0], _pv.block_shape(blocks[k][1], wholes[k]), *conversion)
            elif target is not None:
                v = _array_to(v, target)
            elif not value_role and not isinstance(v, _np.ndarray):
                # An array-like's own conversion (its __array__) fails as it would for a value.
                v = _np.asarray(v)
            if value_role and dtype is None:
                dtype = _np.asarray(v).dtype
            out.append(v)
            k += 1
        values[i["name"]] = out if i["list"] else out[0]
    # ScatterNd's shape is a tensor of the indices' dtype in TensorFlow, converted to it.
    for a in spec["attrs"]:
        if a["kind"] == "shape" and "indices" in values and not isinstance(values["indices"], list):
            # Converted whatever the indices' dtype: TensorFlow's TypeError for a Python shape
            # that cannot take it (ints into bool or string) comes before the op refuses the
            # indices' dtype; a shape of a dtype the op refuses is left for that refusal.
            index_dtype = _np.asarray(values["indices"]).dtype
            shape = _to(values[a["name"]], index_dtype)
            if index_dtype.kind in "iu":
                values[a["name"]] = shape


class _NotHere(Exception):
    """TensorFlow's TypeError for a whole Python value names the value; on several ranks a
    rank whose own block converts leaves the naming to a rank whose block does not
    (_agreed raises that rank's error everywhere), and raises ``error`` where none does."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _named_elsewhere(error, own, target, value):
    """``error`` (TensorFlow's TypeError for the whole value), or _NotHere(error) where this
    rank's block (summary ``own``) would convert on its own."""
    try:
        _pv.plan(own, target, value)
    except TypeError:
        return error
    except ValueError:
        pass
    return _NotHere(error)


def _make_int(value, name):
    """An int attribute as TensorFlow's eager ops take it: int(value), never a string."""
    try:
        # An array of one element is no int to TensorFlow (NumPy 1 would convert it).
        if not isinstance(value, (str, bytes)) and _np.ndim(value) == 0:
            return int(value)
    except (TypeError, ValueError, OverflowError):
        pass
    raise TypeError("Expected int for argument '%s' not %r." % (name, value))


def _exception_like(name, message):
    """An exception of the class named ``name`` (one of shardops' or a built-in one) with
    ``message``: another rank's error raised here."""
    own = {c.__name__: c for c in (Error, InvalidArgumentError, NotFoundError, ResourceExhaustedError, IOError,
                                   InternalError)}
    cls = own.get(name) or getattr(_builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = InvalidArgumentError
    try:
        return cls(message)
    except Exception:  # noqa: B902 - a class that takes other arguments
        return InvalidArgumentError(message)


def _distributed(comm):
    """Whether ``comm`` is an mpi4py intracommunicator of several ranks (a call on it is
    collective); anything else the extension takes or refuses alike on every rank."""
    from mpi4py import MPI  # started by the extension already

    # Before MPI.Init() or after MPI.Finalize() a communicator must not be asked anything
    # (MPI aborts the process); the extension then says that MPI is not running.
    if not MPI.Is_initialized() or MPI.Is_finalized():
        return False
    try:
        return isinstance(comm, MPI.Comm) and comm != MPI.COMM_NULL and not comm.Is_inter() and comm.Get_size() > 1
    except Exception:  # noqa: B902 - a freed communicator: the extension says so
        return False


def _agreed(comm, error, payload=None):
    """Collective on a communicator of several ranks (one allgather): every rank's
    ``payload``, or, where a rank had an ``error`` preparing its call, the lowest such rank's
    error raised on every rank (its own exception there, one of the same class and message
    elsewhere), so that no rank is left waiting in a call the others never make. Without
    one, ``error`` is raised or ``[payload]`` returned."""
    own = error.error if isinstance(error, _NotHere) else error
    if not _distributed(comm):
        if error is not None:
            raise own
        return [payload]
    failure = None if error is None else (type(own).__name__, str(own), isinstance(error, _NotHere))
    every = comm.allgather((failure, payload))
    failed = [(rank, f) for rank, (f, _) in enumerate(every) if f is not None]
    if failed:
        rank, (name, text, _) = next((x for x in failed if not x[1][2]), failed[0])
        if rank == comm.Get_rank():
            raise own
        raise _exception_like(name, text)
    return [p for _, p in every]


# TensorFlow's policies for bad indices (the ops' bad_indices_policy attribute).
_TF_POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")


def _tf_trailing(spec):
    """(the arguments TensorFlow's Python function of the op takes after its inputs and
    attributes, in its order, each positional or keyword; those it takes as keywords only):
    ``name`` (taken, not used: an eager call has no graph), and ``bad_indices_policy`` where
    its op has that attribute, before the name but in gather_nd (whose batch_dims, added by
    _with_batch_dims, comes first) and tensor_scatter_nd_update (whose Python function has
    none: a keyword here)."""
    if not spec["bad_indices"]:
        return ("name",), ()
    if spec["python"] == "gather_nd":
        return ("name", "bad_indices_policy"), ()
    if spec["python"] == "tensor_scatter_nd_update":
        return ("name",), ("bad_indices_policy",)
    return ("bad_indices_policy", "name"), ()


def _tf_enum_name(value):
    """TensorFlow's DT_ name of the dtype it gives ``value`` (an array's own, or the one it
    infers for a Python value)."""
    if _python_value(value):
        items, shape = _pv.flatten(value)
        dtype = _pv.plan(_pv.summary(items, shape), None, value)[1]
    else:
        dtype = _np.asarray(value).dtype
    if dtype.kind in _pv.STRING_KINDS:
        return "DT_STRING"
    return "DT_" + _pv.TF_NAMES.get(dtype.name, dtype.name).upper()


def _bad_indices_of(values, op):
    """The op's policy for bad indices from TensorFlow's ``bad_indices_policy`` (its values
    and messages) or shardops' ``bad_indices`` (either case, "default" too), not both."""
    policy = values.pop("bad_indices_policy", "")
    if isinstance(policy, bytes):
        policy = policy.decode("utf-8", "replace")
    if not isinstance(policy, str):
        raise TypeError("Expected string for argument 'bad_indices_policy' not %r." % (policy,))
    if policy not in _TF_POLICIES and op == "gather_nd":
        # GatherNd's kernels are registered per policy value: TensorFlow finds none for it.
        raise NotFoundError('%s{{node GatherNd}} = GatherNd[Tindices=%s, Tparams=%s, bad_indices_policy="%s"]' % (
            _shardops.no_kernel_text, _tf_enum_name(values["indices"]), _tf_enum_name(values["params"]), policy))
    if policy not in _TF_POLICIES:
        raise InvalidArgumentError("Unknown bad indices handling attribute: %s" % policy)
    if not isinstance(values["bad_indices"], str):
        raise TypeError("bad_indices must be a str, not %s" % type(values["bad_indices"]).__name__)
    if policy and values["bad_indices"] != "error":
        raise TypeError("give bad_indices_policy (TensorFlow's) or bad_indices, not both")
    return policy.lower() if policy else values["bad_indices"]


def _make_op(spec):
    """The Python function of one op of the registry: its inputs and attributes in order,
    then TensorFlow's trailing arguments (_tf_trailing), then the keywords ``comm`` and, where
    the op has a policy for bad indices, ``bad_indices``. The arguments are bound and
    converted before the extension runs the op, and the ranks of a distributed call agree on
    that first (_agreed): a mistake on one rank is an error on all."""
    run = getattr(_shardops, spec["python"])
    lists = [i["name"] for i in spec["inputs"] if i["list"]]
    P = _inspect.Parameter
    params = [P(i["name"], P.POSITIONAL_OR_KEYWORD) for i in spec["inputs"]]
    params += [P(a["name"], P.POSITIONAL_OR_KEYWORD) for a in spec["attrs"]]
    trailing, keywords = _tf_trailing(spec)
    params += [P(t, P.POSITIONAL_OR_KEYWORD, default=None if t == "name" else "") for t in trailing]
    params.append(P("comm", P.KEYWORD_ONLY, default=None))
    params += [P(t, P.KEYWORD_ONLY, default="") for t in keywords]
    if spec["bad_indices"]:
        params.append(P("bad_indices", P.KEYWORD_ONLY, default="error"))
    signature = _inspect.Signature(params)
    # What the extension takes: not TensorFlow's name nor its policy (made bad_indices).
    passed = [p.name for p in params if p.name not in ("name", "bad_indices_policy")]

    def op(*args, **kwargs):
        comm = kwargs.get("comm")
        values, dtypes, blocks, error, converted = None, None, None, None, False
        try:
            values = dict(signature.bind(*args, **kwargs).arguments)
            for p in params:
                values.setdefault(p.name, p.default)
            for name in lists:
                values[name] = list(values[name])
            if spec["bad_indices"]:
                values["bad_indices"] = _bad_indices_of(values, spec["python"])
            for a in spec["attrs"]:
                if a["kind"] == "int":
                    values[a["name"]] = _make_int(values[a["name"]], a["name"])
            if spec["python"] == "dynamic_partition" and not _INT32.min <= values["num_partitions"] <= _INT32.max:
                # TensorFlow's Python layer refuses so many outputs before the op's int32 attr.
                raise ValueError("Number of outputs is too big: %d" % values["num_partitions"])
            dtypes, blocks = _python_blocks(spec, values)
            if all(d is None for d in dtypes):  # arrays only: converted now, agreed below
                _convert(spec, values, dtypes, blocks)
                converted = True
        except Exception as e:  # noqa: B902 - raised on every rank by _agreed
            error = e
        every = _agreed(comm, error, dtypes)
        if any(isinstance(p, _BatchCall) for p in every):  # another rank's call is a batched gather
            raise _batch_call_differs(every)
        # Python values take dtypes the ranks agree on; their conversion is agreed in turn.
        if any(d is not None for rank_dtypes in every for d in rank_dtypes or []):
            error = None
            try:
                if not converted:
                    _convert(spec, values, _whole_values(dtypes, every), blocks)
            except Exception as e:  # noqa: B902
                error = e
            _agreed(comm, error)
        return run(*[values[name] for name in passed])

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


class _BatchCall:
    """A batched gather_nd's payload in the ranks' agreement. A call without batch_dims is
    the plain op, which agrees without one (no extra allgather); where one rank's call is
    batched and another's plain, their first allgathers meet, and each side sees the other's
    kind of payload and raises _batch_call_differs on every rank."""

    def __init__(self, payload):
        self.payload = payload


def _batch_call_differs(every):
    """The error every rank raises where some ranks passed batch_dims and others did not."""
    plain = [r for r, p in enumerate(every) if not isinstance(p, _BatchCall)]
    batched = [r for r, p in enumerate(every) if isinstance(p, _BatchCall)]
    return InvalidArgumentError("gather_nd: the ranks' calls differ: rank %d passed batch_dims; rank %d passed none"
                                % (batched[0], plain[0]))


def _batch_call(values, distributed):
    """This rank's part of a batched gather_nd: (payload, indices). payload: batch_dims, the
    shapes of indices and params and the indices' dtype (a Python value's summary,
    _python_values.summary), for the ranks to agree on; indices: an array, or (elements,
    shape) for a Python value, converted once the ranks agree on its dtype. An empty Python block on several ranks (``[]``) has
    no shape of its own (None): it takes the other ranks'."""
    batch_dims = _make_int(values.pop("batch_dims", 0), "batch_dims")
    if batch_dims == 0:
        return (0, None, None, None), None
    params, indices = values["params"], values["indices"]
    params_shape = _pv.flatten(params)[1] if _python_value(params) else _np.shape(params)
    if _python_value(indices):
        items, shape = _pv.flatten(indices)
        dtype, indices = _pv.summary(items, shape), (items, shape)
    else:
        indices = _np.asarray(indices)
        dtype, shape = indices.dtype, indices.shape
    empty_python = [distributed and _python_value(v) and not _np.size(v) for v in (values["indices"], params)]
    shape, params_shape = [None if e else sh for e, sh in zip(empty_python, (shape, params_shape))]
    if shape is not None and params_shape is not None:
        _batch_dims.check_batch_dims(batch_dims, len(shape), len(params_shape))
    return (batch_dims, shape, params_shape, dtype), indices


def _agreed_batch(every):
    """From every rank's payload (_batch_call): batch_dims, every rank's shapes (an empty
    Python block's filled in from the others') and how a Python value's blocks are converted
    (_python_values.plan, as TensorFlow converts the whole value; None for arrays); the same error on every rank where their calls
    differ or where the shapes fail TensorFlow's checks."""
    def beyond_rows(k):
        known = [p[k] for p in every if p[k] is not None]
        return None if not known else tuple(known[0][1:])
    def call(p):
        return "batch_dims=%d, indices %s, params %s" % (p[0], list(p[1] or ()), list(p[2] or ()))
    trailing = (None, beyond_rows(1), beyond_rows(2))
    for r, p in enumerate(every):
        if p[0] != every[0][0] or any(p[k] is not None and tuple(p[k][1:]) != trailing[k] for k in (1, 2)):
            raise InvalidArgumentError("gather_nd: the ranks' calls differ: rank 0 passed %s; rank %d passed %s"
                                       % (call(every[0]), r, call(p)))
    shapes = [tuple(p[k] if p[k] is not None else (0,) + (trailing[k] or ()) for k in (1, 2)) for p in every]
    batch_dims = every[0][0]
    _batch_dims.check_batch_dims(batch_dims, len(shapes[0][0]), len(shapes[0][1]))
    summaries = [p[3] for p in every if isinstance(p[3], tuple)]
    return batch_dims, shapes, _pv.plan(_pv.merge(summaries), None, None) if summaries else None


def _with_batch_dims(plain):
    """tf.gather_nd: the plain op (``plain``) and TensorFlow's ``batch_dims`` (keyword), which
    TensorFlow builds from a plain GatherNd (_batch_dims.BatchPlan). On several ranks every
    call agrees on ``batch_dims`` first (one small allgather), so that no rank runs the plain
    op while another runs the batched one."""
    P = _inspect.Parameter
    plain_signature = _inspect.signature(plain)
    params = list(plain_signature.parameters.values())
    params.insert([p.name for p in params].index("name"), P("batch_dims", P.POSITIONAL_OR_KEYWORD, default=0))
    signature = plain_signature.replace(parameters=params)

    def gather_nd(*args, **kwargs):
        comm = kwargs.get("comm")
        distributed = _distributed(comm)
        try:
            values = signature.bind(*args, **kwargs).arguments
        except TypeError as e:  # raised on every rank (the others' calls agree first too)
            _agreed(comm, e)
            raise  # not reached: _agreed raised it
        if "batch_dims" not in values:
            return plain(**values)
        error, payload, indices = None, None, None
        try:
            payload, indices = _batch_call(values, distributed)
        except Exception as e:  # noqa: B902 - raised on every rank by _agreed
            error = e
        every = _agreed(comm, error, _BatchCall(payload))
        if not all(isinstance(p, _BatchCall) for p in every):  # another rank's call is a plain one
            raise _batch_call_differs(every)
        every = [p.payload for p in every]
        if all(p[0] == 0 for p in every):
            return plain(**values)
        batch_dims, shapes, conversion = _agreed_batch(every)
        rank = comm.Get_rank() if distributed else 0
        if isinstance(indices, tuple):  # a Python value: the dtype TensorFlow gives the whole
            indices = _pv.convert(*indices, *conversion).reshape(shapes[rank][0])
        if indices.dtype.kind != "i":  # the plain op refuses the dtype, as TensorFlow's does
            values["indices"] = indices
            return plain(**values)
        plan = _batch_dims.BatchPlan(batch_dims, shapes[rank][0], shapes[rank][1],
                                     [(ind[0], par[0]) for ind, par in shapes], rank)
        if plan.error is not None:
            raise InvalidArgumentError(plan.error)
        values["indices"] = plan.indices(indices, batch_dims)
        return plan.output(plain(**values))

    gather_nd.__name__ = gather_nd.__qualname__ = plain.__name__
    gather_nd.__module__ = __name__
    gather_nd.__signature__ = signature
    gather_nd.__doc__ = plain.__doc__
    return gather_nd


gather_nd = _with_batch_dims(gather_nd)  # noqa: F821 - made from the registry above

__all__ = _OPS + ["op_registry", "read", "write", "row_block", "empty", "aligned", "Error", "InvalidArgumentError",
                  "NotFoundError", "ResourceExhaustedError", "IOError", "InternalError"]


def _dataset_name(name, what):
    """``name`` ("FILE:/path") as a str: a str or an ``os.PathLike`` of one; anything else
    (bytes, None, a number) is a TypeError, where str() made it a file name."""
    name = _os.fspath(name) if isinstance(name, (str, _os.PathLike)) else name
    if not isinstance(name, str):
        raise TypeError("%s must be a str \"FILE:/path\" (or an os.PathLike of one), not %s"
                        % (what, type(name).__name__))
    return name


def read(dataset, *, comm=None):
    """This rank's block (``row_block`` of its rows) of the HDF5 dataset ``"FILE:/path"``;
    strings come back as an object array of bytes."""
    name, error = None, None
    try:
        name = _dataset_name(dataset, "dataset")
    except TypeError as e:
        error = e
    _agreed(comm, error)
    return _shardops.read(name, comm)


def write(outputs, *, comm=None, overwrite=False, attributes=None):
    """Writes ``{"FILE:/path": array}`` (each rank its row block) as the command line
    does: all datasets of a file appear together or not at all, existing datasets are
    refused unless ``overwrite``, and every dataset gets provenance attributes (``op``,
    ``writer``, ``shardops_version``) and the string pairs of ``attributes``, whose names
    must not be those."""
    named, error = None, None
    try:
        # A mapping only: pairs or another iterable would reach the extension's dict()
        # unchecked, a bytes name becoming the file "b'x.h5".
        if not isinstance(outputs, _abc.Mapping):
            raise TypeError("outputs must be a dict {\"FILE:/path\": array}, not %s" % type(outputs).__name__)
        named = {_dataset_name(k, "an output's name"): v for k, v in outputs.items()}
    except TypeError as e:
        error = e
    _agreed(comm, error)
    return _shardops.write(named, comm, bool(overwrite), attributes)


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
    # NumPy's own checks of the shape (no negative or non-integer sizes), with no memory.
    shape = _np.empty(shape, dtype=_np.dtype([])).shape
    if dtype.hasobject:
        return _np.empty(shape, dtype)  # references: no rows for the ops to read
    if dtype.kind not in "SUV" and dtype.isnative:
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
    (the layout ``read`` returns and DynamicStitch and ScatterNd produce). Not collective."""
    num_rows = _operator.index(num_rows)  # an integer, as TypeError says otherwise
    if not -(2**63) <= num_rows < 2**63:
        raise InvalidArgumentError("row_block: num_rows %d does not fit a 64-bit integer" % num_rows)
    if comm is not None:
        from mpi4py import MPI

        # Asking a communicator anything without MPI running aborts the process.
        if MPI.Is_finalized():
            raise InvalidArgumentError("MPI has been finalized (MPI.Finalize()): shardops needs MPI running")
        if not MPI.Is_initialized():
            raise InvalidArgumentError(
                "MPI is not running (mpi4py.rc.initialize = False and no MPI.Init() yet): shardops needs MPI running")
    size, rank = (1, 0) if comm is None else (comm.Get_size(), comm.Get_rank())
    return _shardops.row_block(num_rows, size, rank)
