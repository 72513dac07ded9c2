"""Runs cases through TensorFlow's raw ops (the oracle of test_tf_oracle.py).

Run by a Python that has TensorFlow (the project's .venv-tf, not Debian's python3):
    python tf_worker.py DIR
DIR/cases.json lists the cases ({name, op, tf_op, num_partitions, shape, bad_indices, batch_dims,
keys}; tf_op: the op registry's TensorFlow name of op; batch_dims: tf.gather_nd's, 0 for the raw op),
DIR/inputs.npz holds their arrays as "<case>/<key>". Writes DIR/results.json
({name: {"status": "ok"|"error"|"unsupported"|"refused", "message", "error_class", "outputs"}};
unsupported: TF has no kernel, refused: TF's Python layer would not make the call)
and DIR/outputs.npz ("<case>/<k>" for output k). Needs only numpy and tensorflow.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402



def policy(case):
    # shardops' error/default policy is TF's default attr value "" (so its node texts agree).
    return {"bad_indices_policy": "IGNORE"} if (case.get("bad_indices") or "").lower() == "ignore" else {}


def run(case, a):
    op = case["op"]
    if op == "dynamic-partition":
        return tf.raw_ops.DynamicPartition(data=a["data"], partitions=a["partitions"],
                                           num_partitions=case["num_partitions"])
    if op in ("dynamic-stitch", "parallel-dynamic-stitch"):
        m = sum(1 for k in case["keys"] if k.startswith("i"))
        fn = tf.raw_ops.DynamicStitch if op == "dynamic-stitch" else tf.raw_ops.ParallelDynamicStitch
        return [fn(indices=[a["i%d" % j] for j in range(m)], data=[a["d%d" % j] for j in range(m)])]
    if op == "scatter-nd":
        idx = a["indices"]
        return [tf.raw_ops.ScatterNd(indices=idx, updates=a["updates"],
                                     shape=tf.constant(case["shape"], idx.dtype),
                                     **policy(case))]
    if op.startswith("tensor-scatter-"):  # the raw op the registry names (TensorScatterAdd, ...)
        fn = getattr(tf.raw_ops, case["tf_op"])
        return [fn(tensor=a["tensor"], indices=a["indices"], updates=a["updates"], **policy(case))]
    if op == "gather-nd" and case.get("batch_dims"):  # built by tf.gather_nd from a GatherNd
        return [tf.gather_nd(a["params"], a["indices"], batch_dims=case["batch_dims"], **policy(case))]
    if op == "gather-nd":
        return [tf.raw_ops.GatherNd(params=a["params"], indices=a["indices"], **policy(case))]
    raise ValueError(op)


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)
    inputs = np.load(os.path.join(d, "inputs.npz"))
    results, outputs = {}, {}
    for case in cases:
        name = case["name"]
        try:
            # Tensors, not NumPy arrays: TF would cast a NumPy input to the dtype the op wants.
            a = {k: tf.constant(inputs["%s/%s" % (name, k)]) for k in case["keys"]}
            outs = run(case, a)
        except tf.errors.NotFoundError as e:  # no kernel for this (dtype, index dtype)
            results[name] = {"status": "unsupported", "message": str(e).splitlines()[0]}
        except (tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError, tf.errors.UnimplementedError) as e:
            results[name] = {"status": "error", "message": str(e), "error_class": type(e).__name__}
        except Exception as e:  # TF's Python layer refused the call: nothing to compare with
            results[name] = {"status": "refused", "message": "%s: %s" % (type(e).__name__, str(e).splitlines()[0])}
        else:
            for k, t in enumerate(outs):
                value = t.numpy()
                if t.dtype == tf.string:  # object array of bytes -> numpy S (savez without pickle)
                    value = np.array(value.tolist(), dtype="S%d" % max([len(v) for v in value.reshape(-1)] + [1]))
                    value = value.reshape(t.shape)
                outputs["%s/%d" % (name, k)] = np.asarray(value)
            results[name] = {"status": "ok", "outputs": len(outs)}
    np.savez(os.path.join(d, "outputs.npz"), **outputs)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("tf_worker: TensorFlow %s ran %d cases" % (tf.__version__, len(cases)))


if __name__ == "__main__":
    main()
