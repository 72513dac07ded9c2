"""HDF5 through shardops.read / shardops.write against files h5py makes and reads:
every dtype and strings (variable and fixed length) round trip at any rank count with
ragged blocks, balanced reads (row_block), provenance attributes, overwrite refused
without overwrite=True (the file left as it was), and I/O errors on every rank."""

import os
import resource

import h5py
import numpy as np
import pytest

import gen
import shardops
from conftest import WORLD
from e2e_common import ALL_DTYPES
from shards import block, outcomes, ragged_counts, run_python, same

RANK, SIZE = WORLD.Get_rank(), WORLD.Get_size()


def on_rank0(fn):
    """fn() on rank 0 between barriers (h5py here is serial); its failure fails every rank."""
    WORLD.Barrier()
    value, failure = None, None
    if RANK == 0:
        try:
            value = fn()
        except Exception as e:  # noqa: B902 - reported on every rank below
            failure = "%s: %s" % (type(e).__name__, e)
    value, failure = WORLD.bcast((value, failure), root=0)
    if failure:
        pytest.fail("on rank 0: " + failure)
    return value


def write_h5py(path, arrays):
    with h5py.File(path, "w") as f:
        for name, a in arrays.items():
            f[name] = a


def arrays_of_every_dtype():
    rng = np.random.default_rng(11)
    out = {"/%s" % d: gen.values(rng, d, (int(rng.integers(0, 13)), 3), specials=True) for d in ALL_DTYPES}
    out["/scalar"] = np.float64(2.5)
    return out


def test_read_h5py_files(shared_dir):
    path = os.path.join(shared_dir, "read.h5")
    arrays = arrays_of_every_dtype()
    words = [b"", b"a", "\u00f6".encode(), b"long" * 40, b"x\x00y"]
    vlen_words = words[:-1] + [b"xy"]  # HDF5's variable-length strings cannot hold NULs

    def make():
        with h5py.File(path, "w") as f:
            for name, a in arrays.items():
                f[name] = a
            f.create_dataset("/s/vlen", data=np.array(vlen_words, dtype=object), dtype=h5py.string_dtype())
            f["/s/fixed"] = np.array(words, dtype="S")
    on_rank0(make)
    got = {name: shardops.read("%s:%s" % (path, name), comm=WORLD) for name in arrays}
    vlen = shardops.read(path + ":/s/vlen", comm=WORLD)
    fixed = shardops.read(path + ":/s/fixed", comm=WORLD)
    whole = shardops.read(path + ":/s/fixed")
    for name, a in arrays.items():
        if a.ndim == 0:
            if RANK == 0:
                same(got[name], a)
            continue
        start, stop = shardops.row_block(a.shape[0], WORLD)
        same(got[name], a[start:stop])
    start, stop = shardops.row_block(len(words), WORLD)
    same(vlen, np.array(vlen_words[start:stop], dtype=object))
    same(fixed, np.array(words[start:stop], dtype=object))
    same(whole, np.array(words, dtype=object))


def test_write_round_trip(shared_dir):
    path = os.path.join(shared_dir, "write.h5")
    arrays = arrays_of_every_dtype()
    strings = {"/s/vlen": np.array(["", "a", "\u00f6l", "x" * 300, "b"], dtype=object),
               "/s/fixed": np.array([b"", b"ab", b"c\x00d", b"e"], dtype="S4")}
    outputs = {}
    for name, a in list(arrays.items()) + list(strings.items()):
        outputs[path + ":" + name] = a if a.ndim == 0 else block(a, ragged_counts(a.shape[0], SIZE, name), RANK)
    shardops.write(outputs, comm=WORLD, attributes={"run": "test"})

    def check():
        with h5py.File(path, "r") as f:
            for name, a in arrays.items():
                same(f[name][()], a)
                attrs = dict(f[name].attrs)
                assert attrs["writer"] == "shardops Python module" and attrs["run"] == "test", attrs
                assert attrs["shardops_version"] == shardops.__version__, attrs
            assert [s.decode() for s in f["/s/vlen"][()]] == strings["/s/vlen"].tolist()
            assert h5py.check_string_dtype(f["/s/vlen"].dtype).length is None
            assert f["/s/fixed"].dtype.kind == "S" and f["/s/fixed"][()].tolist() == strings["/s/fixed"].tolist()
        return True
    assert on_rank0(check)


def test_write_of_what_is_not_an_array(shared_dir):
    """An array-like whose __array__ raises: the error names the dataset and says why in one
    line (the exception's type and text, no traceback), on every rank, and nothing is written."""
    path = os.path.join(shared_dir, "not_an_array.h5")

    class Refuses:
        def __array__(self, *args, **kwargs):
            raise RuntimeError("no array here")

    with pytest.raises(shardops.InvalidArgumentError) as raised:
        shardops.write({path + ":/x": Refuses()}, comm=WORLD)
    assert str(raised.value) == path + ":/x: not an array (RuntimeError: no array here)", str(raised.value)
    WORLD.Barrier()
    assert not os.path.exists(path)


