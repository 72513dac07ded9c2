"""Random inputs for every op, shared by the NumPy and the TensorFlow comparisons.

A Case is one op invocation: the op, its input arrays (dataset name -> array), its
attributes (num_partitions, shape, bad-indices policy), how to spell it on the command
line, and the names of its outputs. npref.expected(case) / the TF worker compute what it
must produce.
"""

import numpy as np

import e2e_common
import npref

FLOAT_SPECIALS = [np.nan, -0.0, 0.0, np.inf, -np.inf]


class Case:
    def __init__(self, name, op, arrays, num_partitions=None, shape=None, bad_indices=None, specials=False,
                 extra=()):
        self.name = name
        self.op = op
        self.arrays = arrays  # dataset name (no leading '/') -> np.ndarray, in argument order
        self.num_partitions = num_partitions
        self.shape = shape
        self.bad_indices = bad_indices  # None (the default, error) or "ignore"
        self.specials = specials
        self.extra = list(extra)  # more command-line options
        self.vlen = False  # string arrays are object arrays of bytes, written as variable-length strings
        self.batch_dims = 0  # tf.gather_nd's (the Python module's; the command line has no such option)

    # Inputs in argument order, by role.
    def stitch_count(self):
        return sum(1 for k in self.arrays if k.startswith("i"))

    def argv(self, in_file, out_file, out_name="/out"):
        r = lambda name: "%s:/%s" % (in_file, name)
        a = [self.op]
        if self.op == "dynamic-partition":
            a += ["--data", r("data"), "--partitions", r("partitions"), "--num-partitions", str(self.num_partitions)]
        elif self.op in ("dynamic-stitch", "parallel-dynamic-stitch"):
            m = self.stitch_count()
            a += ["--indices"] + [r("i%d" % j) for j in range(m)] + ["--data"] + [r("d%d" % j) for j in range(m)]
        elif self.op == "scatter-nd":
            a += ["--indices", r("indices"), "--updates", r("updates"), "--shape", ",".join(map(str, self.shape))]
        elif self.op.startswith("tensor-scatter-"):
            a += ["--tensor", r("tensor"), "--indices", r("indices"), "--updates", r("updates")]
        elif self.op == "gather-nd":
            a += ["--params", r("params"), "--indices", r("indices")]
        else:
            raise ValueError(self.op)
        if self.batch_dims:
            raise ValueError("%s: the command line has no batch_dims" % self.name)
        a += ["--out", "%s:%s" % (out_file, out_name), "-q"]
        if self.bad_indices:
            a += ["--bad-indices", self.bad_indices]
        return a + self.extra

    def output_names(self, out_name="/out"):
        if self.op == "dynamic-partition":
            return ["%s/%d" % (out_name, p) for p in range(self.num_partitions)]
        return [out_name]

    def expected(self):
        """The outputs, computed by the NumPy reference."""
        a = self.arrays
        ignore = self.bad_indices == "ignore"
        if self.op == "dynamic-partition":
            return npref.dynamic_partition(a["data"], a["partitions"], self.num_partitions)
        if self.op in ("dynamic-stitch", "parallel-dynamic-stitch"):
            m = self.stitch_count()
            return [npref.dynamic_stitch([a["i%d" % j] for j in range(m)], [a["d%d" % j] for j in range(m)])]
        if self.op == "scatter-nd":
            return [npref.scatter_nd(a["indices"], a["updates"], self.shape, ignore)]
        if self.op.startswith("tensor-scatter-"):
            kind = self.op[len("tensor-scatter-"):]
            return [npref.tensor_scatter(kind, a["tensor"], a["indices"], a["updates"], ignore)]
        if self.op == "gather-nd":
            return [npref.gather_nd(a["params"], a["indices"], ignore)]
        raise ValueError(self.op)


STRING_PIECES = [b"a", b"bc", b"xyz", "\u00f6".encode(), "\u65e5".encode(), b"\x00", b" ", b"\xff"]


