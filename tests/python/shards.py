"""Splitting whole test tensors into ragged row blocks, calling shardops on them, and the
block of a whole expected output that a rank must get back (the layouts of
docs/python.md: DynamicPartition's outputs where their rows were, DynamicStitch and
ScatterNd balanced, TensorScatter* in the layout of tensor, GatherNd in that of indices)."""

import os
import subprocess
import sys
import textwrap
import zlib

import numpy as np

import shardops
from e2e_common import op_info
from gen import Case


def ragged_counts(rows, size, key):
    """Row counts per rank summing to rows, uneven and with empty blocks, fixed by key."""
    rng = np.random.default_rng(zlib.crc32(key.encode()) + size)
    cuts = np.sort(rng.integers(0, rows + 1, size - 1))
    return np.diff(np.r_[0, cuts, rows]).astype(int).tolist()


def block(array, counts, rank):
    """Rank's block of array (a 0-d array is passed whole: shardops takes rank 0's)."""
    if array.ndim == 0:
        return array
    start = sum(counts[:rank])
    return array[start:start + counts[rank]]


class Split:
    """One case's inputs split over comm: counts[name] per input (None without comm)."""

    def __init__(self, case, comm):
        self.case, self.comm = case, comm
        size = 1 if comm is None else comm.Get_size()
        self.counts = {k: ragged_counts(v.shape[0] if v.ndim else 1, size, case.name + k)
                       for k, v in case.arrays.items()}

    def mine(self, key):
        a = self.case.arrays[key]
        return a if self.comm is None else block(a, self.counts[key], self.comm.Get_rank())

    def run(self):
        """The op on this rank's blocks: its outputs as a list."""
        c, m, comm = self.case, self.mine, self.comm
        bad = c.bad_indices or "error"
        if c.op == "dynamic-partition":
            return shardops.dynamic_partition(m("data"), m("partitions"), c.num_partitions, comm=comm)
        fn = getattr(shardops, op_info(c.op)["python"])  # the registry's Python name of the op
        if c.op in ("dynamic-stitch", "parallel-dynamic-stitch"):
            n = c.stitch_count()
            return [fn([m("i%d" % j) for j in range(n)], [m("d%d" % j) for j in range(n)], comm=comm)]
        if c.op == "scatter-nd":
            return [shardops.scatter_nd(m("indices"), m("updates"), c.shape, comm=comm, bad_indices=bad)]
        if c.op.startswith("tensor-scatter-"):
            return [fn(m("tensor"), m("indices"), m("updates"), comm=comm, bad_indices=bad)]
        if c.op == "gather-nd":
            return [shardops.gather_nd(m("params"), m("indices"), comm=comm, bad_indices=bad, batch_dims=c.batch_dims)]
        raise ValueError(c.op)

    def expected_block(self, k, full):
        """This rank's block of whole output k."""
        if self.comm is None:
            return full
        rank, c = self.comm.Get_rank(), self.case
        if c.op == "dynamic-partition":
            parts = c.arrays["partitions"]
            per_row = int(np.prod(parts.shape[1:], dtype=np.int64))
            start = sum(self.counts["partitions"][:rank]) * per_row
            stop = start + self.counts["partitions"][rank] * per_row
            flat = parts.reshape(-1)
            before = int(np.count_nonzero(flat[:start] == k))
            return full[before:before + int(np.count_nonzero(flat[start:stop] == k))]
        if c.op.startswith("tensor-scatter-"):
            return block(full, self.counts["tensor"], rank)
        if c.op == "gather-nd":
            return block(full, self.counts["indices"], rank)
        start, stop = shardops.row_block(full.shape[0] if full.ndim else 1, self.comm)
        return full if full.ndim == 0 and rank == 0 else full[start:stop]


def outcomes(calls, caught=shardops.Error):
    """Each call's exception of class ``caught``, or None where it returned."""
    errors = []
    for call in calls:
        try:
            call()
            errors.append(None)
        except caught as e:
            errors.append(e)
    return errors


