"""Python values (numbers, lists and tuples of them: not arrays) are converted as
TensorFlow's eager ops convert them: the same dtype, the same bits, the same ValueError or
TypeError, compared with TensorFlow itself on the same expressions. On several ranks each
rank passes its block of a list, and the blocks are converted as TensorFlow converts the
whole list (python/shardops/_python_values.py)."""

import json
import os
import subprocess

import numpy as np
import pytest
from mpi4py import MPI

import shardops
from shardops._python_values import OUT_OF_RANGE
from test_tf_oracle import find_tf_python, strip_tf_message

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

OPS = ["dynamic_partition", "dynamic_stitch", "scatter_nd", "gather_nd", "tensor_scatter_nd_update",
       "tensor_scatter_nd_add", "tensor_scatter_nd_min"]

# Whole calls: rounding into float16 (through float32), float32 (integers through float64) and
# complex64 (a cast that flushes subnormals); the first element's kind; the converters' order
# (int32, then int64 on a larger integer, then float32 on a float); which mixes each dtype takes.
CALLS = [
    "tensor_scatter_nd_update(np.float16([1, 2]), [[1]], [1 + 2**-11 + 2**-40])",
    "tensor_scatter_nd_update(np.float16([1, 2]), [[1]], [65520.0 - 2**-30])",
    "tensor_scatter_nd_update(np.float16([1, 2]), [[1]], [2**-25 + 2**-60])",
    "tensor_scatter_nd_update(np.float16([1, 2]), [[1]], [1e300])",
    "tensor_scatter_nd_update(np.float32([1, 2]), [[1]], [2**60 + 2**36 + 1])",
    "tensor_scatter_nd_update(np.float32([1, 2]), [[1]], [2**200])",
    "tensor_scatter_nd_update(np.float32([1, 2]), [[1]], [2**1030])",
    "tensor_scatter_nd_update(np.float32([1, 2]), [[1]], [1e-40])",
    "tensor_scatter_nd_update(np.complex64([1, 2]), [[1]], [1e-40])",
    "tensor_scatter_nd_update(np.complex64([1, 2]), [[1]], [1e-40 + 1e-40j])",
    "tensor_scatter_nd_update(np.complex64([1, 2]), [[1]], [True])",
    "tensor_scatter_nd_update(np.complex128([1, 2]), [[1]], [True])",
    "tensor_scatter_nd_update(np.int8([1, 2]), [[1]], [300])",
    "tensor_scatter_nd_update(np.int8([1, 2]), [[1]], [True])",
    "tensor_scatter_nd_update(np.uint64([1, 2]), [[1]], [-1])",
    "tensor_scatter_nd_update(np.uint64([1, 2]), [[1], [0]], [2**63, -1])",
    "tensor_scatter_nd_update(np.int8([1, 2]), [[1], [0]], [True, 1])",
    "tensor_scatter_nd_update(np.int8([1, 2]), [[1]], [2.5])",
    "tensor_scatter_nd_update(np.int32([1, 2]), [[1], [0]], [True, 1])",
    "tensor_scatter_nd_update(np.int32([1, 2]), [[1], [0]], [np.uint64(5), 1])",
    "tensor_scatter_nd_update(np.int64([1, 2]), [[1]], [np.uint64(2**64 - 1)])",
    "tensor_scatter_nd_update(np.uint8([1, 2]), [[1]], [np.uint64(2**64 - 1)])",
    "tensor_scatter_nd_update(np.uint64([1, 2]), [[1], [0]], [2**64 - 1, 1])",
    "tensor_scatter_nd_update(np.float32([1, 2]), [[1], [0]], [2**63, 1])",
    "tensor_scatter_nd_update(np.float32([1, 2]), [[1], [0]], [True, 1])",
    "tensor_scatter_nd_update(np.float64([1, 2]), [[1]], [1 + 2j])",
    "tensor_scatter_nd_update(np.float64([1, 2]), [[1]], ['a'])",
    "tensor_scatter_nd_update(np.bool_([1, 0]), [[1]], [1])",
    "tensor_scatter_nd_add([np.uint64(1), 2], [[1]], [3])",
    "tensor_scatter_nd_add([1.0, 2**64], [[1]], [3])",
    "tensor_scatter_nd_add([1.0, 1e300], [[1]], [3])",
    "tensor_scatter_nd_add([np.longdouble(1.5), 2.5], [[1]], [3])",
    "tensor_scatter_nd_add([np.array(1.5), 2.5], [[1]], [3])",
    "tensor_scatter_nd_add([np.float64(1.5), 2.5], [[1]], [3])",
    "tensor_scatter_nd_add([np.float16(1.5), 1e10], [[1]], [3])",
    "tensor_scatter_nd_add([1, 2**40], [[1]], [3])",
    "tensor_scatter_nd_add([1, 2**40, 1.5], [[1]], [3])",
    "tensor_scatter_nd_add([1, 1.5, 2**63], [[1]], [3])",
    "tensor_scatter_nd_add([1, 2**63, 1.5], [[1]], [3])",
    "tensor_scatter_nd_add([True, 1], [[1]], [3])",
    "tensor_scatter_nd_add([1, True], [[1]], [3])",
    "tensor_scatter_nd_add([1.5, 'a'], [[1]], [3])",
    "tensor_scatter_nd_min([1, np.True_], [[1]], [3])",
    "tensor_scatter_nd_update(np.int32([1, 2]), [[1]], [None])",
    "dynamic_partition([1, np.uint64(5)], [0, 0], 1)",
    "dynamic_partition([[1, 2], [3]], [0, 0], 1)",
    "dynamic_partition([1, [2]], [0, 0], 1)",
    "dynamic_partition([[1], 2], [0, 0], 1)",
    "dynamic_partition([np.arange(2.0), np.arange(2.0, 4.0)], [0, 1], 2)",
    "dynamic_partition((np.float16(1.5), 2.0), [0, 0], 1)",
    "dynamic_partition([1.5, 2], [0, 1.5], 2)",
    "dynamic_partition([1.5, 2], [0, True], 2)",
    "dynamic_stitch([[0], [1]], [np.float16([1.5]), [1 + 2**-11 + 2**-40]])",
    "dynamic_stitch([[0, 1]], [[np.float32(1.5), 2**24 + 1]])",
    "scatter_nd([[1]], [2**31], [3])",
    "scatter_nd([[1]], [5], [3.0])",
    "gather_nd([1.5, 2.5], [[2**31]])",
    "gather_nd([1.5, 2.5], [[1.0]])",
]

