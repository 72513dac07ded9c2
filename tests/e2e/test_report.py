"""The --report JSON (typed fields, per-rank phases, deck steps, job metadata), the provenance
attributes that tools parse (inputs as a list, a deck's --set values), and
scripts/report_plot.py turning reports into a table and a PNG.
"""

import glob
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
                e2e.ref(out, "/g"), "--report", rep, "-q"],
               env={"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "3", "SLURM_ARRAY_JOB_ID": "4240",
                    "SLURM_ARRAY_TASK_ID": "2"})
    e2e.expect_success(t.suite, r)
    with open(rep) as f:
        doc = json.load(f)
    t.suite.check(doc["ranks"] == sh.np and len(doc["host_of_rank"]) == sh.np, "ranks/hosts: %r" % doc)
    slurm = {k: doc.get(k) for k in ("slurm_job_id", "slurm_step_id", "slurm_array_job_id", "slurm_array_task_id")}
    t.suite.check(slurm == {"slurm_job_id": "4242", "slurm_step_id": "3", "slurm_array_job_id": "4240",
                            "slurm_array_task_id": "2"}, "the Slurm ids: %r" % slurm)
    t.suite.check(doc.get("tf_op") == e2e.op_info("gather-nd")["tf_name"] == "GatherNd",
                  "tf_op = %r" % doc.get("tf_op"))
    t.suite.check(doc["command_line"][-1] == "-q" and "gather-nd" in doc["command_line"], "command_line")
    t.suite.check(isinstance(doc["started"], str) and doc["started"].endswith("Z"), "started = %r" % doc["started"])
    t.suite.check(doc["inputs"] == [e2e.ref(inp, "/params"), e2e.ref(inp, "/idx")], "inputs = %r" % doc["inputs"])
    # One rank makes the gathered rows as it writes them (docs/design.md, "Streamed outputs").
    streamed = doc["outputs"][0].get("streamed") if doc["outputs"] else None
    t.suite.check(doc["outputs"] == [{"dataset": e2e.ref(out, "/g"), "shape": [3, 3], "dtype": "float32",
                                      "streamed": streamed}] and isinstance(streamed, bool) and
                  (streamed or sh.np > 1), "outputs = %r" % doc["outputs"])
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
    # A streamed output's rows are made inside the write phase: -v shows that apply there.
    for phase in ("read", "validate", "apply", "write", "commit"):
        t.suite.check(r.stderr.count("] %s ..." % phase) == 1 and ("] %s done in" % phase) in r.stderr,
                      "-v does not show the %s phase once" % phase, r)
    if streamed:
        lines = [line.split("] ", 1)[1] for line in r.stderr.splitlines() if "] " in line]
        t.suite.check(lines.index("write ...") < lines.index(
            "apply ... (the rows of the output, made as they are written)") < lines.index("commit ..."),
            "-v does not show the rows made inside the write phase", r)
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


