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
import builtins as _builtins
import collections.abc as _abc
import inspect
import json
import operator as _operator
import os as _os
import warnings as _warnings

import numpy as _np

# The extension sets what MPI's start-up needs (route/MpiStartup.hpp), has mpi4py start
# MPI, then starts Kokkos.
from . import _batch_dims, _shardops
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
_INT64 = _np.iinfo(_np.int64)
_UINT64 = _np.iinfo(_np.uint64)
# The default dtype (_tf_default) of Python integers beyond int64: TensorFlow refuses them
# where it picks the dtype, and takes them into a uint64 tensor.
_BEYOND_INT64 = "beyond int64"
_OUT_OF_RANGE = "Can't convert Python sequence with out-of-range integer to Tensor."
_STRING_KINDS = "SUO"
# TensorFlow's names of the dtypes whose NumPy names differ, as its conversion errors print them.
_TF_NAMES = {"float16": "half", "float32": "float", "float64": "double"}


def _python_value(value):
    """Whether ``value`` is a plain Python value (a number, a list or tuple of them), not an
    array or a NumPy scalar: TensorFlow picks such a value's dtype itself."""
    return not isinstance(value, (_np.ndarray, _np.generic)) and not hasattr(value, "__array__")


# The kinds of element TensorFlow takes after a sequence's first one: bools only with bools,
# strings only with strings; after an integer or a real, bools, integers and reals; after a
# complex number, any number.
_TAKES_AFTER = {"b": "b", "i": "bif", "f": "bif", "c": "bifc", "s": "s"}


def _element_kind(x):
    """The kind (_TAKES_AFTER) of an element of a Python sequence; None for another object."""
    if isinstance(x, (_np.ndarray, _np.generic)):
        k = _np.asarray(x).dtype.kind
        return {"u": "i", "U": "s", "S": "s"}.get(k, k)
    for kind, types in (("b", bool), ("i", int), ("f", float), ("c", complex), ("s", (str, bytes))):
        if isinstance(x, types):
            return kind
    return None


def _first_element(value):
    """The first element of a nested Python sequence (None if it has none)."""
    while isinstance(value, (list, tuple)):
        if not value:
            return None
        value = value[0]
    return value