def strings(rng, shape):
    """Fixed-length byte strings (numpy S) of mixed lengths: empty, short, with NULs and
    non-ASCII bytes inside (never at the end: numpy strips trailing NULs), a few long."""
    out = []
    for _ in range(int(np.prod(shape, dtype=np.int64))):
        k = int(rng.integers(0, 12))
        if k == 0:
            out.append(b"")
        elif k == 1:
            out.append(b"long" * int(rng.integers(50, 200)))
        else:
            s = b"".join(STRING_PIECES[int(i)] for i in rng.integers(0, len(STRING_PIECES), int(rng.integers(1, 5))))
            out.append(s + b"." if s.endswith(b"\x00") else s)
    width = max([len(s) for s in out] + [1])
    return np.array(out, dtype="S%d" % width).reshape(shape)


def values(rng, dtype, shape, specials=False):
    """Random values of dtype; specials puts NaN (with a payload), +-0, +-inf in float parts.
    dtype "S": byte strings (strings())."""
    if dtype == "S":
        return strings(rng, tuple(shape))
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if rng.random() < 0.5:  # full range (sums wrap) or small values (many equal values: ties for min/max)
            return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        return rng.integers(max(info.min, -5), 6, size=shape).astype(dtype)
    if dtype.kind == "f":
        x = (rng.standard_normal(shape) * 8).astype(dtype)
        if specials and x.size:
            _sprinkle(rng, x)
        return x
    if dtype.kind == "c":
        part = np.float32 if dtype == np.complex64 else np.float64
        re = (rng.standard_normal(shape) * 8).astype(part)
        im = (rng.standard_normal(shape) * 8).astype(part)
        if specials and re.size:
            _sprinkle(rng, re)
        out = np.empty(shape, dtype)
        out.real, out.imag = re, im
        return out
    raise ValueError(dtype)


