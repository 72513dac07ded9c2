"""tf.gather_nd's ``batch_dims`` as TensorFlow builds it (array_ops.batch_gather_nd): the
indices' leading ``batch_dims`` dimensions are flattened into one of the params' batch size,
each index vector gets its batch coordinates in front, and a plain GatherNd runs on the
whole params. Built the same way here, its errors name the same positions and values as
TensorFlow's. Pure NumPy; the module's gather_nd does the ranks' agreement around it."""

import numpy as _np


def check_batch_dims(batch_dims, indices_ndim, params_ndim):
    """TensorFlow's checks of ``batch_dims`` against the ranks of the tensors, in its order."""
    if batch_dims < 0:
        raise ValueError("tf.gather_nd does not allow negative batch_dims.")
    if batch_dims >= indices_ndim:
        raise ValueError("Argument `batch_dims` = %d must be less than rank(`indices`) = %d" % (batch_dims, indices_ndim))
    if batch_dims >= params_ndim:
        raise ValueError("Argument `batch_dims` = %d must be less than rank(`params`) = %d" % (batch_dims, params_ndim))


def _product(dims):
    return int(_np.prod(dims, dtype=_np.int64)) if len(dims) else 1


class BatchPlan:
    """What one rank does for a batched gather: its block of the flattened indices (rows
    ``flat_rows`` from ``flat_start`` of TensorFlow's [batch size, ..., C] reshape) and the
    output's batch shape. Made from every rank's (indices rows, params rows) so that every
    rank decides alike; ``error`` is the InvalidArgumentError message every rank raises."""

    def __init__(self, batch_dims, indices_shape, params_shape, rows, rank):
        """``indices_shape``/``params_shape``: this rank's blocks' shapes (the same beyond
        axis 0 on every rank); ``rows``: every rank's (indices rows, params rows)."""
        b = batch_dims
        self.batch_shape = (sum(p for _, p in rows),) + tuple(params_shape[1:b])
        batch_size = _product(self.batch_shape)
        inner = _product(indices_shape[b:])
        per_row = _product(indices_shape[1:b])
        values = sum(i for i, _ in rows) * _product(indices_shape[1:])
        self.error = None
        if values != batch_size * inner:
            self.error = "Input to reshape is a tensor with %d values, but the requested shape has %d" % (
                values, batch_size * inner)
        flat = [i * per_row for i, _ in rows]
        if len(rows) == 1:
            flat = [batch_size]  # one process: TensorFlow's reshape, zero-size indices too
        self.flat_start = sum(flat[:rank])
        self.flat_rows = flat[rank]
        row_size = _product(self.batch_shape[1:])
        if len(rows) == 1:
            self.out_rows = self.batch_shape[0]
        else:
            self.out_rows = self.flat_rows // row_size if row_size else rows[rank][0]
        # The output goes back to the batch shape block by block: each rank's flattened rows
        # must make whole rows of axis 0 (they do where the indices' batch dimensions are the
        # params').
        if self.error is None and row_size and any(f % row_size for f in flat):
            self.error = ("gather_nd with batch_dims = %d across ranks needs the indices' batch dimensions %s to be the "
                          "params' %s" % (b, list(indices_shape[1:b]), list(params_shape[1:b])))

    def indices(self, indices, batch_dims):
        """This rank's indices of TensorFlow's plain GatherNd: [flat rows, i1, ..., iK,
        batch_dims + C], the batch coordinates (in the indices' dtype) before each vector."""
        inner_shape = tuple(indices.shape[batch_dims:])
        flat = indices.reshape((self.flat_rows,) + inner_shape)
        with _np.errstate(all="ignore"):
            coords = _np.stack(_np.unravel_index(_np.arange(self.flat_start, self.flat_start + self.flat_rows),
                                                 self.batch_shape), axis=-1).astype(indices.dtype)
        grid = coords.reshape((self.flat_rows,) + (1,) * (len(inner_shape) - 1) + (batch_dims,))
        grid = _np.broadcast_to(grid, (self.flat_rows,) + inner_shape[:-1] + (batch_dims,))
        return _np.concatenate((grid, flat), axis=-1)

    def output(self, out):
        """This rank's block of GatherNd's output in the batch shape."""
        return out.reshape((self.out_rows,) + self.batch_shape[1:] + out.shape[1:])