def _elements(value):
    """The elements of a nested Python sequence, in order."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _elements(item)
    else:
        yield value


def _mixed_types(value, a):
    """Whether a Python sequence (``a``: as NumPy holds it) mixes kinds of element as
    TensorFlow refuses to: its first element's kind decides which may follow (_TAKES_AFTER),
    where NumPy found a common dtype. NumPy's dtype says what came after the first element,
    but for text: numbers among strings are looked for one by one."""
    first = _element_kind(_first_element(value))
    if first is None:
        return False
    if first == "s":
        return any(_element_kind(x) not in (None, "s") for x in _elements(value))
    kind = {"u": "i", "U": "s", "S": "s"}.get(a.dtype.kind, a.dtype.kind)
    return kind in "bifcs" and kind not in _TAKES_AFTER[first]


def _python_array(value):
    """A plain Python value as NumPy holds it, refused as TensorFlow refuses it: a ragged
    sequence, one that mixes kinds of element ([True, 2], [1, "a"]), or an integer outside
    int64 and uint64 (NumPy would keep it as an object)."""
    try:
        a = _np.asarray(value)
    except ValueError:  # NumPy's "inhomogeneous shape"
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    if isinstance(value, (list, tuple)) and _mixed_types(value, a):
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    if a.dtype == object and a.size:
        items = a.ravel().tolist()
        if any(isinstance(x, (list, tuple)) for x in items):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
        if any(isinstance(x, int) and not isinstance(x, bool) and not _INT64.min <= x <= _UINT64.max for x in items):
            raise ValueError(_OUT_OF_RANGE)
    if a.dtype.kind == "f" and _big_int_in(value):  # NumPy made [2**63, 1] floats
        raise ValueError(_OUT_OF_RANGE)
    return a


def _big_int_in(value):
    """Whether a Python value holds an integer outside int64 (NumPy holds one as uint64, or
    turns its list into floats)."""
    if isinstance(value, (list, tuple)):
        return any(_big_int_in(x) for x in value)
    return isinstance(value, (int, _np.integer)) and not isinstance(value, bool) and int(value) > _INT64.max


def _tf_default(value, a):
    """The dtype TensorFlow gives a Python value (``a``: as _python_array holds it) of no
    given dtype: integers int32 (int64 when one does not fit; _BEYOND_INT64 when one does not
    fit that, which TensorFlow refuses where this default is used), floats float32; bools,
    complex numbers and strings as NumPy makes them. A sequence whose first element is a NumPy
    float (an array or a scalar) takes its dtype, as TensorFlow does; its integers still become
    int32 where they fit. An empty value: None (it takes the other ranks' dtype;
    _empty_default() where none has one)."""
    if a.size == 0:
        return None
    kind = a.dtype.kind
    if kind in "iu":
        if int(a.max()) > _INT64.max:
            return _BEYOND_INT64  # an error only where this default is used
        return _np.dtype(_np.int64 if a.min() < _INT32.min or a.max() > _INT32.max else _np.int32)
    if kind == "f":
        # The first element decides, as in TensorFlow: a NumPy float keeps its dtype (whatever
        # follows it), a Python number makes float32 (whatever NumPy floats follow it).
        first = _first_element(value)
        if isinstance(first, (_np.ndarray, _np.generic)) and _np.asarray(first).dtype.kind == "f":
            return _np.asarray(first).dtype
        return _np.dtype(_np.float32)
    return a.dtype


def _empty_default():
    """TensorFlow's dtype of an empty Python value with no dtype given: float32. Empty index
    values on every rank are float32 then, and the op refuses them as TensorFlow does; the
    int32 inputs (partition ids, DynamicStitch's indices) are converted to int32 instead."""
    return _np.dtype(_np.float32)


def _wider(a, b):
    """The dtype of a Python value whose ranks' blocks gave ``a`` and ``b``, as TensorFlow
    would give it to the whole: the later kind of bool, integer, float, complex, the wider
    size within a kind; strings and numbers do not mix (left to the op's dtype check)."""
    if a == b or a.kind in _STRING_KINDS or b.kind in _STRING_KINDS:
        return a
    order = "biufc"
    ka, kb = order.index(a.kind), order.index(b.kind)
    if ka != kb:
        return a if ka > kb else b
    return a if a.itemsize >= b.itemsize else b


def _cannot_convert(value, dtype):
    name = "string" if dtype.kind in _STRING_KINDS else _TF_NAMES.get(dtype.name, dtype.name)
    return TypeError("Cannot convert %r to EagerTensor of dtype %s" % (value, name))


def _python_to(value, a, dtype):
    """A Python value (``a``: as _python_array holds it) as TensorFlow converts it to
    ``dtype``: integers wrap into any integer dtype, and bools and integers into floats and
    complex numbers; floats go into floats (rounded) and complex numbers; anything else is
    TensorFlow's TypeError. Strings are left as they are (the op checks them)."""
    if dtype.kind in _STRING_KINDS or a.dtype.kind in _STRING_KINDS or a.dtype == dtype:
        if a.dtype.kind in _STRING_KINDS and dtype.kind not in _STRING_KINDS and a.size:
            raise _cannot_convert(value, dtype)
        if dtype.kind in _STRING_KINDS and a.dtype.kind in "biufc" and a.size:  # numbers for strings
            raise _cannot_convert(value, dtype)
        # An empty block ([] is float64 to NumPy) takes the agreed dtype, a string one too.
        return a.astype(dtype) if not a.size and a.dtype != dtype else a
    takes = {"b": "b", "i": "biu", "u": "biu", "f": "biuf", "c": "biufc"}.get(dtype.kind, "")
    if a.size and a.dtype.kind not in takes:
        raise _cannot_convert(value, dtype)
    if dtype.kind in "iu" and dtype != _np.dtype(_np.uint64) and _big_int_in(value):
        raise ValueError(_OUT_OF_RANGE)
    with _np.errstate(all="ignore"):
        return a.astype(dtype)


def _array_to(value, dtype):
    """An array as TensorFlow converts one to ``dtype`` (NumPy's cast: any number into any
    number); strings are left as they are (the op checks them)."""
    a = _np.asarray(value)
    if a.dtype == dtype or a.dtype.kind in _STRING_KINDS or dtype.kind in _STRING_KINDS:
        return a
    with _np.errstate(all="ignore"), _warnings.catch_warnings():
        _warnings.simplefilter("ignore", _np.ComplexWarning)  # TensorFlow drops the imaginary parts too
        return a.astype(dtype)


def _to(value, dtype):
    """``value``, an array or a Python value, as TensorFlow converts it to ``dtype``."""
    return _python_to(value, _python_array(value), dtype) if _python_value(value) else _array_to(value, dtype)


def _inputs_of(spec, values):
    """(input spec, value) for every tensor the op takes, in its input order (a list input's
    elements one by one)."""
    for i in spec["inputs"]:
        for v in values[i["name"]] if i["list"] else [values[i["name"]]]:
            yield i, v


_EMPTY = "empty"  # an empty Python value's entry in _python_dtypes


def _python_dtypes(spec, values):
    """For each tensor the op takes that is a Python value, this rank's default dtype of it
    (_EMPTY for an empty one; None where it is an array), what the ranks agree on before
    converting (_agreed_dtypes), and the value as _python_array holds it (None for arrays)."""
    arrays = [_python_array(v) if _python_value(v) else None for _, v in _inputs_of(spec, values)]
    return [None if a is None else _tf_default(v, a) or _EMPTY
            for a, (_, v) in zip(arrays, _inputs_of(spec, values))], arrays


def _agreed_dtypes(mine, every):
    """The default dtype of each Python value, from this rank's _python_dtypes (``mine``) and
    every rank's: a rank's empty block takes the others' dtype, and int32 on one rank with
    int64 on another is int64, as TensorFlow would type the whole. Ranks whose calls differ
    in the number of tensors keep their own (the op refuses the call)."""
    mine = [None if d == _EMPTY else d for d in mine]
    agreed = list(mine)
    for rank_dtypes in every:
        if rank_dtypes is None or len(rank_dtypes) != len(mine):
            return mine
        for k, d in enumerate(rank_dtypes):
            if d is None or d == _EMPTY:
                continue
            if d is _BEYOND_INT64 or agreed[k] is _BEYOND_INT64:
                agreed[k] = _BEYOND_INT64
            else:
                agreed[k] = d if agreed[k] is None else _wider(agreed[k], d)
    return agreed


def _convert(spec, values, defaults, arrays):
    """TensorFlow's conversion of the op's inputs (its eager op wrappers'), in the op's input
    order: the first value input (data, tensor, params, updates) sets the op's dtype, its own
    (an array's) or its default (a Python value: ``defaults``); the later value inputs are
    converted to it, arrays by NumPy's cast, Python values as TensorFlow converts them.
    Partition ids and DynamicStitch's indices are int32 inputs, converted likewise; the other
    indices keep an array's dtype or take a Python value's default (``arrays``: the Python
    values as _python_array holds them). Raises TensorFlow's TypeError or ValueError for a
    value it cannot convert."""
    dtype = None
    k = 0
    for i in spec["inputs"]:
        value_role = i["role"] in _VALUE_ROLES
        fixed_int32 = not value_role and not spec["tindices"]
        items = values[i["name"]] if i["list"] else [values[i["name"]]]
        out = []
        for v in items:
            a = arrays[k]  # None: an array
            target = dtype if value_role else _np.dtype(_np.int32) if fixed_int32 else None
            if target is not None:
                v = _array_to(v, target) if a is None else _python_to(v, a, target)
            elif a is not None:
                default = defaults[k]
                if default is _BEYOND_INT64:
                    raise ValueError(_OUT_OF_RANGE)
                v = _python_to(v, a, default if isinstance(default, _np.dtype) else _empty_default())
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


def _make_int(value, name):
    """An int attribute as TensorFlow's eager ops take it: int(value), never a string."""
    try:
        if not isinstance(value, (str, bytes)):
            return int(value)
    except (TypeError, ValueError, OverflowError):
        pass
    raise TypeError("Expected int for argument '%s' not %r." % (name, value))


def _exception_like(name, message):
    """An exception of the class named ``name`` (one of shardops' or a built-in one) with
    ``message``: another rank's error raised here."""
    own = {c.__name__: c for c in (Error, InvalidArgumentError, IOError, InternalError)}
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
    if not _distributed(comm):
        if error is not None:
            raise error
        return [payload]
    every = comm.allgather((None if error is None else (type(error).__name__, str(error)), payload))
    for rank, (failed, _) in enumerate(every):
        if failed is not None:
            if rank == comm.Get_rank():
                raise error
            raise _exception_like(*failed)
    return [p for _, p in every]


def _make_op(spec):
    """The Python function of one op of the registry: its inputs and attributes in order
    (positional or keyword), then the keywords ``comm``, where TensorFlow's op has a
    bad_indices_policy, ``bad_indices``, and TensorFlow's ``name`` (taken, not used). The
    arguments are bound and converted before the extension runs the op, and the ranks of a
    distributed call agree on that first (_agreed): a mistake on one rank is an error on all."""
    run = getattr(_shardops, spec["python"])
    lists = [i["name"] for i in spec["inputs"] if i["list"]]
    P = inspect.Parameter
    params = [P(i["name"], P.POSITIONAL_OR_KEYWORD) for i in spec["inputs"]]
    params += [P(a["name"], P.POSITIONAL_OR_KEYWORD) for a in spec["attrs"]]
    params.append(P("comm", P.KEYWORD_ONLY, default=None))
    if spec["bad_indices"]:
        params.append(P("bad_indices", P.KEYWORD_ONLY, default="error"))
    # TensorFlow's ops take a name for the graph; an eager call, as this one, has no use for it.
    params.append(P("name", P.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(params)
    passed = [p.name for p in params if p.name != "name"]  # what the extension takes

    def op(*args, **kwargs):
        comm = kwargs.get("comm")
        values, dtypes, arrays, error, converted = None, None, None, None, False
        try:
            values = dict(signature.bind(*args, **kwargs).arguments)
            for p in params:
                values.setdefault(p.name, p.default)
            for name in lists:
                values[name] = list(values[name])
            if spec["bad_indices"] and not isinstance(values["bad_indices"], str):
                raise TypeError("bad_indices must be a str, not %s" % type(values["bad_indices"]).__name__)
            if values["name"] is not None and not isinstance(values["name"], str):
                raise TypeError("name must be a str, not %s" % type(values["name"]).__name__)
            for a in spec["attrs"]:
                if a["kind"] == "int":
                    values[a["name"]] = _make_int(values[a["name"]], a["name"])
            if spec["python"] == "dynamic_partition" and values["num_partitions"] > _INT32.max:
                # TensorFlow's Python layer refuses so many outputs before the op's int32 attr.
                raise ValueError("Number of outputs is too big: %d" % values["num_partitions"])
            dtypes, arrays = _python_dtypes(spec, values)
            if all(d is None for d in dtypes):  # arrays only: converted now, agreed below
                _convert(spec, values, dtypes, arrays)
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
                    _convert(spec, values, _agreed_dtypes(dtypes, every), arrays)
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
    shapes of indices and params and the indices' dtype (a Python value's default), for the
    ranks to agree on; indices: an array, or (array, value) for a Python value, converted
    once the ranks agree on its dtype. An empty Python block on several ranks (``[]``) has
    no shape of its own (None): it takes the other ranks'."""
    batch_dims = _make_int(values.pop("batch_dims", 0), "batch_dims")
    if batch_dims == 0:
        return (0, None, None, None), None
    params, indices = values["params"], values["indices"]
    params_shape = _python_array(params).shape if _python_value(params) else _np.shape(params)
    if _python_value(indices):
        a = _python_array(indices)
        dtype, shape, indices = _tf_default(indices, a), a.shape, (a, indices)
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
    Python block's filled in from the others') and the indices' dtype the ranks agree on
    (the widest default of Python values); the same error on every rank where their calls
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
    if any(p[3] is _BEYOND_INT64 for p in every):
        raise ValueError(_OUT_OF_RANGE)
    dtype = None
    for p in every:
        if isinstance(p[3], _np.dtype):
            dtype = p[3] if dtype is None else _wider(dtype, p[3])
    return batch_dims, shapes, dtype or _empty_default()


def _with_batch_dims(plain):
    """tf.gather_nd: the plain op (``plain``) and TensorFlow's ``batch_dims`` (keyword), which
    TensorFlow builds from a plain GatherNd (_batch_dims.BatchPlan). On several ranks every
    call agrees on ``batch_dims`` first (one small allgather), so that no rank runs the plain
    op while another runs the batched one."""
    P = inspect.Parameter
    plain_signature = inspect.signature(plain)
    params = list(plain_signature.parameters.values())
    params.insert([p.name for p in params].index("comm"), P("batch_dims", P.KEYWORD_ONLY, default=0))
    signature = plain_signature.replace(parameters=params)

    def gather_nd(*args, **kwargs):
        comm = kwargs.get("comm")
        distributed = _distributed(comm)
        if "batch_dims" not in kwargs:
            return plain(*args, **kwargs)
        error, payload, values, indices = None, None, None, None
        try:
            values = signature.bind(*args, **kwargs).arguments
            payload, indices = _batch_call(values, distributed)
        except Exception as e:  # noqa: B902 - raised on every rank by _agreed
            error = e
        every = _agreed(comm, error, _BatchCall(payload))
        if not all(isinstance(p, _BatchCall) for p in every):  # another rank's call is a plain one
            raise _batch_call_differs(every)
        every = [p.payload for p in every]
        if all(p[0] == 0 for p in every):
            return plain(**values)
        batch_dims, shapes, dtype = _agreed_batch(every)
        rank = comm.Get_rank() if distributed else 0
        if isinstance(indices, tuple):  # a Python value: the dtype TensorFlow gives the whole
            indices = _python_to(indices[1], indices[0], dtype).reshape(shapes[rank][0])
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

__all__ = _OPS + ["op_registry", "read", "write", "row_block", "empty", "aligned", "Error", "InvalidArgumentError", "IOError",
                  "InternalError"]


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