# Lists split in row blocks over the ranks: (the whole value, the dtype an array input asks for
# or None). dynamic_partition gives the dtype TensorFlow picks; tensor_scatter_nd_update the
# conversion into an array's dtype.
SPLIT = [
    ("[np.float16(1.5), 2.5, 3.5]", None), ("[True, 1]", None), ("[1.5, 2**63]", None), ("[1, 2**40, 3]", None),
    ("[1, 2**40, 1.5]", None), ("[1, 1.5, 2**63]", None), ("[1, 2**63, 1.5]", None), ("[np.uint64(1), 2]", None),
    ("[1.0, 1e300]", None), ("[np.float64(1.5), 2.5]", None), ("[1, True, 2]", None), ("[2**31, 1, 2]", None),
    ("[1.5, 'a']", None), ("[1, 2 + 1j]", None), ("[2 + 1j, 1]", None),
    ("[1 + 2**-11 + 2**-40, 65520.0 - 2**-30, 3]", "float16"), ("[7, 7, 7.5]", "int32"), ("[True, 1]", "int8"),
    ("[1, True]", "int8"), ("[1e-40, 1]", "complex64"), ("[2**64 - 1, 1]", "uint64"),
    ("[2**60 + 2**36 + 1, 2**63]", "float32"), ("[np.uint64(5), 1, -1]", "int32"), ("[1e300, 1e-40]", "float32"),
]

WORLD = MPI.COMM_WORLD


def tf_split_call(source, dtype):
    if dtype is None:
        return "dynamic_partition(%s, [0] * len(%s), 1)[0]" % (source, source)
    n = "len(%s)" % source
    return "tensor_scatter_nd_update(np.zeros(%s, np.%s), [[k] for k in range(%s)], %s)" % (n, dtype, n, source)


