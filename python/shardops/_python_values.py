"""TensorFlow's conversion of plain Python values (numbers, strings, and nested lists and
tuples of them; not arrays) into tensors, as its eager ops convert their inputs: TensorFlow's
py_seq_tensor.cc, and the cast that may follow it.

TensorFlow infers a kind from the value's first element, then converts every element with
one converter: straight into the dtype the op asks for where it has a converter for that
dtype, else by the inferred kind, followed by a cast to the dtype asked for. Which converter
it ends with depends on the first element each converter fails on, so a rank cannot decide
alone on its block of a distributed value. Each rank therefore summarises its block
(``summary``: its first element's kind and, for each converter, the first error in it); the
ranks exchange the summaries; every rank merges them in rank order (``merge``), which gives
the summary of the whole value, and decides on it (``plan``) as TensorFlow decides on the
whole value; then each rank converts its own block (``convert``).
"""

import collections.abc as abc

import numpy as np

# py_seq_tensor.cc's error texts.
MIXED = "Can't convert Python sequence with mixed types to Tensor."
OUT_OF_RANGE = "Can't convert Python sequence with out-of-range integer to Tensor."
OUT_OF_RANGE_DOUBLE = "Can't convert Python sequence with a value out of range for a double-precision float."
FOUND_INT64 = "Can't convert Python sequence with out-of-range integer to int32 Tensor."
FOUND_FLOAT = "Can't convert Python sequence with floating point values to integer Tensor."
RAGGED = "Can't convert non-rectangular Python sequence to Tensor."

STRING_KINDS = "SUO"
# TensorFlow's names of the dtypes whose NumPy names differ, as its conversion errors print them.
TF_NAMES = {"float16": "half", "float32": "float", "float64": "double"}

# TensorFlow's converters, each making one dtype; it has none for the other dtypes.
CONVERTERS = ("float32", "float64", "float16", "int64", "int32", "uint64", "complex128", "bool", "string")
_INDEX = {c: k for k, c in enumerate(CONVERTERS)}

# The classes of element the converters tell apart.
_FLOAT, _NPFLOAT, _INT, _BOOL, _NPBOOL, _COMPLEX, _STR, _OTHER = range(8)
_CLASS_CACHE = {}


def _class_of(t):
    """The class of an element of type ``t``. A NumPy float64 is a Python float, a NumPy
    complex128 a Python complex and a Python bool an integer to the converters of numbers
    (they test for Python's own types first); NumPy integers become Python ones."""
    c = _CLASS_CACHE.get(t)
    if c is None:
        c = (_BOOL if issubclass(t, bool)
             else _INT if issubclass(t, (int, np.integer))
             else _FLOAT if issubclass(t, float)
             else _NPFLOAT if issubclass(t, np.floating)
             else _NPBOOL if issubclass(t, np.bool_)
             else _COMPLEX if issubclass(t, (complex, np.complexfloating))
             else _STR if issubclass(t, (str, bytes))
             else _OTHER)
        _CLASS_CACHE[t] = c
    return c


