"""The --report JSON (typed fields, per-rank phases, deck steps, job metadata), the provenance
attributes that tools parse (inputs as a list, a deck's --set values), and
scripts/report_plot.py turning reports into a table and a PNG.
"""

import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as e2e  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PHASES = ["read", "validate", "route", "apply", "write", "total"]

DECK = """
params:
  rows: 40
tensors:
  x: {dataset: "in put.h5:/x"}
steps:
  - {op: not_equal, x: x, y: 0, out: mask}
  - {op: dynamic_partition, data: x, partitions: mask, num_partitions: 2, out: part}
  - {op: range, limit: "${rows}", out: r}
outputs:
  part/1: out.h5:/nonzero
  r: out.h5:/r
"""


def op_report(t, sh):
    """A space in a dataset's file name stays one item of the inputs attribute and report."""
    inp = os.path.join(t.d, "in put.h5")
    params = np.arange(60, dtype=np.float32).reshape(20, 3)
    idx = np.array([[3], [1], [19]], np.int32)
    e2e.write_h5(inp, {"/params": params, "/idx": idx}, mode="w")
    out, rep = os.path.join(t.d, "o.h5"), os.path.join(t.d, "r.json")
    r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"), "--out",
                e2e.ref(out, "/g"), "--report", rep, "-q"], env={"SLURM_JOB_ID": "4242"})
    e2e.expect_success(t.suite, r)
    with open(rep) as f:
        doc = json.load(f)
    t.suite.check(doc["ranks"] == sh.np and len(doc["host_of_rank"]) == sh.np, "ranks/hosts: %r" % doc)
    t.suite.check(doc["slurm_job_id"] == "4242", "slurm_job_id = %r" % doc.get("slurm_job_id"))
    t.suite.check(doc.get("tf_op") == e2e.op_info("gather-nd")["tf_name"] == "GatherNd",
                  "tf_op = %r" % doc.get("tf_op"))
    t.suite.check(doc["command_line"][-1] == "-q" and "gather-nd" in doc["command_line"], "command_line")
    t.suite.check(isinstance(doc["started"], str) and doc["started"].endswith("Z"), "started = %r" % doc["started"])
    t.suite.check(doc["inputs"] == [e2e.ref(inp, "/params"), e2e.ref(inp, "/idx")], "inputs = %r" % doc["inputs"])
    t.suite.check(doc["outputs"] == [{"dataset": e2e.ref(out, "/g"), "shape": [3, 3], "dtype": "float32"}],
                  "outputs = %r" % doc["outputs"])
    for p in PHASES:
        s = doc["phases"][p]
        t.suite.check(len(s["per_rank"]) == sh.np and s["min"] <= s["mean"] <= s["max"] and
                      s["per_rank"][s["max_rank"]] == s["max"] and doc["seconds"][p] == s["max"],
                      "phase %s: %r" % (p, s))
    t.suite.check(doc["bytes"]["written"] == 36 and isinstance(doc["bytes"]["sent_between_ranks"], int),
                  "bytes = %r" % doc["bytes"])
    # -v: rank 0 prints each phase as it starts and ends, with the bytes it moved in files.
    r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"), "--out",
                e2e.ref(out, "/v"), "-v"])
    e2e.expect_success(t.suite, r)
    for phase in ("read", "validate", "apply", "write", "commit"):
        t.suite.check(r.stderr.count("] %s ..." % phase) == 1 and ("] %s done in" % phase) in r.stderr,
                      "-v does not show the %s phase once" % phase, r)
    t.suite.check("read done in" in r.stderr and "MB/s" in r.stderr, "-v shows no rate for the read", r)
    attrs = e2e.h5py.File(out, "r")["/g"].attrs
    t.suite.check([str(x) for x in attrs["inputs"]] == doc["inputs"],
                  "inputs attribute = %r" % (attrs["inputs"],))
    return rep


def deck_report(t, sh):
    inp = os.path.join(t.d, "in put.h5")
    x = np.array([0, 3, 0, 5, 7, 0] * 5, np.int32)
    e2e.write_h5(inp, {"/x": x}, mode="w")
    deck = os.path.join(t.d, "deck.yaml")
    with open(deck, "w") as f:
        f.write(DECK)
    rep = os.path.join(t.d, "deck.json")
    r = sh.run(["run", deck, "--set", "rows=7", "--report", rep, "-q"])
    e2e.expect_success(t.suite, r)
    out = os.path.join(t.d, "out.h5")
    e2e.same_array(t.suite, "nonzero", e2e.read_h5(out, "/nonzero"), x[x != 0], r)
    with open(rep) as f:
        doc = json.load(f)
    ops = [s["op"] for s in doc.get("steps", [])]
    t.suite.check(ops == ["not_equal", "dynamic_partition", "range"], "steps = %r" % ops)
    tf_ops = [s.get("tf_op") for s in doc.get("steps", [])]
    t.suite.check(tf_ops == ["NotEqual", "DynamicPartition", "Range"], "steps' tf_op = %r" % tf_ops)
    for s in doc.get("steps", []):
        t.suite.check(len(s["seconds"]["per_rank"]) == sh.np, "step %r" % s)
    t.suite.check({o.get("tensor") for o in doc["outputs"]} == {"part/1", "r"}, "outputs = %r" % doc["outputs"])
    with e2e.h5py.File(out, "r") as f:
        a = f["/nonzero"].attrs
        t.suite.check([str(v) for v in a["inputs"]] == [e2e.ref(inp, "/x")], "deck output inputs = %r" % a["inputs"])
        t.suite.check([str(v) for v in a["set"]] == ["rows=7"], "deck output set = %r" % (a["set"],))
        t.suite.check(len(f["/r"].attrs["inputs"]) == 0, "range's output names inputs: %r" % f["/r"].attrs["inputs"])
    return rep


def plot(t, sh):
    reps = [op_report(t, sh), deck_report(t, sh)]
    png = os.path.join(t.d, "reports.png")
    p = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "report_plot.py")] + reps + ["--png", png],
                       capture_output=True, text=True)
    t.suite.check(p.returncode == 0, "report_plot.py failed:\n%s" % p.stderr)
    t.suite.check("| r.json | gather-nd |" in p.stdout and "not_equal" in p.stdout, "table:\n%s" % p.stdout)
    t.suite.check(os.path.exists(png) and os.path.getsize(png) > 1000, "no PNG written")


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], 2)
    sh = e2e.Shardops(args)
    suite = e2e.Suite("e2e report np=%d" % args.np, args)

    cases = [("op_report", op_report),
             ("deck_report", deck_report),
             ("plot", plot)]
    e2e.run_cases(suite, args, sh, "report", cases)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