TF_SCRIPT = r'''
import json, sys
import numpy as np
import tensorflow as tf
F = {name: getattr(tf, name) for name in %r}
out = []
for source in json.load(sys.stdin):
    try:
        r = eval(source, dict(F, np=np))
        r = [x.numpy() for x in r] if isinstance(r, list) else [r.numpy()]
        out.append(["ok", [[x.dtype.name, list(x.shape), x.tobytes().hex()] for x in r]])
    except Exception as e:
        out.append([type(e).__name__, str(e).split("\n")[0]])
print(json.dumps(out))
''' % (OPS,)


@pytest.fixture(scope="module")
def tensorflow_says():
    """TensorFlow's answer to each of CALLS and of SPLIT's whole calls (rank 0 asks)."""
    sources = CALLS + [tf_split_call(s, d) for s, d in SPLIT]
    answer = None
    if WORLD.Get_rank() == 0:
        tf_python, tried = find_tf_python(REPO)
        if tf_python is None:
            answer = "no Python with TensorFlow (tried: %s)" % "; ".join(tried)
        else:
            p = subprocess.run([tf_python, "-c", TF_SCRIPT], input=json.dumps(sources), capture_output=True,
                               text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
            answer = dict(zip(sources, json.loads(p.stdout))) if p.returncode == 0 else "TensorFlow: " + p.stderr
    answer = WORLD.bcast(answer, root=0)
    if isinstance(answer, str):
        pytest.skip(answer)
    return answer


def outcome(call):
    """What a call gave, as TF_SCRIPT writes it."""
    try:
        r = call()
        r = r if isinstance(r, list) else [r]
        return ["ok", [[x.dtype.name, list(x.shape), np.ascontiguousarray(x).tobytes().hex()] for x in r]]
    except Exception as e:  # noqa: B902
        return [type(e).__name__, str(e).split("\n")[0]]


def test_whole_values_as_tensorflow(tensorflow_says):
    ops = {name: getattr(shardops, name) for name in OPS}
    got = {source: outcome(lambda: eval(source, dict(ops, np=np))) for source in CALLS}
    for source in CALLS:
        want, mine = tensorflow_says[source], got[source]
        if want[0] in ("ok", "ValueError", "TypeError"):
            assert mine == want, (source, mine, want)
        elif want[0] == "SystemError":  # its uint64 converter's OverflowError left set: an out-of-range integer
            assert mine == ["ValueError", OUT_OF_RANGE], (source, mine, want)
        else:  # the op's error: InvalidArgumentError with TensorFlow's text
            assert mine[0] == "InvalidArgumentError" and strip_tf_message(want[1]) in mine[1], (source, mine, want)


def test_blocks_as_tensorflow_converts_the_whole(tensorflow_says):
    """Each rank its block of the list (empty blocks included at 3 and 4 ranks): the dtype
    and bits TensorFlow gives the whole list, or its ValueError on every rank; a TypeError,
    which names the value, names a block that cannot be converted."""
    results = []
    for source, dtype in SPLIT:
        whole = eval(source, {"np": np})
        start, stop = shardops.row_block(len(whole), WORLD)
        block = whole[start:stop]
        if dtype is None:
            call = lambda: shardops.dynamic_partition(block, [0] * len(block), 1, comm=WORLD)[0]  # noqa: E731
        else:
            call = lambda: shardops.tensor_scatter_nd_update(  # noqa: E731
                np.zeros(stop - start, dtype), [[k] for k in range(start, stop)], block, comm=WORLD)
        results.append((source, dtype, start, stop, outcome(call)))
    everyone = WORLD.allgather([r[4] for r in results])
    for k, (source, dtype, start, stop, mine) in enumerate(results):
        want = tensorflow_says[tf_split_call(source, dtype)]
        if want[0] != "ok":
            assert mine[0] == want[0], (source, mine, want)
            if want[0] == "TypeError":
                assert mine[1].startswith("Cannot convert ") and mine[1].endswith(want[1][want[1].index(" to "):])
            else:
                assert mine == want, (source, mine, want)
            assert len({tuple(map(str, rank[k])) for rank in everyone}) == 1, (source, [rank[k] for rank in everyone])
            continue
        assert mine[0] == "ok", (source, mine, want)
        (name, shape, bits), = want[1]
        size = np.dtype(name).itemsize
        assert mine[1] == [[name, [stop - start], bits[2 * size * start:2 * size * stop]]], (source, mine, want)