def _scalar(x):
    """A 0-d array as TensorFlow takes it inside a sequence: its NumPy scalar."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _sequence(x):
    """Whether TensorFlow takes ``x`` as a sequence of elements (an array's are NumPy scalars)."""
    if isinstance(x, np.ndarray):
        return x.ndim > 0
    return isinstance(x, abc.Sequence) and not isinstance(x, (str, bytes))


def flatten(value):
    """(the elements of a Python value in order, its shape), as TensorFlow reads them: the
    shape from the first element at each depth, every sequence at a depth of that length
    (else its ValueError for a ragged value); a sequence where an element belongs is an
    element (of no kind: mixed types)."""
    shape, x = [], _scalar(value)
    while _sequence(x):
        shape.append(len(x))
        if not len(x):
            break
        x = _scalar(x[0])
    items = []

    def walk(v, depth):
        if not _sequence(v) or len(v) != shape[depth]:
            raise ValueError(RAGGED)
        if depth + 1 == len(shape):
            items.extend(v)
        else:
            for e in v:
                walk(_scalar(e), depth + 1)

    if not shape:
        items.append(x)
    elif shape[0]:
        walk(_scalar(value), 0)
    if np.ndarray in set(map(type, items)):  # 0-d arrays among the elements
        items = [_scalar(e) for e in items]
    return items, tuple(shape)


def inferred_kind(x):
    """TensorFlow's kind of a value from its first element: one of CONVERTERS but "float"
    (a Python float or a NumPy float other than float16 and float64: float32 where no dtype is
    asked for, through float64 where one is), "int" (int32 where it fits, ...). Its ValueError
    for an element of no kind."""
    if isinstance(x, (str, bytes)):
        return "string"
    if isinstance(x, np.float64):
        return "float64"
    if isinstance(x, np.float16):
        return "float16"
    if isinstance(x, (float, np.floating)):
        return "float"
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "int"
    if isinstance(x, (complex, np.complexfloating)):
        return "complex128"
    raise ValueError("Attempt to convert a value (%r) with an unsupported type (%r) to a Tensor." % (x, type(x)))


def _first(mask):
    """The index of the first true entry, or None."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _doubles(values):
    """``values`` (numbers) as Python's float() makes them; inf where an integer has no
    double (PyLong_AsDouble fails)."""
    try:
        return np.array(values, np.float64)
    except OverflowError:
        out = np.empty(len(values), np.float64)
        for j, x in enumerate(values):
            try:
                out[j] = float(x)
            except OverflowError:
                out[j] = np.inf
        return out


def _int64s(values):
    """``values`` (integers, Python's or NumPy's, and bools) as int64, or None where one does
    not fit. NumPy's own integers go through int() first: NumPy would wrap a uint64."""
    if not all(t is int or t is bool for t in set(map(type, values))):
        values = [int(x) for x in values]
    try:
        return np.array(values, np.int64)
    except OverflowError:
        return None


def _to_float(d, dtype):
    """Doubles as TensorFlow's converters make them ``dtype``: float16 through float32."""
    with np.errstate(all="ignore"):
        return d.astype(np.float32).astype(np.float16) if dtype == np.float16 else d.astype(dtype)


def summary(items, shape):
    """This block's summary: (its first element's inferred kind, or None for an empty block;
    for each of CONVERTERS, the error of the first element it fails on, or None; its shape
    beyond the rows, None for an empty one)."""
    if not items:
        return None, (None,) * len(CONVERTERS), None
    kind = inferred_kind(items[0])
    types = set(map(type, items))
    if len(types) == 1:  # the common case: one class for all
        cls = np.full(len(items), _class_of(next(iter(types))), np.int8)
    else:
        cls = np.fromiter((_class_of(type(x)) for x in items), np.int8, len(items))
    is_int, is_float = (cls == _INT) | (cls == _BOOL), (cls == _FLOAT) | (cls == _NPFLOAT)
    ints, floats = np.flatnonzero(is_int), np.flatnonzero(is_float)
    # The integers' values against the ranges (int64 and uint64 each where they fit).
    big = np.zeros(len(items), bool)  # beyond int64
    negative = np.zeros(len(items), bool)
    beyond_int32 = np.zeros(len(items), bool)
    beyond_uint64 = np.zeros(len(items), bool)
    int_no_double = np.zeros(len(items), bool)  # beyond what a double holds
    if ints.size:
        values = items if ints.size == len(items) else [items[k] for k in ints]
        v = _int64s(values)
        if v is not None:
            negative[ints] = v < 0
            beyond_int32[ints] = (v < -(1 << 31)) | (v >= 1 << 31)
        else:
            for k, x in zip(ints, values):
                x = int(x)
                negative[k], big[k] = x < 0, not -(1 << 63) <= x < 1 << 63
                beyond_int32[k] = not -(1 << 31) <= x < 1 << 31
                beyond_uint64[k] = not 0 <= x < 1 << 64
            int_no_double[ints] = np.isinf(_doubles(values))
    float_doubles = _doubles(items if floats.size == len(items) else [items[k] for k in floats])

    def first_error(*cases):
        """The error of the first element among (mask, error) cases."""
        found = [(k, error) for mask, error in cases for k in [_first(mask)] if k is not None]
        return min(found)[1] if found else None

    errors = []
    for c in CONVERTERS:
        if c in ("float32", "float64", "float16", "complex128"):
            mixed = ~is_int & ~is_float & (cls != _COMPLEX if c == "complex128" else True)
            overflow = np.zeros(len(items), bool)
            if c != "complex128" and floats.size:
                overflow[floats] = np.isinf(_to_float(float_doubles, np.dtype(c))) & np.isfinite(float_doubles)
            errors.append(first_error((mixed, MIXED), (int_no_double | overflow, OUT_OF_RANGE_DOUBLE)))
        elif c in ("int64", "int32", "uint64"):
            mixed = ~is_int & ~is_float
            out = big if c == "int64" else (big | beyond_int32) if c == "int32" else (negative | beyond_uint64)
            narrow = (beyond_int32 & ~big) if c == "int32" else np.zeros(len(items), bool)
            wide = out & ~narrow
            errors.append(first_error((mixed, MIXED), (is_float, FOUND_FLOAT), (wide, OUT_OF_RANGE),
                                      (narrow, FOUND_INT64)))
        elif c == "bool":
            errors.append(first_error(((cls != _BOOL) & (cls != _NPBOOL), MIXED)))
        else:
            errors.append(first_error((cls != _STR, MIXED)))
    return kind, tuple(errors), tuple(shape[1:])


def merge(summaries):
    """The whole value's summary from its blocks' (in rank order)."""
    kind = next((s[0] for s in summaries if s[0] is not None), None)
    errors = tuple(next((s[1][k] for s in summaries if s[1][k] is not None), None) for k in range(len(CONVERTERS)))
    return kind, errors, next((s[2] for s in summaries if s[2] is not None), None)


def block_shape(shape, whole):
    """A block's shape: an empty list (``[]``: no shape beyond its rows) takes the other
    blocks' (``whole``: the merged summary)."""
    return (0,) + whole[2] if shape == (0,) and whole[2] is not None else shape


def _converter_of(dtype):
    """TensorFlow's converter for ``dtype``, or None where it has none."""
    if dtype.kind in STRING_KINDS:
        return "string"
    return dtype.name if dtype.name in _INDEX else None


def _dtype_of(converter):
    return np.dtype(object) if converter == "string" else np.dtype(converter)


def _compatible(wanted, made):
    """Whether TensorFlow casts a tensor of dtype ``made`` to ``wanted`` (IsCompatible):
    integers into integers, integers and floats into floats, any number into complex."""
    numbers = {"i": "iu", "u": "iu", "f": "iuf", "c": "iufc"}.get(wanted.kind, "")
    return made.kind in numbers


def cannot_convert(value, dtype):
    """TensorFlow's TypeError for a value it cannot convert to ``dtype``."""
    name = "string" if dtype.kind in STRING_KINDS else TF_NAMES.get(dtype.name, dtype.name)
    return TypeError("Cannot convert %r to EagerTensor of dtype %s" % (value, name))


def plan(whole, wanted, value):
    """(converter, dtype of the result): how TensorFlow converts a value whose summary is
    ``whole`` where ``wanted`` (a dtype) is asked for, or None for its own dtype. Raises its
    ValueError or TypeError (naming ``value``, this rank's block) as it would for the whole.
    None for the converter: every block is empty."""
    kind, errors, _ = whole
    if kind is None:
        return None, wanted if wanted is not None else np.dtype(np.float32)
    direct = _converter_of(wanted) if wanted is not None else None
    if direct == "uint64" and errors[_INDEX[direct]] == OUT_OF_RANGE:
        # Its converter leaves Python's OverflowError set where it stops on an integer
        # uint64 does not hold: TensorFlow fails (a SystemError) even where int64 would do.
        raise ValueError(OUT_OF_RANGE)
    if direct is not None and errors[_INDEX[direct]] is None:
        return direct, wanted
    def failed(converter):
        return errors[_INDEX[converter]]

    if kind == "float":
        converter = "float32" if wanted is None else "float64"
    elif kind == "int":  # an integer converter hands over to the next on a larger integer, or a float
        if wanted is None:
            converter = "int64" if failed("int32") == FOUND_INT64 else "int32"
            converter = "float32" if failed(converter) == FOUND_FLOAT else converter
        else:
            converter = "float64" if failed("int64") == FOUND_FLOAT else "int64"
    else:
        converter = kind
    if errors[_INDEX[converter]] is not None:
        raise ValueError(errors[_INDEX[converter]])
    made = _dtype_of(converter)
    if wanted is not None and made != wanted:
        if converter == "string" or wanted.kind in STRING_KINDS or not _compatible(wanted, made):
            raise cannot_convert(value, wanted)
    return converter, wanted if wanted is not None else made


def _flush_subnormals(x):
    """TensorFlow's casts run with subnormal results flushed to zero (sign kept)."""
    if x.dtype.kind == "c":
        parts = x.view(x.real.dtype)
        parts[...] = _flush_subnormals(parts)
        return x
    tiny = np.finfo(x.dtype).tiny
    with np.errstate(all="ignore"):
        x[np.abs(x) < tiny] *= 0
    return x


def convert(items, shape, converter, dtype):
    """This block (``items``, of ``shape``) converted by ``converter`` (from plan), then cast
    to ``dtype`` where the converter makes another."""
    if converter is None:
        return np.empty(shape, dtype)
    if converter == "string":  # as NumPy holds them: the op checks them
        return (np.asarray(items) if items else np.empty(0, dtype)).reshape(shape)
    made = _dtype_of(converter)
    if converter in ("float32", "float64", "float16"):
        out = _to_float(_doubles(items), made)
    elif converter == "uint64":
        out = np.array([int(x) for x in items], np.uint64)
    elif converter in ("int64", "int32"):
        out = _int64s(items).astype(made)  # plan() chose it: every one fits int64
    else:
        out = np.array(items, made)
    out = out.reshape(shape)
    if dtype == made:
        return out
    with np.errstate(all="ignore"):
        if dtype == np.float16:  # through float32, as TensorFlow's cast
            return _flush_subnormals(out.astype(np.float32)).astype(np.float16)
        cast = out.astype(dtype)
    return _flush_subnormals(cast) if cast.dtype.kind in "fc" else cast
