#!/usr/bin/env python3
"""The h5py side of the HDF5 tests (TestHdf5*.cpp): files made by h5py for shardops
to read, and checks that h5py reads what shardops wrote.

  TestHdf5Py.py make DIR
      writes DIR/h5py_types.h5 and DIR/manifest.txt, one line per readable dataset:
      "PATH DTYPE DIMS" (DIMS "7,3", "0,3", or "-" for a scalar), with the expected
      elements in little-endian byte order in DIR/expected/<PATH with / as _>.bin.
      Unsupported types live under /bad, their HDF5 type class in /bad/<name>.attrs["class"];
      /bad_shape/null has a null dataspace; /huge holds datasets too big to read.
  TestHdf5Py.py check FILE DIR VERSION
      checks that every dataset listed in DIR/manifest.txt (same format, written by
      shardops) reads in h5py with that numpy dtype, shape and bytes, and carries the
      provenance attributes as str: shardops_version == VERSION, op == "roundtrip",
      inputs == PATH, options == "dtype=DTYPE".
Exit status 0 when all is well; every failed check is printed.
"""
import os
import sys

import h5py
import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def values(dtype, shape):
    """Deterministic values that use every byte of the type (wrapping integers)."""
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        v = i % 3 == 0
    elif dt.kind in "iu":
        v = (i * np.int64(-7046029254386353131) + 12345).view(np.uint64).astype(dt.newbyteorder("="))
    elif dt.kind == "f":
        v = (i * 0.5 - 3.25).astype(dt.newbyteorder("="))
    else:
        v = (i * 0.5 - 1.0) + 1j * (-(i * 0.25) + 2.0)
        v = v.astype(dt.newbyteorder("="))
    v = v.reshape(shape)
    return v.astype(dt)


def bin_name(path):
    return path.strip("/").replace("/", "_") + ".bin"


def dims_text(shape):
    return ",".join(str(d) for d in shape) if len(shape) else "-"


def make(out):
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    manifest = []
    with h5py.File(os.path.join(out, "h5py_types.h5"), "w") as f:
        def add(path, arr, name):
            f.create_dataset(path, data=arr)
            le = np.asarray(arr).astype(np.dtype(name).newbyteorder("<"))
            with open(os.path.join(out, "expected", bin_name(path)), "wb") as b:
                b.write(le.tobytes())
            manifest.append("%s %s %s" % (path, name, dims_text(np.shape(arr))))

        for name in DTYPES:
            for order, prefix in (("<", "le"), (">", "be")):
                if name == "bool" and order == ">":
                    continue
                dt = np.dtype(name).newbyteorder(order)
                add("/%s/%s" % (prefix, name), values(dt, (7, 3)), name)
        add("/shapes/scalar_float64", np.float64(2.5), "float64")
        add("/shapes/scalar_bool", np.bool_(True), "bool")
        add("/shapes/scalar_complex64", np.complex64(1.5 - 2j), "complex64")
        add("/shapes/scalar_float16_be", np.array(-0.75, dtype=">f2")[()], "float16")
        add("/shapes/empty_int32", np.zeros((0, 3), dtype=np.int32), "int32")
        add("/shapes/empty_float32", np.zeros((0,), dtype=np.float32), "float32")
        add("/shapes/inner_empty_uint8", np.zeros((4, 0), dtype=np.uint8), "uint8")
        add("/shapes/vector_uint16", values(np.uint16, (11,)), "uint16")
        add("/shapes/cube_complex128_be", values(">c16", (5, 2, 2)), "complex128")
        add("/deep/a/b/c", values(np.int32, (5,)), "int32")
        f.create_group("/just_a_group")

        bad = {
            "vlen_str": (np.array(["a", "bb"], dtype=h5py.string_dtype()), "H5T_STRING"),
            "fixed_str": (np.array([b"abc", b"de"], dtype="S5"), "H5T_STRING"),
            "compound": (np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]), "H5T_COMPOUND"),
            "complex_other_names": (np.zeros(3, dtype=[("re", "<f4"), ("im", "<f4")]), "H5T_COMPOUND"),
            "enum": (np.zeros(3, dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype="i1")), "H5T_ENUM"),
            "longdouble": (np.zeros(3, dtype=np.longdouble), "H5T_FLOAT"),
            "opaque": (np.zeros(3, dtype="V4"), "H5T_OPAQUE"),
        }
        for name, (arr, cls) in bad.items():
            ds = f.create_dataset("/bad/" + name, data=arr)
            ds.attrs["class"] = cls
        # numpy folds a subarray dtype into the shape of an array; ask h5py for the type itself.
        ds = f.create_dataset("/bad/array", (3,), dtype=np.dtype("(2,)i4"))
        ds.attrs["class"] = "H5T_ARRAY"
        ds = f.create_dataset("/bad/vlen_int", (2,), dtype=h5py.vlen_dtype(np.int32))
        ds.attrs["class"] = "H5T_VLEN"
        ds = f.create_dataset("/bad/reference", (2,), dtype=h5py.ref_dtype)
        ds.attrs["class"] = "H5T_REFERENCE"
        f.create_dataset("/bad_shape/null", data=h5py.Empty("f4"))
        # Declared but never written (chunked: no storage): 16 TiB, and 2**64 elements.
        f.create_dataset("/huge/too_big", shape=(2**40, 16), dtype="i1", chunks=(64, 16))
        f.create_dataset("/huge/overflow", shape=(2**32, 2**32), dtype="i1", chunks=(64, 64))
    with open(os.path.join(out, "manifest.txt"), "w") as m:
        m.write("\n".join(manifest) + "\n")


def check(path, out, version):
    failures = []
    with h5py.File(path, "r") as f:
        with open(os.path.join(out, "manifest.txt")) as m:
            lines = [line.split() for line in m if line.strip()]
        for dpath, name, dims in lines:
            shape = () if dims == "-" else tuple(int(d) for d in dims.split(","))
            if dpath not in f:
                failures.append("%s: missing" % dpath)
                continue
            ds = f[dpath]
            if ds.dtype != np.dtype(name):
                failures.append("%s: h5py dtype %s, expected %s" % (dpath, ds.dtype, name))
            if ds.shape != shape:
                failures.append("%s: shape %s, expected %s" % (dpath, ds.shape, shape))
            data = ds[()]
            with open(os.path.join(out, "expected", bin_name(dpath)), "rb") as b:
                want = b.read()
            got = np.asarray(data).astype(np.dtype(name).newbyteorder("<")).tobytes()
            if got != want:
                failures.append("%s: values differ (%d vs %d bytes)" % (dpath, len(got), len(want)))
            expected_attrs = {"shardops_version": version, "op": "roundtrip", "inputs": dpath,
                              "options": "dtype=" + name}
            for key, value in expected_attrs.items():
                got_attr = ds.attrs.get(key)
                if not isinstance(got_attr, str) or got_attr != value:
                    failures.append("%s: attribute %s = %r, expected %r" % (dpath, key, got_attr, value))
    for failure in failures:
        print("h5py check: " + failure, file=sys.stderr)
    print("h5py check: %d datasets, %d failures" % (len(lines), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