def test_string_kinds_must_agree(shared_dir):
    """The file type of strings follows the array's kind (S fixed-length, U variable-length):
    S on one rank and U on another is refused on every rank as any dtype difference is, nothing
    written (the lowest rank's kind was written)."""
    if SIZE == 1:
        pytest.skip("needs two ranks")
    path = os.path.join(shared_dir, "kinds.h5")
    block_of_rank = np.array([b"a", b"b"]) if RANK == 0 else np.array(["c", "d"])
    with pytest.raises(shardops.InvalidArgumentError, match="the ranks' calls differ") as raised:
        shardops.write({path + ":/s": block_of_rank}, comm=WORLD)
    assert "fixed-length strings" in str(raised.value) and "variable-length strings" in str(raised.value)
    WORLD.Barrier()
    assert not os.path.exists(path)


def test_existing_dataset_needs_overwrite(shared_dir):
    path = os.path.join(shared_dir, "overwrite.h5")
    target = path + ":/x"
    counts = ragged_counts(7, SIZE, "overwrite")
    first, second = np.arange(7, dtype=np.int32), np.arange(7, dtype=np.int32) * 10
    shardops.write({target: block(first, counts, RANK)}, comm=WORLD)
    with pytest.raises(shardops.InvalidArgumentError) as refused:
        shardops.write({target: block(second, counts, RANK)}, comm=WORLD)
    texts = WORLD.allgather(str(refused.value))
    kept = on_rank0(lambda: h5py.File(path, "r")["/x"][()].tolist())
    shardops.write({target: block(second, counts, RANK)}, comm=WORLD, overwrite=True)
    replaced = on_rank0(lambda: h5py.File(path, "r")["/x"][()].tolist())
    assert len(set(texts)) == 1 and "overwrite=True" in texts[0], texts
    assert kept == first.tolist() and replaced == second.tolist()
    assert not [n for n in os.listdir(shared_dir) if "shardops-tmp" in n]


def test_io_errors_on_every_rank(shared_dir):
    junk = os.path.join(shared_dir, "junk.h5")
    on_rank0(lambda: open(junk, "wb").write(b"not an HDF5 file at all" * 10))
    errors = outcomes([
        lambda: shardops.read(junk + ":/x", comm=WORLD),
        lambda: shardops.read(os.path.join(shared_dir, "absent.h5") + ":/x", comm=WORLD),
        lambda: shardops.read("no-dataset-path", comm=WORLD),
        lambda: shardops.write({os.path.join(shared_dir, "nodir", "o.h5") + ":/x": np.zeros(2)}, comm=WORLD),
    ])
    texts = [WORLD.allgather(str(e)) for e in errors]
    assert isinstance(errors[0], shardops.IOError) and isinstance(errors[0], OSError), errors[0]
    assert isinstance(errors[1], shardops.InvalidArgumentError), errors[1]
    assert isinstance(errors[2], shardops.InvalidArgumentError), errors[2]
    assert isinstance(errors[3], shardops.IOError), errors[3]
    for t in texts:
        assert len(set(t)) == 1, t


def test_strings_past_the_file_size_limit(shared_dir):
    """Strings too large for the file size limit (`ulimit -f`): an IOError naming the limit
    before anything is written, and no crash when MPI ends (HDF5 cannot close a file after a
    write past the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    limit = 1 << 20
    if hard != resource.RLIM_INFINITY and hard < limit:
        pytest.skip("the hard file size limit is below %d bytes" % limit)
    variable = np.array([b"%d" % k + b"x" * 80 for k in range(30000)], dtype=object)
    counts = ragged_counts(len(variable), SIZE, "fsize")
    outputs = [{os.path.join(shared_dir, "vlen.h5") + ":/s": block(variable, counts, RANK)},
               {os.path.join(shared_dir, "fixed.h5") + ":/s": block(variable.astype("S90"), counts, RANK)}]
    WORLD.Barrier()
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        errors = outcomes([lambda o=o: shardops.write(o, comm=WORLD) for o in outputs])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    for e in errors:
        assert isinstance(e, shardops.IOError) and "file size limit" in str(e), e
    assert not [n for n in os.listdir(shared_dir) if n.startswith(("vlen", "fixed", ".vlen", ".fixed"))]

def test_read_while_own_h5py_writes(shared_dir):
    """A file this process's own h5py holds open for writing is read (the program orders its
    own calls); only another program's writer is refused."""
    path = os.path.join(shared_dir, "own.h5")
    data = np.arange(20, dtype=np.float32).reshape(10, 2)

    def make():
        with h5py.File(path, "w") as f:
            f["x"] = data

    on_rank0(make)
    held = h5py.File(path, "a") if RANK == 0 else None
    try:
        errors = outcomes([lambda: shardops.read(path + ":/x", comm=WORLD)])
        got = shardops.read(path + ":/x", comm=WORLD) if errors[0] is None else None
    finally:
        if held is not None:
            held.close()
    assert errors[0] is None, errors[0]
    counts = WORLD.allgather(0 if got is None else len(got))
    assert np.array_equal(got, block(data, counts, RANK)), got

