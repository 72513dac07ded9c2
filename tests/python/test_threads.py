"""Calls from several Python threads at once (the GIL is released during each): ops and
HDF5 reads and writes on whole tensors, each thread checking its own answers. Parallel
HDF5 is not thread-safe and Kokkos' execution spaces take one caller at a time: the
module lets the calls take turns, so nothing crashes and every answer is right.
Every rank runs its own threads on its own files (comm=None)."""

import os
import threading

import numpy as np

import shardops
from conftest import WORLD

THREADS = 4


def run_threads(work):
    """work(k) in THREADS threads; the exceptions they raised, as text."""
    failures = []

    def guarded(k):
        try:
            work(k)
        except Exception as e:  # noqa: B902 - every failure is reported below
            failures.append("thread %d: %s: %s" % (k, type(e).__name__, e))

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_ops_from_several_threads():
    rng = np.random.default_rng(5)
    n, m = 1 << 14, 1 << 15
    params = rng.random((n, 8)).astype(np.float32)
    idx = rng.integers(0, n, (m, 1)).astype(np.int64)
    upd = rng.integers(-4, 5, (m, 8)).astype(np.float32)  # small integers: sums exact in any order
    parts = rng.integers(0, 5, n).astype(np.int32)
    gathered = params[idx[:, 0]]
    summed = np.zeros((n, 8), np.float32)
    np.add.at(summed, idx[:, 0], upd)
    pieces = [params[parts == p] for p in range(5)]
    words = np.array([b"w%d" % i for i in range(n)], dtype=object)

    def work(k):
        for _ in range(12):
            assert np.array_equal(shardops.gather_nd(params, idx), gathered), "gather_nd"
            assert np.array_equal(shardops.scatter_nd(idx, upd, (n, 8)), summed), "scatter_nd"
            got = shardops.dynamic_partition(params, parts, 5)
            assert all(np.array_equal(a, b) for a, b in zip(got, pieces)), "dynamic_partition"
            assert list(shardops.gather_nd(words, idx[:64])) == list(words[idx[:64, 0]]), "strings"

    assert run_threads(work) == []


def test_io_from_several_threads(shared_dir):
    d = os.path.join(shared_dir, "threads-rank%d" % WORLD.Get_rank())
    os.makedirs(d, exist_ok=True)
    a = np.arange(200000 * 8, dtype=np.float32).reshape(-1, 8)
    src = os.path.join(d, "src.h5")
    shardops.write({src + ":/a": a})

    def work(k):
        for j in range(20):  # without the turns, two threads in HDF5 at once crash within a few
            b = shardops.read(src + ":/a")
            assert np.array_equal(a, b), "read"
            out = os.path.join(d, "out%d_%d.h5" % (k, j))
            shardops.write({out + ":/x": b[::-1], out + ":/y": b[:10]})
            assert np.array_equal(shardops.read(out + ":/x"), a[::-1]), "write, read back"

    assert run_threads(work) == []
    left = sorted(f for f in os.listdir(d) if not f.endswith(".h5"))
    assert left == [], left  # no temporary file left behind


def test_sizing_inputs_changed_by_another_thread():
    # The values that decide the outputs' sizes (partition ids, DynamicStitch's indices) are
    # copied before the op runs without the GIL: another thread rewriting them during the call
    # (a race in the caller's program) gives some answer, never a write outside the op's
    # outputs. They were used in place before, and the process died with SIGSEGV.
    n = 1 << 18
    data = np.ones((n, 4), np.float32)
    ids = np.zeros(n, np.int32)  # always valid partition ids: 0 or 1
    idx = np.zeros(n, np.int32)  # always valid stitch indices: the output has 1 or n rows
    stop = threading.Event()

    def rewrite():
        while not stop.is_set():
            ids[::3] = 1
            idx[-1] = n - 1
            ids[::3] = 0
            idx[-1] = 0

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        for _ in range(60):
            parts = shardops.dynamic_partition(data, ids, 2)
            assert sum(len(p) for p in parts) == n
            merged = shardops.dynamic_stitch([idx], [data])
            assert merged.shape in ((1, 4), (n, 4))
    finally:
        stop.set()
        writer.join()
