#!/usr/bin/python3
"""Checks the outputs of inputs/pipeline.yaml against NumPy and prints what was computed.

Usage: check_pipeline.py OUT.h5 [PARTS]
"""
import sys

import h5py
import numpy as np

path = sys.argv[1]
parts = int(sys.argv[2]) if len(sys.argv) > 2 else 16
with h5py.File(path, "r") as f:
    data, ids, restored = f["data"][...], f["ids"][...], f["restored"][...]
    idx, upd = f["idx"][...][:, 0], f["upd"][...]
    sums, added, updated, gathered = f["sums"][...], f["added"][...], f["updated"][...], f["gathered"][...]

assert ids.min() >= 0 and ids.max() < parts, "partition ids out of range"
assert np.array_equal(restored, data), "partition -> stitch did not restore the data"
ref = np.zeros_like(data)
np.add.at(ref, idx, upd)  # unbuffered: sums each row's updates in index order, like TensorFlow
assert np.array_equal(sums, ref), "scatter_nd differs from numpy.add.at"
ref_added = data.copy()
np.add.at(ref_added, idx, upd)
assert np.array_equal(added, ref_added), "tensor_scatter_add differs"
ref_updated = data.copy()
ref_updated[idx] = upd  # NumPy assigns in order: the last duplicate wins
assert np.array_equal(updated, ref_updated), "tensor_scatter_update differs"
assert np.array_equal(gathered, sums[idx]), "gather_nd differs"
dups = idx.size - np.unique(idx).size
print(f"pipeline checked against NumPy: {data.shape[0]} rows x {data.shape[1]} float32 partitioned into {parts} "
      f"and stitched back exactly; {idx.size} scatter/gather rows ({dups} duplicate targets) summed, added, "
      f"replaced and gathered bit-identically")
