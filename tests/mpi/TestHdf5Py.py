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
  TestHdf5Py.py make-strings DIR
      writes DIR/h5py_strings.h5: string datasets as h5py writes them (string_dtype()
      variable-length UTF-8 and ASCII, S<n>, fixed UTF-8, scalars, 0-size, 2-D) and,
      through h5py's low-level API, fixed-length NULLTERM and SPACEPAD ones. One line per
      dataset in DIR/strings_manifest.txt: "PATH KIND WIDTH CSET DIMS" (KIND vlen or
      fixed, WIDTH 0 for vlen, CSET utf8 or ascii), the values h5py reads in
      DIR/expected/<PATH with / as _>.strs (per element: length as little-endian uint64,
      then the bytes). /huge/vlen is declared but too big to read.
  TestHdf5Py.py check-strings FILE DIR VERSION
      checks that every dataset in DIR/strings_manifest.txt (same formats, written by
      shardops) reads in h5py with that string type (h5py.check_string_dtype: encoding,
      and length None for vlen or WIDTH for fixed; fixed ones NULPAD), shape and values,
      UTF-8 ones also as str, with the provenance attributes of "check".
Exit status 0 when all is well; every failed check is printed.
"""
import struct
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
            # Strings inside other types stay unsupported.
            "compound_with_str": (np.array([(1, "a"), (2, "bc")],
                                           dtype=[("n", "<i4"), ("s", h5py.string_dtype())]), "H5T_COMPOUND"),
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
        ds = f.create_dataset("/bad/str_array", (3,), dtype=np.dtype("(2,)S4"))
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


LONG = "".join(chr(0x20 + (i * 7919) % 95) for i in range(70000))  # > 64 KiB
MIXED = ["", "a", "größe", "日本語", "emoji 🙂👍🏽", LONG, "tab\tnew\nline", "x" * 300, "ok"]


def write_strs(path, values):
    with open(path, "wb") as b:
        for v in values:
            b.write(struct.pack("<Q", len(v)))
            b.write(v)


def flat_bytes(data):
    """h5py's values of a string dataset as a flat list of bytes."""
    arr = np.asarray(data, dtype=object if np.asarray(data).dtype.kind == "O" else None)
    out = []
    for v in arr.reshape(-1).tolist():
        out.append(v.encode("utf-8") if isinstance(v, str) else bytes(v))
    return out


def make_strings(out):
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    manifest = []
    with h5py.File(os.path.join(out, "h5py_strings.h5"), "w") as f:
        def add(path, ds):
            tid = ds.id.get_type()
            kind = "vlen" if tid.is_variable_str() else "fixed"
            width = 0 if kind == "vlen" else tid.get_size()
            cset = "utf8" if tid.get_cset() == h5py.h5t.CSET_UTF8 else "ascii"
            write_strs(os.path.join(out, "expected", bin_name(path)[:-4] + ".strs"), flat_bytes(ds[()]))
            manifest.append("%s %s %d %s %s" % (path, kind, width, cset, dims_text(ds.shape)))

        utf8 = h5py.string_dtype()
        add("/vlen_utf8", f.create_dataset("/vlen_utf8", data=np.array(MIXED, dtype=utf8)))
        ascii_values = [b"", b"plain", b"ascii only", LONG.encode(), b"z"]
        add("/vlen_ascii", f.create_dataset("/vlen_ascii", data=np.array(ascii_values,
                                                                        dtype=h5py.string_dtype("ascii"))))
        fixed = np.array([b"abc", b"a\0b", b"", b"abcde", b"\0lead", b"ab\0\0", b"\0\0\0\0\0", b"x"], dtype="S5")
        add("/fixed", f.create_dataset("/fixed", data=fixed))
        add("/fixed_utf8", f.create_dataset("/fixed_utf8", data=np.array(
            ["größe".encode(), "日本".encode(), b""], dtype=h5py.string_dtype("utf-8", 12))))
        add("/fixed_long", f.create_dataset("/fixed_long", data=np.array([LONG.encode(), b"short"], dtype="S70000")))
        for pad, name in ((h5py.h5t.STR_NULLTERM, "nullterm"), (h5py.h5t.STR_SPACEPAD, "spacepad")):
            t = h5py.h5t.C_S1.copy()
            t.set_size(5)
            t.set_strpad(pad)
            raw = np.array([b"abcde", b"a\0b", b"ab  ", b" x y ", b""], dtype="S5")
            dsid = h5py.h5d.create(f.id, ("/" + name).encode(), t, h5py.h5s.create_simple(raw.shape))
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=t)
            add("/" + name, f["/" + name])
        add("/scalar_vlen", f.create_dataset("/scalar_vlen", data="日本語 scalar", dtype=utf8))
        add("/scalar_fixed", f.create_dataset("/scalar_fixed", data=np.bytes_(b"sc\0alar")))
        add("/empty_vlen", f.create_dataset("/empty_vlen", shape=(0,), dtype=utf8))
        add("/empty_fixed", f.create_dataset("/empty_fixed", shape=(0, 3), dtype="S4"))
        grid = np.array([["r%dc%d" % (r, c) + "é" * (r * c) for c in range(3)] for r in range(4)], dtype=object)
        add("/vlen_2d", f.create_dataset("/vlen_2d", data=grid, dtype=utf8))
        add("/fixed_2d", f.create_dataset("/fixed_2d", data=np.array([[b"a", b"bb"], [b"", b"ccc"], [b"d\0", b"e"]],
                                                                     dtype="S3")))
        # Never written, too big to read: 2**40 strings.
        f.create_dataset("/huge/vlen", shape=(2**40,), dtype=utf8, chunks=(1024,))
    with open(os.path.join(out, "strings_manifest.txt"), "w") as m:
        m.write("\n".join(manifest) + "\n")


