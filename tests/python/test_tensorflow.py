"""Every op and dtype TensorFlow has a CPU kernel for, strings, bad indices (both
policies), empty tensors and shape errors: shardops' result on whole tensors and on
ragged row blocks equals TensorFlow's, and where TensorFlow raises, every rank raises
InvalidArgumentError with TensorFlow's message, NotFoundError where TensorFlow has no kernel
for the dtypes (the cases of tests/e2e/test_tf_oracle.py)."""

import shardops
from shards import Split, distributable, same
from test_tf_oracle import strip_tf_message


def outcome(split):
    try:
        return split.run(), None
    except shardops.Error as e:
        return None, e


def cast_by_the_call(case):
    """Whether the Python call casts one of the case's arrays, as TensorFlow's eager ops cast
    NumPy arrays (docs/python.md): the oracle ran it on tensors of their own dtypes, which
    are not cast (the command line's datasets are such tensors)."""
    a = case.arrays
    if case.op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        data = [a[k].dtype for k in sorted(a) if k.startswith("d")]
        return any(a[k].dtype != "int32" for k in a if k.startswith("i")) or len(set(data)) > 1
    if case.op == "dynamic-partition":
        return a["partitions"].dtype != "int32"
    if case.op.startswith("tensor-scatter"):
        return a["tensor"].dtype != a["updates"].dtype
    return False


def test_ops_against_tensorflow(comm, tf_oracle):
    cases, results, outputs = tf_oracle
    checked = []
    for case in cases:
        verdict = results[case.name]
        if (comm is not None and not distributable(case)) or cast_by_the_call(case):
            continue
        split = Split(case, comm)
        got, error = outcome(split)
        texts = [str(error)] if comm is None else comm.allgather(str(error))
        checked.append((case, split, verdict, got, error, texts))
    assert len(checked) > 100
    for case, split, verdict, got, error, texts in checked:
        if verdict["status"] == "unsupported":  # no kernel: TensorFlow's NotFoundError and text
            assert isinstance(error, shardops.NotFoundError), "%s: TensorFlow has no kernel, shardops %r" % (
                case.name, error if error is not None else "ran it")
            assert strip_tf_message(verdict["message"]) in str(error), (case.name, str(error), verdict["message"])
            assert len(set(texts)) == 1, "%s: the ranks raised different errors: %r" % (case.name, texts)
        elif verdict["status"] == "ok":
            assert error is None, "%s: TensorFlow succeeded, shardops raised %r" % (case.name, error)
            assert len(got) == verdict["outputs"], case.name
            for k, actual in enumerate(got):
                # tf_worker hands strings over as NumPy S (trailing NULs dropped).
                same(actual, split.expected_block(k, outputs["%s/%d" % (case.name, k)]), strip_nul=True)
        else:
            assert isinstance(error, shardops.InvalidArgumentError) and isinstance(error, ValueError), \
                "%s: TensorFlow raised %s, shardops %r" % (case.name, verdict["error_class"], error)
            assert strip_tf_message(verdict["message"]) in str(error), (case.name, str(error), verdict["message"])
            assert len(set(texts)) == 1, "%s: the ranks raised different errors: %r" % (case.name, texts)
