#!/usr/bin/python3
"""End-to-end: resource limits and hostile input (ctest e2e_limits_np_N; docs/limits.md).

- Memory: a job in a real memory cgroup (v1 or v2, made here and removed after) whose
  input is larger than the group's limit fails with exit 2 and a message naming the
  input, its bytes and the cgroup limit, instead of being OOM-killed; a small job in the
  same group still runs. Skipped, with the reason, where no cgroup can be made.
- Counts: --num-partitions near 2^31 and 10^9, and a deck's, fail fast with exit 2.
- Decks: alias expansion ("billion laughs"), duplicate keys, inline tensors of more
  dimensions than HDF5 stores and nesting beyond that fail with exit 2 and the line.
- Exit codes and messages: a loop of symbolic links is bad input (2); a read-only
  (0444) target is left alone even for root (3); a size that overflows int64 gives the
  one-rank message at every rank count; a filter HDF5 cannot load is named.
- Open files (`ulimit -n`): a stitch of more input files than the descriptors left runs;
  a deck with more output files than that fails with exit 3 naming the limit, nothing left.
"""

import contextlib
import os
import resource
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import h5py  # noqa: E402

from e2e_common import (SKIP_RC, Result, Shardops, Suite, error_lines, file_state, parse_args, read_h5, ref,  # noqa: E402
                        work_dir, write_h5)

MiB = 1 << 20


def expect_error(suite, res, rc, texts, max_seconds=None):
    suite.require(not res.timed_out, "hung", res)
    suite.check(res.rc == rc, "exit code %s, expected %d" % (res.rc, rc), res)
    lines = error_lines(res.stderr)
    suite.check(len(lines) == 1, "expected one 'shardops: error' line, got %d" % len(lines), res)
    for t in texts:
        suite.check(t in res.stderr, "stderr lacks %r" % t, res)
    suite.check("internal error" not in res.stderr, "reported as an internal error", res)
    if max_seconds:
        suite.check(res.seconds < max_seconds, "took %.1f s (expected < %d s)" % (res.seconds, max_seconds), res)
    return lines[0] if lines else ""


# ---------------------------------------------------------------------------------------------
# Memory cgroups


def cgroup_v1_parent():
    p = "/sys/fs/cgroup/memory"
    return p if os.path.isfile(os.path.join(p, "memory.limit_in_bytes")) else None


def cgroup_v2_parent():
    """A cgroup2 folder whose children get the memory controller, or None and why."""
    for p in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        controllers = os.path.join(p, "cgroup.controllers")
        if not os.path.isfile(controllers):
            continue
        with open(controllers) as f:
            if "memory" not in f.read().split():
                return None, "the cgroup2 tree at %s has no memory controller (memory is bound to v1 here)" % p
        with open(os.path.join(p, "cgroup.subtree_control")) as f:
            if "memory" in f.read().split():
                return p, None
        try:
            with open(os.path.join(p, "cgroup.subtree_control"), "w") as f:
                f.write("+memory")
            return p, None
        except OSError as e:
            return None, "cannot enable the memory controller for children of %s: %s" % (p, e)
    return None, "no cgroup2 tree is mounted"


@contextlib.contextmanager
def memory_cgroup(version, limit_bytes, tag):
    """A fresh child memory group with the limit; yields its folder, removes it after."""
    parent = cgroup_v1_parent() if version == 1 else cgroup_v2_parent()[0]
    group = os.path.join(parent, "shardops-test-%d-%s" % (os.getpid(), tag))
    os.mkdir(group)
    try:
        limit_file = "memory.limit_in_bytes" if version == 1 else "memory.max"
        with open(os.path.join(group, limit_file), "w") as f:
            f.write(str(limit_bytes))
        yield group
    finally:
        for _ in range(50):  # the job's processes leave the group as they exit
            try:
                os.rmdir(group)
                break
            except OSError:
                time.sleep(0.1)


def run_in_group(sh, group, argv, np, env=None):
    """sh.run, with mpiexec (and so every rank) started inside ``group``; ``env``: settings
    added to the environment."""
    cmd = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', group, sh.mpiexec, "-n", str(np)] + \
        sh.flags + [sh.binary] + [str(a) for a in argv]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(sh.env, **(env or {})),
                           timeout=sh.timeout, universal_newlines=True, errors="replace")
        return Result(cmd, p.returncode, p.stdout, p.stderr, time.monotonic() - t0, False)
    except subprocess.TimeoutExpired as e:
        return Result(cmd, None, e.stdout or "", e.stderr or "", time.monotonic() - t0, True)