def read_strs(path):
    values = []
    with open(path, "rb") as b:
        data = b.read()
    at = 0
    while at < len(data):
        (n,) = struct.unpack_from("<Q", data, at)
        values.append(data[at + 8:at + 8 + n])
        at += 8 + n
    return values


def check_strings(path, out, version):
    failures = []
    with h5py.File(path, "r") as f:
        with open(os.path.join(out, "strings_manifest.txt")) as m:
            lines = [line.split() for line in m if line.strip()]
        for dpath, kind, width, cset, dims in lines:
            shape = () if dims == "-" else tuple(int(d) for d in dims.split(","))
            if dpath not in f:
                failures.append("%s: missing" % dpath)
                continue
            ds = f[dpath]
            info = h5py.check_string_dtype(ds.dtype)
            want_encoding = "utf-8" if cset == "utf8" else "ascii"
            want_length = None if kind == "vlen" else int(width)
            if info is None or info.encoding != want_encoding or info.length != want_length:
                failures.append("%s: h5py string type %r, expected encoding %s length %s"
                                % (dpath, info, want_encoding, want_length))
            tid = ds.id.get_type()
            if kind == "fixed" and tid.get_strpad() != h5py.h5t.STR_NULLPAD:
                failures.append("%s: fixed-length strings with pad %d, expected NULLPAD" % (dpath, tid.get_strpad()))
            if ds.shape != shape:
                failures.append("%s: shape %s, expected %s" % (dpath, ds.shape, shape))
            want = read_strs(os.path.join(out, "expected", bin_name(dpath)[:-4] + ".strs"))
            got = flat_bytes(ds[()])
            if got != want:
                diff = [i for i in range(min(len(got), len(want))) if got[i] != want[i]][:3]
                failures.append("%s: values differ (%d vs %d elements, first differing %s: %r vs %r)"
                                % (dpath, len(got), len(want), diff,
                                   [got[i][:40] for i in diff], [want[i][:40] for i in diff]))
            if cset == "utf8" and kind == "vlen":
                as_str = np.asarray(ds.asstr()[()], dtype=object).reshape(-1).tolist()
                if as_str != [w.decode("utf-8") for w in want]:
                    failures.append("%s: values as str differ" % dpath)
            expected_attrs = {"shardops_version": version, "op": "roundtrip", "inputs": dpath,
                              "options": "dtype=string"}
            for key, value in expected_attrs.items():
                got_attr = ds.attrs.get(key)
                if not isinstance(got_attr, str) or got_attr != value:
                    failures.append("%s: attribute %s = %r, expected %r" % (dpath, key, got_attr, value))
    for failure in failures:
        print("h5py check-strings: " + failure, file=sys.stderr)
    print("h5py check-strings: %d datasets, %d failures" % (len(lines), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make-strings":
        make_strings(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "check-strings":
        sys.exit(check_strings(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