def test_write_over_what_another_job_wrote_since_read(shared_dir):
    """Read, change, write back with overwrite=True: another job that wrote the dataset in
    between had its change lost, both without an error. Now the write raises IOError on every
    rank and leaves the other job's rows; read again, the write goes through, a write after
    this program's own write needs no read, and datasets of the file not read are no matter."""
    path = os.path.join(shared_dir, "read_change_write.h5")
    target = path + ":/acc"
    on_rank0(lambda: write_h5py(path, {"acc": np.zeros(9, np.float32), "b": np.zeros(2, np.float32)}))
    acc = shardops.read(target, comm=WORLD)
    other = on_rank0(lambda: run_python("""
        import numpy as np, shardops
        shardops.write({%r: np.full(9, 5, np.float32)}, overwrite=True)
        shardops.write({%r: np.ones(2, np.float32)}, overwrite=True)
    """ % (target, path + ":/b")).returncode)
    refused = outcomes([lambda: shardops.write({target: acc + 1}, comm=WORLD, overwrite=True)])[0]
    kept = on_rank0(lambda: h5py.File(path, "r")["acc"][()].tolist())
    acc = shardops.read(target, comm=WORLD)
    shardops.write({target: acc + 1}, comm=WORLD, overwrite=True)
    on_rank0(lambda: run_python("""
        import numpy as np, shardops
        shardops.write({%r: np.ones(2, np.float32)}, overwrite=True)
    """ % (path + ":/b")))
    shardops.write({target: acc + 2}, comm=WORLD, overwrite=True)
    final = on_rank0(lambda: h5py.File(path, "r")["acc"][()].tolist())
    texts = WORLD.allgather(str(refused))
    assert other == 0
    assert isinstance(refused, shardops.IOError), refused
    assert len(set(texts)) == 1 and "that change would be lost" in texts[0] and "read the dataset again" in texts[0], texts
    assert kept == [5.0] * 9 and final == [7.0] * 9, (kept, final)
    assert not [n for n in os.listdir(shared_dir) if "shardops-tmp" in n]


def test_names_and_attributes_that_cannot_be_written(shared_dir):
    """Names that are not str: TypeError (str() made bytes or None a file name); attribute
    values with a NUL (HDF5 kept what came before it) or not UTF-8: refused; on every rank."""
    path = os.path.join(shared_dir, "attrs.h5")
    errors = outcomes([
        lambda: shardops.read(b"x.h5:/a", comm=WORLD),
        lambda: shardops.read(None, comm=WORLD),
        lambda: shardops.write({1: np.zeros(2)}, comm=WORLD),
        lambda: shardops.write({path + ":/a": np.ones(2)}, comm=WORLD, attributes={"k": "ab\x00cd"}),
        lambda: shardops.write({path + ":/a": np.ones(2)}, comm=WORLD, attributes={"k": "\udc80"}),
    ], caught=(TypeError, shardops.Error))
    assert all(isinstance(e, TypeError) for e in errors[:3]), errors
    assert isinstance(errors[3], shardops.InvalidArgumentError) and "holds a NUL byte" in str(errors[3]), errors[3]
    assert isinstance(errors[4], shardops.InvalidArgumentError) and "cannot be UTF-8 encoded" in str(errors[4])
    for e in errors:
        assert len(set(WORLD.allgather(str(e)))) == 1, e
    assert not os.path.exists(path)
    shardops.write({pathlib_name(path): np.ones(2)}, comm=WORLD)  # an os.PathLike name is taken
    assert on_rank0(lambda: h5py.File(path, "r")["/a"][()].tolist()) == [1.0] * (2 * SIZE)  # each rank its block


def pathlib_name(path):
    import pathlib
    return pathlib.PurePosixPath(path + ":/a")


def test_row_block():
    blocks = WORLD.allgather(shardops.row_block(10, WORLD))
    assert blocks[0][0] == 0 and blocks[-1][1] == 10
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    assert max(b - a for a, b in blocks) - min(b - a for a, b in blocks) <= 1
    assert shardops.row_block(10) == (0, 10)
    with pytest.raises(shardops.InvalidArgumentError):
        shardops.row_block(-1)
    with pytest.raises(TypeError):
        shardops.row_block("5")
    with pytest.raises(shardops.InvalidArgumentError):
        shardops.row_block(2**70)
