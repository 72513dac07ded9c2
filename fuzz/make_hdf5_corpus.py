#!/usr/bin/python3
"""Writes the seed corpus of the HDF5 fuzz target (fuzz/FuzzHdf5Open.cpp) into DIR: small
files made with h5py, one per kind of dataset shardops reads (every dtype, scalars, empty
and chunked datasets, compression and shuffle, strings, groups, attributes)."""

import os
import sys

import h5py
import numpy as np


def main(out):
    os.makedirs(out, exist_ok=True)
    kinds = {
        "f32": np.arange(6, dtype=np.float32).reshape(3, 2),
        "f16": np.arange(4, dtype=np.float16),
        "f64_be": np.arange(4, dtype=">f8"),
        "i8": np.arange(-3, 3, dtype=np.int8),
        "u64": np.arange(4, dtype=np.uint64).reshape(2, 2, 1),
        "bool": np.array([True, False, True]),
        "c64": np.arange(3, dtype=np.complex64),
        "c128": np.arange(2, dtype=np.complex128),
        "scalar": np.float64(2.5),
        "empty": np.zeros((0, 3), np.int32),
    }
    for name, arr in kinds.items():
        with h5py.File(os.path.join(out, name + ".h5"), "w") as f:
            f.create_dataset("x", data=arr)
    with h5py.File(os.path.join(out, "chunked_gzip.h5"), "w") as f:
        f.create_dataset("x", data=np.arange(64, dtype=np.int32).reshape(16, 4), chunks=(4, 4),
                         compression="gzip", shuffle=True, fletcher32=True)
    with h5py.File(os.path.join(out, "strings.h5"), "w") as f:
        f.create_dataset("vlen", data=np.array(["a", "bc", ""], dtype=h5py.string_dtype()))
        f.create_dataset("fixed", data=np.array([b"ab", b"c"], dtype="S3"))
    with h5py.File(os.path.join(out, "groups.h5"), "w") as f:
        f.create_dataset("g/h/x", data=np.arange(3, dtype=np.int64))
        f["g"].attrs["note"] = "a group"
        f["link"] = h5py.SoftLink("/g/h/x")
    with h5py.File(os.path.join(out, "compound.h5"), "w") as f:
        f.create_dataset("x", data=np.zeros(2, dtype=[("a", "i4"), ("b", "f8")]))


if __name__ == "__main__":
    main(sys.argv[1])