def cgroup_cases(suite, sh, d, version):
    name = "cgroup_v%d" % version
    if os.geteuid() != 0:
        suite.skip(name, "making a cgroup needs root")
        return
    if version == 1 and cgroup_v1_parent() is None:
        suite.skip(name, "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory")
        return
    if version == 2:
        parent, why = cgroup_v2_parent()
        if parent is None:
            suite.skip(name, why)
            return
    src = os.path.join(d, "cg.h5")
    with h5py.File(src, "w") as f:
        # 1 GiB declared, nothing written: the file stays small, reading it would not.
        f.create_dataset("tensor", shape=(128 * MiB, 2), dtype=np.float32)
        f["small"] = np.zeros((64, 2), np.float32)
        f["idx"] = np.array([[0], [3]], np.int32)
        f["upd"] = np.ones((2, 2), np.float32)
    limit = 256 * MiB

    def scatter_add_in_group(tensor, out, tag):
        with memory_cgroup(version, limit, tag) as group:
            return run_in_group(sh, group, ["tensor-scatter-add", "--tensor", ref(src, tensor), "--indices",
                                            ref(src, "/idx"), "--updates", ref(src, "/upd"), "--out",
                                            ref(out, "/o")], sh.np)

    def too_big():
        out = os.path.join(d, "cg_out_%d.h5" % version)
        res = scatter_add_in_group("/tensor", out, "big")
        expect_error(suite, res, 2, [ref(src, "/tensor"), "needs ", "cgroup v%d memory limit" % version,
                                     str(limit) + " bytes", "more ranks"])
        if sh.np > 1:
            suite.check("shared by %d ranks on this node" % sh.np in res.stderr, "no mention of the ranks", res)
        suite.check(file_state(out) is None, "the output was written", res)

    def fits():
        out = os.path.join(d, "cg_ok_%d.h5" % version)
        res = scatter_add_in_group("/small", out, "ok")
        suite.require(res.rc == 0, "a small job in the group failed", res)
        with h5py.File(out, "r") as f:
            got = f["o"][()]
        want = np.zeros((64, 2), np.float32)
        want[[0, 3]] += 1
        suite.check(np.array_equal(got, want), "wrong output", res)

    def big_deck():
        # A million inline values (5 MB of YAML) cost yaml-cpp's tree and the values read
        # from it more than the group has: refused before the tree is built.
        deck = os.path.join(d, "cg_deck_%d.yaml" % version)
        with open(deck, "w") as f:
            f.write(inline_deck("[" + ", ".join(["0.5"] * 1000000) + "]", "cg_deck_out.h5"))
        # Room for every rank to read the deck (more under a sanitizer), not for the tree.
        with memory_cgroup(version, 2 * limit, "deck") as group:
            res = run_in_group(sh, group, ["run", deck], sh.np)
        expect_error(suite, res, 2, [deck + ": reading its 1000", "YAML nodes", "cgroup v%d memory limit" % version])

    def dense_output_beyond_the_limit():
        # A dense scatter (more than twice as many updates as rows) holds its output whole.
        # Its inputs are mapped from the page cache (not the job's memory); its 192 MiB output
        # does not fit the 160 MiB group: refused at once (exit 2, the limit named), nothing
        # written.
        rows, width = 3 * MiB // 2, 128
        dense = os.path.join(d, "cg_dense.h5")
        rng = np.random.default_rng(5)
        write_h5(dense, {"/idx": rng.integers(0, rows, size=(2 * rows + 1, 1)).astype(np.int64),
                         "/upd": np.ones((2 * rows + 1, width), np.uint8)})
        out = os.path.join(d, "cg_dense_out_%d.h5" % version)
        with memory_cgroup(version, 160 * MiB, "dense") as group:
            res = run_in_group(sh, group, ["scatter-nd", "--indices", ref(dense, "/idx"), "--updates",
                                           ref(dense, "/upd"), "--shape", "%d,%d" % (rows, width), "--out",
                                           ref(out, "/o")], sh.np)
        expect_error(suite, res, 2, ["needs ", "cgroup v%d memory limit" % version], max_seconds=60)
        suite.check(file_state(out) is None, "the output was written", res)
        os.remove(dense)

    def compressed_output_beyond_the_limit():
        # A gzip output is made whole, and HDF5 compresses every chunk of a rank's rows in its
        # own memory before a collective write: about the rows' bytes again. 64 MiB of rows
        # fit the 112 MiB group; with HDF5's buffers they do not: refused before the write
        # (exit 2, the limit named), nothing written. The job was OOM-killed in the write.
        rows = MiB
        params = os.path.join(d, "cg_gz.h5")
        rng = np.random.default_rng(6)
        write_h5(params, {"/p": rng.standard_normal((rows, 16)).astype(np.float32),
                          "/i": rng.integers(0, rows, size=(rows, 1)).astype(np.int64)})
        out = os.path.join(d, "cg_gz_out_%d.h5" % version)
        with memory_cgroup(version, 112 * MiB, "gz") as group:
            res = run_in_group(sh, group, ["gather-nd", "--params", ref(params, "/p"), "--indices", ref(params, "/i"),
                                           "--out", ref(out, "/o"), "--compression", "gzip=1"], 1)
        expect_error(suite, res, 2, ["HDF5's buffers to compress", "cgroup v%d memory limit" % version],
                     max_seconds=60)
        suite.check(file_state(out) is None, "the output was written", res)
        os.remove(params)

    def route_beyond_the_limit(settings):
        # A scatter of as many updates as rows streams its 192 MiB output (it is never held),
        # and fits the 160 MiB group on one rank. On several, the updates routed to each rank's
        # rows are more than its share: refused when the route is about to receive them (exit
        # 2, the limit named), nothing written; these jobs were OOM-killed at the route
        # before (its buffers and lists were not counted, and each rank compared its request
        # with all of the group's memory left, which the others were taking at that moment).
        # The same with SHARDOPS_REUSE_MEMORY_MB=0: no scratch array is kept for reuse, so none
        # counts as held, and the refusal comes from the check against this rank's share of
        # the memory left in the group now, which sees the scratch in use. On several ranks the
        # inputs are copied, not mapped (SHARDOPS_MAP_INPUTS=0): mapped on ranks of one node,
        # the updates are read where the file's pages are and no route is made
        # (scatter_reads_replicas).
        rows, width = 3 * MiB // 2, 128
        src = os.path.join(d, "cg_route.h5")
        rng = np.random.default_rng(6)
        write_h5(src, {"/idx": rng.integers(0, rows, size=(rows, 1)).astype(np.int64),
                       "/upd": np.ones((rows, width), np.uint8)})
        out = os.path.join(d, "cg_route_out_%d.h5" % version)
        with memory_cgroup(version, 160 * MiB, "route") as group:
            res = run_in_group(sh, group, ["scatter-nd", "--indices", ref(src, "/idx"), "--updates",
                                           ref(src, "/upd"), "--shape", "%d,%d" % (rows, width), "--out",
                                           ref(out, "/o")], sh.np,
                               settings if sh.np == 1 else dict(settings, SHARDOPS_MAP_INPUTS="0"))
        if sh.np == 1:
            suite.check(res.rc == 0, "one rank: the streamed job did not run in the group", res)
            if res.rc == 0:
                with h5py.File(out, "r") as f:
                    suite.check(f["o"].shape == (rows, width), "wrong output shape", res)
                os.remove(out)
        else:
            expect_error(suite, res, 2, ["needs ", "cgroup v%d memory limit" % version], max_seconds=60)
            suite.check(file_state(out) is None, "the output was written", res)
        os.remove(src)

    def partitions_beyond_the_limit():
        # Every partition is an output tensor and a dataset, which cost memory beside their rows
        # (the tensor, its record, HDF5's objects): counted before any work, a count the group
        # cannot hold is refused at once (exit 2, the limit named), nothing written. With each
        # counted as less than it took, these jobs passed the check and were OOM-killed in the
        # write phase. At one rank, a tenth of that count runs in the same group.
        parts = os.path.join(d, "cg_parts.h5")
        write_h5(parts, {"/d": np.arange(12, dtype=np.float32), "/p": (np.arange(12) % 4).astype(np.int32)})

        def partition(n, tag):
            out = os.path.join(d, "cg_parts_out_%d_%s.h5" % (version, tag))
            with memory_cgroup(version, 160 * MiB, "parts" + tag) as group:
                res = run_in_group(sh, group, ["dynamic-partition", "--data", ref(parts, "/d"), "--partitions",
                                               ref(parts, "/p"), "--num-partitions", n, "--out", ref(out, "/g")],
                                   sh.np)
            return out, res

        out, res = partition(150000, "many")
        expect_error(suite, res, 2, ["--num-partitions 150000 (one output tensor each) needs",
                                     "cgroup v%d memory limit" % version], max_seconds=30)
        suite.check(file_state(out) is None, "the output was written", res)
        if sh.np == 1:
            out, res = partition(15000, "some")
            suite.require(res.rc == 0, "15000 partitions did not run in the group", res)
            with h5py.File(out, "r") as f:
                suite.check(len(f["g"]) == 15000 and list(f["g"]["3"][()]) == [3, 7, 11],
                            "wrong partitions", res)
            os.remove(out)
        os.remove(parts)

    def scratch_near_the_limit():
        # Three ranks sharing a group a little above what a 2^21-row scatter-nd or gather-nd
        # needs: each job fits or is refused (exit 2), never killed. The route's destinations
        # and lists and the output's piece lists were made unchecked after the last check
        # passed, and the ranks' libraries had no reserve: exit 137 at 340-370 MB (scatter)
        # and 300-350 MB (gather), with the inputs in the page cache of this process's group.
        rows = 1 << 21
        big = os.path.join(d, "cg_scratch.h5")
        rng = np.random.default_rng(7)
        write_h5(big, {"/idx": rng.integers(0, rows, (rows, 1), dtype=np.int32),
                       "/rows": np.ones((rows, 16), np.float32)})
        for op, argv, limits in (
                ("scatter-nd", ["--indices", ref(big, "/idx"), "--updates", ref(big, "/rows"), "--shape",
                                "%d,16" % rows], (340, 350)),
                ("gather-nd", ["--params", ref(big, "/rows"), "--indices", ref(big, "/idx")], (300, 350))):
            for mb in limits:
                out = os.path.join(d, "cg_scratch_out_%d_%s_%d.h5" % (version, op, mb))
                with memory_cgroup(version, mb * MiB, "scratch%s%d" % (op, mb)) as group:
                    res = run_in_group(sh, group, [op] + argv + ["--out", ref(out, "/o"), "-q"], 3)
                suite.check(res.rc in (0, 2), "%s at 3 ranks in %d MB: exit %s, expected 0 or 2" % (op, mb, res.rc), res)
                if res.rc == 2:
                    suite.check("needs " in res.stderr and file_state(out) is None, "%s: refused unclearly" % op, res)
                if os.path.exists(out):
                    os.remove(out)
        os.remove(big)

    suite.case(name + "_input_beyond_the_limit", too_big)
    suite.case(name + "_scratch_near_the_limit", scratch_near_the_limit)
    suite.case(name + "_partitions_beyond_the_limit", partitions_beyond_the_limit)
    suite.case(name + "_route_beyond_the_limit", lambda: route_beyond_the_limit({}))
    suite.case(name + "_route_beyond_the_limit_without_reuse",
               lambda: route_beyond_the_limit({"SHARDOPS_REUSE_MEMORY_MB": "0"}))
    suite.case(name + "_dense_output_beyond_the_limit", dense_output_beyond_the_limit)
    suite.case(name + "_compressed_output_beyond_the_limit", compressed_output_beyond_the_limit)
    suite.case(name + "_small_job_runs", fits)
    suite.case(name + "_deck_beyond_the_limit", big_deck)