def _sprinkle(rng, x):
    flat = x.reshape(-1)
    n = max(1, flat.size // 10)
    pos = rng.integers(0, flat.size, n)
    flat[pos] = rng.choice(FLOAT_SPECIALS, n).astype(x.dtype)
    # One NaN with a payload and the sign bit set: copies must keep its bits.
    bits = {2: np.uint16(0xFE01), 4: np.uint32(0xFFC00123), 8: np.uint64(0xFFF8000000000123)}[x.dtype.itemsize]
    flat[int(rng.integers(0, flat.size))] = np.array([bits]).view(x.dtype)[0]


def _batch_shape(rng, n):
    """A random batch shape with n elements in all: (n,), or (a, b) with a*b = n when n factors."""
    if n > 3 and rng.random() < 0.35:
        for a in (2, 3, 4, 5):
            if n % a == 0:
                return (a, n // a)
    return (n,)


def _inner(rng, dims=None):
    dims = [(), (3,), (2, 2), (1,), (4,)] if dims is None else dims
    return tuple(dims[int(rng.integers(0, len(dims)))])


def _indices(rng, batch, prefix, itype, bad=None):
    """Index rows (batch..., K) into prefix, with duplicates."""
    k = len(prefix)
    idx = np.empty(tuple(batch) + (k,), np.int64)
    for d in range(k):
        idx[..., d] = rng.integers(0, max(prefix[d], 1), size=batch) if prefix[d] > 0 else 0
    return idx.astype(itype)


def partition_case(name, rng, dtype, rows=None, specials=None):
    rows = int(rng.integers(0, 60)) if rows is None else rows
    nparts = int(rng.integers(1, 6))
    inner = _inner(rng)
    batch = _batch_shape(rng, rows)
    data = values(rng, dtype, batch + inner, specials=True if specials is None else specials)
    parts = rng.integers(0, nparts, size=batch).astype(np.int32)
    return Case(name, "dynamic-partition", {"data": data, "partitions": parts}, num_partitions=nparts)


def stitch_case(name, rng, dtype, op="dynamic-stitch", rows=None, inputs=None, specials=None, disjoint=False):
    """disjoint: no index repeats across inputs (ParallelDynamicStitch leaves that order undefined in TF)."""
    m = int(rng.integers(1, 4)) if inputs is None else inputs
    total = int(rng.integers(1, 60)) if rows is None else rows
    inner = _inner(rng)
    out_rows = max(1, int(total * rng.uniform(0.6, 1.3)))  # fewer: duplicates; more: rows nobody names
    arrays = {}
    cuts = np.sort(rng.integers(0, total + 1, m - 1))
    sizes = np.diff(np.r_[0, cuts, total]).astype(int)
    for j, sz in enumerate(sizes):
        shape = () if sz == 1 and rng.random() < 0.5 else _batch_shape(rng, int(sz))
        if disjoint:
            arrays["i%d" % j] = (rng.integers(0, -(-out_rows // m), size=shape) * m + j).astype(np.int32)
        else:
            arrays["i%d" % j] = rng.integers(0, out_rows, size=shape).astype(np.int32)
    for j in range(m):
        arrays["d%d" % j] = values(rng, dtype, arrays["i%d" % j].shape + inner,
                                   specials=True if specials is None else specials)
    return Case(name, op, arrays)


def scatter_nd_case(name, rng, dtype, itype, rows=None, out_rows=None):
    n = int(rng.integers(0, 80)) if rows is None else rows
    k = int(rng.integers(1, 3))
    inner = _inner(rng, [(), (3,), (2, 2)])
    prefix = tuple(int(rng.integers(1, 12)) for _ in range(k)) if out_rows is None else (out_rows,)
    shape = prefix + inner
    batch = _batch_shape(rng, n)
    idx = _indices(rng, batch, prefix, itype)
    upd = values(rng, dtype, batch + inner)
    return Case(name, "scatter-nd", {"indices": idx, "updates": upd}, shape=shape)


def tensor_scatter_case(name, rng, op, dtype, itype, rows=None, tensor_rows=None):
    n = int(rng.integers(0, 80)) if rows is None else rows
    rank_extra = _inner(rng, [(), (3,), (2, 2)])
    lead = int(rng.integers(1, 15)) if tensor_rows is None else tensor_rows
    tshape = (lead,) + rank_extra
    k = int(rng.integers(1, len(tshape) + 1)) if tensor_rows is None else 1
    prefix, inner = tshape[:k], tshape[k:]
    batch = _batch_shape(rng, n)
    idx = _indices(rng, batch, prefix, itype)
    specials = op in ("tensor-scatter-update", "tensor-scatter-min", "tensor-scatter-max")
    tensor = values(rng, dtype, tshape, specials=specials)
    upd = values(rng, dtype, batch + inner, specials=specials)
    return Case(name, op, {"tensor": tensor, "indices": idx, "updates": upd})


def gather_nd_case(name, rng, dtype, itype, rows=None, params_rows=None):
    n = int(rng.integers(0, 80)) if rows is None else rows
    lead = int(rng.integers(1, 15)) if params_rows is None else params_rows
    pshape = (lead,) + _inner(rng, [(), (3,), (2, 2)])
    # Index depth 1..rank here; depth 0 (every row copies all of params) has its own cases.
    k = int(rng.integers(1, len(pshape) + 1)) if params_rows is None else 1
    batch = _batch_shape(rng, n)
    idx = _indices(rng, batch, pshape[:k], itype)
    params = values(rng, dtype, pshape, specials=True)
    return Case(name, "gather-nd", {"params": params, "indices": idx})


def random_case(name, rng, op, dtype, itype="int32"):
    """A small random case of op (any dtype); itype is used by the scatter/gather family."""
    if op == "dynamic-partition":
        return partition_case(name, rng, dtype)
    if op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        return stitch_case(name, rng, dtype, op=op)
    if op == "scatter-nd":
        return scatter_nd_case(name, rng, dtype, itype)
    if op.startswith("tensor-scatter-"):
        return tensor_scatter_case(name, rng, op, dtype, itype)
    if op == "gather-nd":
        return gather_nd_case(name, rng, dtype, itype)
    raise ValueError(op)


def supported(op, dtype):
    """Whether op has a kernel for dtype (TensorFlow's CPU table, kept in the op registry;
    docs/tf-fidelity.md): e.g. no TensorScatterAdd/Sub/Min/Max for bool, no Min/Max for complex."""
    return e2e_common.has_kernel(op, dtype)
