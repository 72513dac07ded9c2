"""A NumPy reference for the ops, with TensorFlow's CPU semantics (docs/cli.md, docs/tf-fidelity.md).

Order matters for duplicates (last update wins, sums accumulate in index order, float16
adds in float32 then rounds per step as Eigen's half does), so the scatter family is
applied in "rounds": round k applies the k-th occurrence of every target row, so every
round touches distinct rows (vectorised) and every row sees its updates in index order,
exactly as the sequential loop would.
"""

import numpy as np


def _f16_step(fn):
    def combine(o, u):
        return fn(o.astype(np.float32), u.astype(np.float32)).astype(np.float16)
    return combine


def combiner(op, dtype):
    """out_rows, update_rows -> new out_rows for one round (targets distinct)."""
    dtype = np.dtype(dtype)
    if op == "update":
        return lambda o, u: u
    if op in ("add", "sub"):
        if dtype == np.bool_:
            return (lambda o, u: o | u) if op == "add" else (lambda o, u: o ^ u)  # int arithmetic, back to bool
        fn = np.add if op == "add" else np.subtract
        if dtype == np.float16:
            return _f16_step(fn)
        return lambda o, u: fn(o, u)  # integers wrap, as TF's kernels do
    if op == "min":  # Eigen's scalar_min_op: std::min keeps the output unless the update is smaller
        return lambda o, u: np.where(u < o, u, o)
    if op == "max":
        return lambda o, u: np.where(o < u, u, o)
    raise ValueError(op)


def occurrence_rank(targets):
    """For each position, how many earlier positions have the same target."""
    n = targets.size
    if n == 0:
        return np.zeros(0, np.int64)
    order = np.argsort(targets, kind="stable")
    s = targets[order]
    new = np.ones(n, bool)
    new[1:] = s[1:] != s[:-1]
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n) - starts[group]
    return rank


def apply_in_order(out2d, targets, rows2d, combine):
    """out2d[targets[i]] = combine(out2d[targets[i]], rows2d[i]) for i in order."""
    if targets.size == 0:
        return
    rank = occurrence_rank(targets)
    order = np.argsort(rank, kind="stable")
    r = rank[order]
    bounds = np.flatnonzero(np.r_[True, r[1:] != r[:-1], True])
    for a, b in zip(bounds[:-1], bounds[1:]):
        sel = order[a:b]
        t = targets[sel]
        out2d[t] = combine(out2d[t], rows2d[sel])


def linear_index(indices, prefix_shape):
    """Row numbers of index rows (..., K) into prefix_shape (len K), and which are in range."""
    k = indices.shape[-1]
    idx = indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), k).astype(np.int64)
    ok = np.ones(idx.shape[0], bool)
    lin = np.zeros(idx.shape[0], np.int64)
    stride = 1
    for d in range(k - 1, -1, -1):
        ok &= (idx[:, d] >= 0) & (idx[:, d] < prefix_shape[d])
        lin += idx[:, d] * stride
        stride *= int(prefix_shape[d])
    return lin, ok


def dynamic_partition(data, partitions, num_partitions):
    p = np.asarray(partitions).reshape(-1)
    rows = np.asarray(data).reshape((p.size,) + data.shape[np.ndim(partitions):])
    return [rows[p == i] for i in range(num_partitions)]


def dynamic_stitch(indices, data):
    inner = data[0].shape[np.ndim(indices[0]):]
    flat = np.concatenate([np.asarray(i, np.int64).reshape(-1) for i in indices])
    rows = np.concatenate([np.asarray(d).reshape((np.size(i),) + inner) for i, d in zip(indices, data)])
    n = int(flat.max()) + 1 if flat.size else 0
    out = np.zeros((n,) + inner, dtype=data[0].dtype)
    apply_in_order(out, flat, rows, combiner("update", out.dtype))
    return out


def scatter_nd(indices, updates, shape, ignore_bad=False):
    shape = tuple(int(s) for s in shape)
    k = indices.shape[-1]
    out = np.zeros(shape, dtype=updates.dtype)
    out2d = out.reshape((int(np.prod(shape[:k], dtype=np.int64)),) + shape[k:])
    lin, ok = linear_index(indices, shape[:k])
    if not ignore_bad:
        assert ok.all(), "reference: bad index"
    rows = updates.reshape((lin.size,) + shape[k:])
    apply_in_order(out2d, lin[ok], rows[ok], combiner("add", updates.dtype))
    return out


def tensor_scatter(op, tensor, indices, updates, ignore_bad=False):
    out = np.array(tensor, copy=True)
    k = indices.shape[-1]
    out2d = out.reshape((int(np.prod(out.shape[:k], dtype=np.int64)),) + out.shape[k:])
    lin, ok = linear_index(indices, out.shape[:k])
    if not ignore_bad:
        assert ok.all(), "reference: bad index"
    rows = updates.reshape((lin.size,) + out.shape[k:])
    apply_in_order(out2d, lin[ok], rows[ok], combiner(op, out.dtype))
    return out


def gather_nd(params, indices, ignore_bad=False):
    k = indices.shape[-1]
    p2d = params.reshape((int(np.prod(params.shape[:k], dtype=np.int64)),) + params.shape[k:])
    lin, ok = linear_index(indices, params.shape[:k])
    if not ignore_bad:
        assert ok.all(), "reference: bad index"
    out = np.zeros((lin.size,) + params.shape[k:], dtype=params.dtype)
    out[ok] = p2d[lin[ok]]
    return out.reshape(indices.shape[:-1] + params.shape[k:])