# ---------------------------------------------------------------------------------------------
# Counts and decks

BILLION_LAUGHS = """tensors:
  a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
  h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
  i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
  x: {value: [*i, *i, *i, *i, *i, *i, *i, *i, *i, *i]}
steps:
  - {op: add, x: x, y: 1, out: y}
outputs:
  y: out.h5:/y
"""

DUPLICATE_OUTPUT = """tensors:
  x: {value: [1, 2, 3]}
steps:
  - {op: add, x: x, y: 1, out: y}
outputs:
  y: out.h5:/y
  y: out.h5:/y2
"""


def nested(depth):
    v = "1"
    for _ in range(depth):
        v = "[" + v + "]"
    return v


def inline_deck(value, out="out.h5"):
    return ("tensors:\n  x: {value: %s}\nsteps:\n  - {op: add, x: x, y: 1, out: y}\noutputs:\n  y: %s:/y\n"
            % (value, out))


PARTITION_DECK = """tensors:
  d: {value: [1, 2, 3]}
  p: {value: [0, 0, 0]}
steps:
  - {op: dynamic_partition, data: d, partitions: p, num_partitions: %d, out: q}
outputs:
  q/0: out.h5:/q
"""


def deck_case(suite, sh, d, name, text, texts):
    path = os.path.join(d, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    res = sh.run(["run", path], timeout=60)
    expect_error(suite, res, 2, [path + ":"] + texts, max_seconds=30)
    suite.check(file_state(os.path.join(d, "out.h5")) is None, "the deck wrote its output", res)


def count_and_deck_cases(suite, sh, d):
    src = os.path.join(d, "in.h5")
    for n in (2147483647, 1000000000):
        suite.case("num_partitions_%d" % n, lambda n=n: expect_error(
            suite, sh.run(["dynamic-partition", "--data", ref(src, "/d"), "--partitions", ref(src, "/p"),
                           "--num-partitions", n, "--out", ref(os.path.join(d, "parts.h5"), "/g")]),
            2, ["--num-partitions %d (one output tensor each) needs" % n, "memory budget"], max_seconds=30))
    suite.case("deck_alias_expansion", deck_case, suite, sh, d, "laughs", BILLION_LAUGHS, ["laughs.yaml:", ": with this use of alias *", "needs "])
    suite.case("deck_duplicate_key", deck_case, suite, sh, d, "dup", DUPLICATE_OUTPUT,
               ["dup.yaml:7: duplicate key 'y' (first at line 6)"])
    suite.case("deck_rank_33_value", deck_case, suite, sh, d, "rank33", inline_deck(nested(33)),
               ["rank33.yaml:2: tensor 'x': value has more than 32 dimensions"])
    suite.case("deck_rank_32_value_runs", lambda: suite.check(
        sh.run(["run", write_deck(d, "rank32", inline_deck(nested(32), "out32.h5"))]).rc == 0, "a 32-dimensional value failed"))
    suite.case("deck_deep_nesting", deck_case, suite, sh, d, "deep", inline_deck(nested(100000)),
               ["deep.yaml:2: nested more than 36 levels deep"])
    suite.case("deck_num_partitions", deck_case, suite, sh, d, "parts", PARTITION_DECK % 2147483647,
               ["num_partitions 2147483647"])
    suite.case("deck_shape_of_33_dimensions", deck_case, suite, sh, d, "shape33",
               "steps:\n  - {op: random_uniform, shape: [%s], out: r}\noutputs:\n  r: out.h5:/r\n"
               % ",".join(["1"] * 33), ["'shape': 33 dimensions, more than the 32"])
    suite.case("shape_of_33_dimensions", lambda: expect_error(suite, sh.run(
        ["scatter-nd", "--indices", ref(src, "/idx"), "--updates", ref(src, "/upd"), "--shape", ",".join(["1"] * 33),
         "--out", ref(os.path.join(d, "o33.h5"), "/o")]), 2, ["33 dimensions, more than the 32"]))


def write_deck(d, name, text):
    path = os.path.join(d, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


# ---------------------------------------------------------------------------------------------
# Exit codes and messages


def message_cases(suite, sh, d):
    src = os.path.join(d, "in.h5")

    def scatter_add(tensor, out, *extra):
        return ["tensor-scatter-add", "--tensor", tensor, "--indices", ref(src, "/idx"), "--updates",
                ref(src, "/upd"), "--out", out] + list(extra)

    loop = os.path.join(d, "loop.h5")
    os.symlink("loop.h5", loop)
    suite.case("symlink_loop_output", lambda: expect_error(
        suite, sh.run(scatter_add(ref(src, "/t"), ref(loop, "/o"))), 2, ["loop of symbolic links"]))
    suite.case("symlink_loop_input", lambda: expect_error(
        suite, sh.run(scatter_add(ref(loop, "/t"), ref(os.path.join(d, "o.h5"), "/o"))), 2,
        ["loop of symbolic links"]))

    def dangling_link_output():
        # A link to a file that does not exist yet: the new file is made where it points
        # (as a shell's redirection does), and the link stays a link.
        link, target = os.path.join(d, "dangling.h5"), os.path.join(d, "made", "via_link.h5")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.path.join("made", "via_link.h5"), link)
        res = sh.run(scatter_add(ref(src, "/t"), ref(link, "/o")))
        suite.check(res.rc == 0, "exit code %s, expected 0" % res.rc, res)
        suite.check(os.path.islink(link) and os.path.isfile(target), "the link was replaced or nothing was made", res)
        if os.path.isfile(target):
            with h5py.File(target, "r") as f:
                suite.check(list(f.keys()) == ["o"], "the file made through the link holds %s" % list(f.keys()), res)

    suite.case("dangling_link_output", dangling_link_output)

    def read_only():
        target = os.path.join(d, "ro.h5")
        write_h5(target, {"/o": np.arange(3)}, mode="w")
        os.chmod(target, 0o444)
        before = file_state(target)
        res = sh.run(scatter_add(ref(src, "/t"), ref(target, "/o"), "--overwrite"))
        expect_error(suite, res, 3, ["read-only (mode 0444)"])
        suite.check(file_state(target) == before and stat.S_IMODE(os.stat(target).st_mode) == 0o444,
                    "the read-only file was replaced", res)

    suite.case("read_only_target", read_only)

    def append_only():
        # chattr +a: no mode bit shows it, and root passes access(). The job failed opening
        # the file ("truncated or corrupt file, or open in another program?") and left a
        # journal beside it each time.
        target = os.path.join(d, "append_only.h5")
        write_h5(target, {"/o": np.arange(3)}, mode="w")
        if subprocess.run(["chattr", "+a", target], capture_output=True).returncode != 0:
            suite.skip("append_only_target", "the file system takes no chattr +a")
            return
        try:
            before = file_state(target)
            res = sh.run(scatter_add(ref(src, "/t"), ref(target, "/new")))
            expect_error(suite, res, 3, ["append-only (chattr +a"])
            suite.check(file_state(target) == before, "the append-only file changed", res)
            left = [n for n in os.listdir(d) if n.startswith(".append_only.h5.")]
            suite.check(left == [], "left %s" % left, res)
        finally:
            subprocess.run(["chattr", "-a", target], capture_output=True)

    suite.case("append_only_target", append_only)

    def newline_in_the_output_name():
        # The summary printed one "wrote" line per output; a newline in the file's name split it.
        target = os.path.join(d, "two\nlines.h5")
        res = sh.run(scatter_add(ref(src, "/t"), ref(target, "/o")))
        suite.check(res.rc == 0 and "  wrote %s:/o " % os.path.join(d, "two\\nlines.h5") in res.stdout,
                    "the summary of an output named with a newline: %r" % res.stdout, res)

    suite.case("newline_in_the_output_name", newline_in_the_output_name)

    def removed_current_folder():
        # A relative output from a current folder that was removed: "cannot create the lock
        # file '.rel.h5.shardops-lock': No such file or directory" did not say why. Without
        # mpiexec (one process): Open MPI's mpirun itself stops there ("Unable to get the current
        # working directory").
        gone = os.path.join(d, "gone")
        os.mkdir(gone)
        argv = [sh.binary] + scatter_add(ref(src, "/t"), "rel.h5:/o")
        p = subprocess.run(["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", gone] + argv,
                           capture_output=True, text=True, timeout=sh.timeout, env=sh.env)
        suite.check(p.returncode == 3 and "is a relative path, and the current folder cannot be found" in p.stderr,
                    "a relative output from a removed folder: exit %s, %r" % (p.returncode, p.stderr[-500:]))

    suite.case("removed_current_folder", removed_current_folder)

    def same_size_message():
        # 2^61 + 1 rows of 2 float32: the elements fit int64, the bytes do not; one
        # rank's block would fit, so only a check of the whole shape says the same always.
        # int64 indices: int32 ones index no more than 2^31 - 1 rows (TF's own message).
        argv = ["scatter-nd", "--indices", ref(src, "/idx64"), "--updates", ref(src, "/upd"), "--shape",
                "2305843009213693953,2", "--out", ref(os.path.join(d, "big.h5"), "/o")]
        one = expect_error(suite, sh.run(argv, np=1), 2, ["[2305843009213693953,2]", "more bytes than fit in int64"])
        many = expect_error(suite, sh.run(argv), 2, [])
        suite.check(one == many, "the message differs between 1 and %d ranks:\n  %s\n  %s" % (sh.np, one, many))

    suite.case("too_large_shape_same_message", same_size_message)

    def missing_filter():
        plugins = os.path.join(d, "no-plugins")
        os.makedirs(plugins, exist_ok=True)
        res = sh.run(scatter_add(ref(src, "/lzf"), ref(os.path.join(d, "o.h5"), "/o")),
                     env={"HDF5_PLUGIN_PATH": plugins})
        expect_error(suite, res, 3, [ref(src, "/lzf"), "filter 32000 (lzf)", "hdf5-plugin-lzf"])

    suite.case("missing_filter_named", missing_filter)


# ---------------------------------------------------------------------------------------------
# Open files (`ulimit -n`)

INPUT_FILES = 60
FEW_DESCRIPTORS = 48  # what mpirun and the ranks need, and a few more: fewer than the input files


def file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def address_space_cases(suite, sh, d):
    """`ulimit -v` (RLIMIT_AS) on the ranks at limits where the route's and the kernels'
    allocations fail: exit 2, "out of memory", on every rank, nothing left. They were exit 1,
    "internal error", with Kokkos' "Traceback functionality not available" in the message
    (a failure while reading was exit 2 already). Where Open MPI's own start-up fails at a
    limit (no shardops line), that limit says nothing about shardops."""
    src = os.path.join(d, "vm.h5")
    rng = np.random.default_rng(3)
    rows = 1 << 19
    write_h5(src, {"/i": rng.integers(0, rows, (2 * rows, 1)).astype(np.int64),
                   "/u": rng.standard_normal((2 * rows, 16)).astype(np.float32)}, mode="w")
    out_dir = os.path.join(d, "vm-out")
    os.makedirs(out_dir, exist_ok=True)

    def limited():
        seen = []
        for mib in (150, 175, 225, 250, 275):
            out = os.path.join(out_dir, "o.h5")
            res = sh.run(["scatter-nd", "--indices", ref(src, "/i"), "--updates", ref(src, "/u"), "--shape",
                          "%d,16" % rows, "--out", ref(out, "/s"), "-q"], np=2,
                         rlimits={resource.RLIMIT_AS: mib * MiB})
            suite.require(not res.timed_out, "hung at ulimit -v of %d MiB" % mib, res)
            suite.check("internal error" not in res.stderr, "an internal error at %d MiB" % mib, res)
            if error_lines(res.stderr):
                suite.check(res.rc == 2, "exit %s at %d MiB, expected 2" % (res.rc, mib), res)
                suite.check("Traceback" not in res.stderr, "Kokkos' trailer in the message", res)
                seen.append("out of memory" in res.stderr)
            suite.check(os.listdir(out_dir) in ([], ["o.h5"]), "left %s" % os.listdir(out_dir), res)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(out)
        suite.check(any(seen), "no limit made the route or the kernels fail (%s)" % seen)

    suite.case("address_space_limit", limited)

    # Every update to one row: only its owner, the last rank, receives rows, so only its
    # allocation for them fails. It used to wait in the error agreement while the others
    # waited for it in the exchange, until the job was killed. (Below these limits HDF5 1.10
    # crashes opening a file, a malloc it does not check.)
    skewed = os.path.join(d, "vm-skewed.h5")
    rows, updates = 1 << 20, 3 << 20
    write_h5(skewed, {"/t": np.zeros((rows, 4), np.float32), "/i": np.full((updates, 1), rows - 1, np.int64),
                      "/u": np.ones((updates, 4), np.float32)}, mode="w")

    def one_rank_short():
        failed = []
        for mib in (300, 350, 400, 450, 500):
            out = os.path.join(out_dir, "o.h5")
            res = sh.run(["tensor-scatter-add", "--tensor", ref(skewed, "/t"), "--indices", ref(skewed, "/i"),
                          "--updates", ref(skewed, "/u"), "--out", ref(out, "/s"), "-q"], np=4, timeout=120,
                         env={"SHARDOPS_MAP_INPUTS": "0"}, rlimits={resource.RLIMIT_AS: mib * MiB})
            suite.require(not res.timed_out, "hung at ulimit -v of %d MiB" % mib, res)
            if error_lines(res.stderr):
                suite.check(res.rc == 2, "exit %s at %d MiB, expected 2" % (res.rc, mib), res)
                failed.append(mib)
            else:
                suite.check(res.rc == 0, "exit %s at %d MiB without a message" % (res.rc, mib), res)
                if res.rc == 0:
                    expected = np.zeros((rows, 4), np.float32)
                    expected[rows - 1] = updates
                    suite.check(np.array_equal(read_h5(out, "/s"), expected), "wrong sums at %d MiB" % mib, res)
            suite.check(os.listdir(out_dir) in ([], ["o.h5"]), "left %s" % os.listdir(out_dir), res)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(out)
        suite.check(failed, "no limit made the job fail")

    suite.case("address_space_limit_on_one_rank", one_rank_short)


def descriptor_cases(suite, sh, d):
    files = []
    for k in range(INPUT_FILES):
        path = os.path.join(d, "part%d.h5" % k)
        write_h5(path, {"/i": np.array([INPUT_FILES - 1 - k], np.int32), "/d": np.full((1, 3), k, np.float32)},
                 mode="w")
        files.append(path)

    def stitch_of_many_files():
        # Each input file is opened for its indices and again for its data, while no more
        # descriptors are left than there are files.
        out = os.path.join(d, "stitched.h5")
        argv = (["dynamic-stitch", "--indices"] + [ref(f, "/i") for f in files] + ["--data"] +
                [ref(f, "/d") for f in files] + ["--out", ref(out, "/m"), "-q"])
        res = sh.run(argv, rlimits={resource.RLIMIT_NOFILE: FEW_DESCRIPTORS})
        suite.check(res.rc == 0, "exit code %s, expected 0" % res.rc, res)
        if res.rc == 0:
            with h5py.File(out, "r") as f:
                got = f["m"][:, 0]
            suite.check(list(got) == list(range(INPUT_FILES - 1, -1, -1)), "wrong rows: %s" % list(got), res)

    suite.case("stitch_of_more_files_than_descriptors", stitch_of_many_files)

    def outputs_beyond_descriptors():
        # Each output file is held open until the job's commit: past the limit, exit 3 naming it.
        outs = os.path.join(d, "many-outputs")
        os.makedirs(outs, exist_ok=True)
        steps = "".join("  - {op: dynamic_partition, data: data, partitions: p, num_partitions: 1, out: v%d}\n" % k
                        for k in range(INPUT_FILES))
        outputs = "".join("  v%d/0: %s:/v\n" % (k, os.path.join(outs, "o%d.h5" % k)) for k in range(INPUT_FILES))
        deck = write_deck(d, "many_outputs", "tensors:\n  data: {value: [1, 2, 3]}\n  p: {value: [0, 0, 0]}\n"
                          "steps:\n" + steps + "outputs:\n" + outputs)
        res = sh.run(["run", deck], rlimits={resource.RLIMIT_NOFILE: FEW_DESCRIPTORS + 16})
        expect_error(suite, res, 3, ["file descriptors left", "`ulimit -n`, is %d" % (FEW_DESCRIPTORS + 16)])
        suite.check(os.listdir(outs) == [], "left %s" % os.listdir(outs), res)

    suite.case("outputs_beyond_descriptors", outputs_beyond_descriptors)

    def existing_outputs_beyond_descriptors():
        # Outputs into existing files, which rank 0 holds more descriptors for (locks,
        # journals): the ranks ran out at different files, inside MPI-IO's open, and the
        # job's abort waited without end in a collective close. Now exit 3 on every rank,
        # each file as it was.
        outs = os.path.join(d, "many-existing")
        os.makedirs(outs, exist_ok=True)
        names = [os.path.join(outs, "o%d.h5" % k) for k in range(20)]
        steps = "".join("  - {op: add, x: a, y: %d, out: r%d}\n" % (k, k) for k in range(len(names)))
        outputs = "".join("  r%d: %s:/x\n" % (k, n) for k, n in enumerate(names))
        deck = write_deck(d, "many_existing", "tensors:\n  a: {value: [1.0, 2.0]}\nsteps:\n" + steps + "outputs:\n" +
                          outputs)
        for limit in (FEW_DESCRIPTORS, FEW_DESCRIPTORS + 8, FEW_DESCRIPTORS + 16):
            for n in names:
                write_h5(n, {"/y": np.arange(3, dtype=np.int32)}, mode="w")
            before = {n: file_bytes(n) for n in names}
            res = sh.run(["run", deck], rlimits={resource.RLIMIT_NOFILE: limit})
            suite.require(not res.timed_out, "limit %d: hung" % limit, res)
            expect_error(suite, res, 3, ["file descriptors left"])
            suite.check(all(file_bytes(n) == before[n] for n in names), "limit %d: an existing file changed" % limit,
                        res)
            suite.check(sorted(os.listdir(outs)) == sorted(os.path.basename(n) for n in names),
                        "limit %d: left %s" % (limit, os.listdir(outs)), res)

    suite.case("existing_outputs_beyond_descriptors", existing_outputs_beyond_descriptors)


def main():
    args = parse_args(__doc__.splitlines()[0], default_np=3)
    suite = Suite("e2e_limits_np_%d" % args.np, args)
    sh = Shardops(args)
    with work_dir(args, "limits") as d:
        src = os.path.join(d, "in.h5")
        with h5py.File(src, "w") as f:
            f["d"] = np.arange(12, dtype=np.float32).reshape(6, 2)
            f["p"] = np.zeros(6, np.int32)
            f["t"] = np.zeros((8, 2), np.float32)
            f["idx"] = np.array([[0], [3]], np.int32)
            f["idx64"] = np.array([[0], [3]], np.int64)
            f["upd"] = np.ones((2, 2), np.float32)
            f.create_dataset("lzf", data=np.zeros((8, 2), np.float32), compression="lzf")
        for version in (1, 2):
            cgroup_cases(suite, sh, d, version)
        count_and_deck_cases(suite, sh, d)
        message_cases(suite, sh, d)
        if args.np == 2:  # its jobs run at 2 ranks whatever the suite's count
            address_space_cases(suite, sh, d)
        descriptor_cases(suite, sh, d)
    rc = suite.finish(sh)
    if rc == 0 and suite.passed == 0:
        return SKIP_RC
    return rc


if __name__ == "__main__":
    sys.exit(main())
