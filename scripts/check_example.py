#!/usr/bin/python3
"""Checks the example's outputs against NumPy and prints what was computed."""
import sys

import h5py
import numpy as np

inp, out, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(inp, "r") as fi, h5py.File(out, "r") as fo:
    data, ids = fi["data"][...], fi["partition"][...]
    idx, upd = fi["indices"][...], fi["updates"][...]
    for p in range(parts):
        assert np.array_equal(fo[f"parts/{p}"][...], data[ids == p]), f"partition {p} differs"
    assert np.array_equal(fo["restored"][...], data), "stitch did not restore the data"
    ref = np.zeros_like(data)
    np.add.at(ref, idx[:, 0], upd)  # sequential, in index order, like TensorFlow
    sums = fo["sums"][...]
    assert np.array_equal(sums, ref), "scatter-nd sums differ from numpy.add.at"
    assert np.array_equal(fo["gathered"][...], data[idx[:, 0]]), "gather-nd differs"
    counts = [fo[f"parts/{p}"].shape[0] for p in range(parts)]
    print(f"checked against NumPy: {parts} partitions of {data.shape[0]} rows (sizes {min(counts)}..{max(counts)}), "
          f"stitched back exactly; scatter-nd of {idx.shape[0]} updates and gather-nd bit-identical")