def _ompi_path(name):
    """A folder of the Open MPI in PATH (ompi_info --path NAME), or None (not Open MPI)."""
    try:
        out = subprocess.run(["ompi_info", "--path", name, "--parsable"], capture_output=True, text=True,
                             timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    prefix = "path:%s:" % name
    return out[len(prefix):] if out.startswith(prefix) else None


def _mtl_in_conf(path):
    """The last `mtl = VALUE` of an Open MPI parameter file, or None."""
    value = None
    with open(path) as f:
        for line in f:
            key, eq, rest = line.split("#", 1)[0].partition("=")
            if eq and key.strip() == "mtl":
                value = rest.strip()
    return value


def mpi_start(t, sh):
    """Before MPI_Init, shardops leaves out Open MPI's PSM and PSM2 MTLs where their devices are
    absent (loading their libraries costs about 0.1 s each, then the components give up),
    keeps the exclusions the site's parameter file makes, says what it set in the report, and
    leaves a choice made in the environment alone."""
    sysconf = _ompi_path("sysconfdir")
    if sysconf is None or not os.path.exists(os.path.join(sysconf, "openmpi-mca-params.conf")):
        t.suite.skip("mpi_start", "not Open MPI, or no parameter file")
        return
    absent = []
    if not os.path.exists("/dev/ipath"):
        absent.append("psm")
    if not glob.glob("/dev/hfi1_[0-9]") and not glob.glob("/dev/hfi1_[0-9][0-9]"):
        absent.append("psm2")
    site = _mtl_in_conf(os.path.join(sysconf, "openmpi-mca-params.conf"))
    if site and not site.startswith("^"):
        expected = {}  # the site names the MTLs to open
    else:
        excluded = [n.strip() for n in (site or "^")[1:].split(",") if n.strip()]
        added = [n for n in absent if n not in excluded]
        expected = {"OMPI_MCA_mtl": "^" + ",".join(excluded + added)} if added else {}
    inp = os.path.join(t.d, "in.h5")
    e2e.write_h5(inp, {"/params": np.arange(12, dtype=np.float32).reshape(4, 3),
                       "/idx": np.array([[2], [0]], np.int64)}, mode="w")
    # The environment of a user who chose nothing (no pml, btl or mtl), with no parameter file
    # of their own (HOME has none).
    saved = dict(sh.env)
    for k in ("OMPI_MCA_pml", "OMPI_MCA_btl", "OMPI_MCA_mtl"):
        sh.env.pop(k, None)
    try:
        def run(name, env):
            out, rep = os.path.join(t.d, name + ".h5"), os.path.join(t.d, name + ".json")
            r = sh.run(["gather-nd", "--params", e2e.ref(inp, "/params"), "--indices", e2e.ref(inp, "/idx"),
                        "--out", e2e.ref(out, "/g"), "--report", rep, "-q"],
                       env=dict({"HOME": t.d, "SHARDOPS_ONE_RANK_MPI": "1"}, **env))
            e2e.expect_success(t.suite, r)
            e2e.same_array(t.suite, name, e2e.read_h5(out, "/g"), np.array([[6, 7, 8], [0, 1, 2]], np.float32), r)
            with open(rep) as f:
                settings = json.load(f).get("mpi_settings")
            # The shared-file-pointer setting is made apart from the MTLs' (checked below).
            sharedfp[name] = settings.pop("OMPI_MCA_sharedfp", None)
            return r, settings

        sharedfp = {}
        verbose = {"OMPI_MCA_mtl_base_verbose": "100"}
        r, settings = run("chosen_by_shardops", verbose)
        t.suite.check(settings == expected, "mpi_settings = %r, expected %r" % (settings, expected), r)
        # The MTLs left out are not even loaded; without the setting (switched off) they are.
        components = _ompi_path("pkglibdir")
        installed = [n for n in absent if components and os.path.exists(os.path.join(components, "mca_mtl_%s.so" % n))]
        for n in installed:
            t.suite.check(("found loaded component %s\n" % n) not in r.stderr, "mtl %s still loaded" % n, r)
        r, settings = run("switched_off", dict(verbose, SHARDOPS_SKIP_ABSENT_MTLS="0"))
        t.suite.check(settings == {}, "SHARDOPS_SKIP_ABSENT_MTLS=0: mpi_settings = %r" % settings, r)
        for n in installed:
            t.suite.check(("found loaded component %s\n" % n) in r.stderr, "mtl %s not loaded when switched off" % n, r)
        # A choice in the environment (or mpirun --mca) stands.
        for name, env in (("user_mtl", {"OMPI_MCA_mtl": "^ofi"}), ("user_pml", {"OMPI_MCA_pml": "ob1"})):
            r, settings = run(name, env)
            t.suite.check(settings == {}, "%s: mpi_settings = %r" % (name, settings), r)
        # Open MPI's lockedfile and sm components are left out (they fail on long paths) unless the user
        # chose the shared-file-pointer components.
        r, _ = run("user_sharedfp", {"OMPI_MCA_sharedfp": "individual"})
        left_out = "^lockedfile,sm"
        t.suite.check(sharedfp == {"chosen_by_shardops": left_out, "switched_off": left_out, "user_mtl": left_out,
                                   "user_pml": left_out, "user_sharedfp": None},
                      "OMPI_MCA_sharedfp set: %r" % sharedfp, r)
        if sh.np == 1:
            # A job of one rank starts no MPI unless asked (SHARDOPS_ONE_RANK_MPI=1, as above):
            # Open MPI loads no component, and shardops sets nothing for it.
            r, settings = run("one_rank", dict(verbose, SHARDOPS_ONE_RANK_MPI=""))
            t.suite.check(settings == {} and "found loaded component" not in r.stderr,
                          "a job of one rank started MPI: mpi_settings = %r" % settings, r)
            del sharedfp["one_rank"]
    finally:
        sh.env.clear()
        sh.env.update(saved)


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
             ("plot", plot),
             ("mpi_start", mpi_start)]
    e2e.run_cases(suite, args, sh, "report", cases)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