def distributable(case):
    """Whether the case's outputs follow the row-layout rules above: index tensors with a
    row axis (a one-row index tensor or a 0-d stitch index maps the whole output to a rank)."""
    a = case.arrays
    if case.op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        return all(a["i%d" % j].ndim >= 1 for j in range(case.stitch_count()))
    if case.op == "dynamic-partition":
        return a["partitions"].ndim >= 1
    if case.batch_dims:  # batch dimensions other than the params' work on one process only
        b = case.batch_dims
        return a["indices"].shape[1:b] == a["params"].shape[1:b]
    return a["indices"].ndim >= 2


def same(actual, expected, strip_nul=False):
    """dtype, shape and bytes equal; strings (object arrays of bytes) by value."""
    expected = np.asarray(expected)
    if expected.dtype.kind in "SO":
        assert actual.dtype == object, "strings came back as %s" % actual.dtype
        got = [v.rstrip(b"\0") if strip_nul else v for v in actual.reshape(-1).tolist()]
        want = [bytes(v) for v in expected.reshape(-1).tolist()]
        assert actual.shape == expected.shape and got == want, (actual.shape, expected.shape, got[:5], want[:5])
        return
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes(), (actual, expected)


def batch_dims_cases():
    """tf.gather_nd with batch_dims (TensorFlow builds it from a GatherNd; the command line has
    none): batches of slices and of elements, two batch dimensions, index depth 0, string
    params, empty batches, int16 indices, an index out of range (TensorFlow's message names
    the position and the vector with its batch coordinates) under both policies, indices
    whose batch does not hold the params' ("Input to reshape ..."), and indices whose batch
    dimensions differ from the params' but hold as many (one process only)."""
    rng = np.random.default_rng(7)

    def ints(high, shape, dtype=np.int32):
        return rng.integers(0, high, shape).astype(dtype)

    def case(name, params, indices, batch_dims, bad_indices=None):
        c = Case("batch_dims_" + name, "gather-nd", {"params": params, "indices": indices}, bad_indices=bad_indices)
        c.batch_dims = batch_dims
        return c

    wide = rng.standard_normal((9, 3, 4)).astype(np.float32)
    out_of_range = ints(3, (9, 2, 1))
    out_of_range[6, 1, 0] = 3
    words = np.array([[b"a", b"bc"], [b"xyz", b""], [b"\xff", b" "]])
    return [
        case("slices", wide, ints(3, (9, 2, 1)), 1),
        case("elements", ints(100, (7, 3), np.int64), ints(3, (7, 5, 1), np.int64), 1),
        case("two", rng.standard_normal((4, 2, 3, 2)), ints(2, (4, 2, 6, 2), np.int64), 2),
        case("no_inner_dims", wide, ints(3, (9, 1)), 1),
        case("depth_0", wide, np.zeros((9, 2, 0), np.int32), 1),
        case("strings", words, ints(2, (3, 4, 1)), 1),
        case("empty_batch", np.zeros((0, 3), np.float32), np.zeros((0, 2, 1), np.int32), 1),
        case("int16", ints(50, (6, 5), np.uint8), ints(5, (6, 3, 1), np.int16), 1),
        case("out_of_range", wide, out_of_range, 1),
        case("out_of_range_ignored", wide, out_of_range, 1, bad_indices="ignore"),
        case("too_few_rows", wide, ints(3, (8, 2, 1)), 1),
        case("other_batch_shape", rng.standard_normal((2, 3, 4)), ints(4, (3, 2, 1)), 2),
    ]


def own_mpi_env(**more):
    """This process's environment without its launcher's settings: a child is an MPI program of its own."""
    keep = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_pml", "OMPI_MCA_btl")
    env = {k: v for k, v in os.environ.items() if k in keep or not k.startswith(("OMPI_", "PMIX_", "OPAL_", "PMI_"))}
    env.update(more)
    return env


def run_python(script):
    """Runs ``script`` in a fresh Python process (not under mpiexec: a singleton MPI)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env=own_mpi_env(), timeout=120)
