"""Runs the command-line session of README.md (between <!-- readme-example:begin/end -->) as
written, in a scratch copy of the repository's inputs/ and scripts/, then checks its results
with NumPy: a README whose example does not work fails the suite. Also checks that every
relative link of README.md and docs/*.md names a file that exists (doc_links.py).

Each line runs in a shell of its own after the block's `export` lines before it, with the
shardops binary under test first on PATH and nothing else of the test's own environment that
the README sets itself (running as root, more ranks than cores).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_links  # noqa: E402
import e2e_common as e2e  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def readme_commands():
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    m = re.search(r"<!-- readme-example:begin -->\s*```sh\n(.*?)```\s*<!-- readme-example:end -->", text, re.S)
    if not m:
        raise SystemExit("README.md has no readme-example block")
    return [line for line in m.group(1).splitlines() if line.strip() and not line.startswith("#")]


def session(t, sh):
    work = t.d
    shutil.copytree(os.path.join(REPO, "inputs"), os.path.join(work, "inputs"),
                    ignore=shutil.ignore_patterns("out", "data"))
    os.symlink(os.path.join(REPO, "scripts"), os.path.join(work, "scripts"))
    bindir = os.path.join(work, "bin")
    os.mkdir(bindir)
    os.symlink(sh.binary, os.path.join(bindir, "shardops"))
    with open(os.path.join(bindir, "python3"), "w") as f:
        f.write("#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n")
    os.chmod(os.path.join(bindir, "python3"), 0o755)
    readme_sets = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_rmaps_base_oversubscribe")
    env = {k: v for k, v in sh.env.items() if k not in readme_sets}
    exports = ""
    for line in readme_commands():
        if line.startswith("export "):
            exports += line + "\n"
        # The README's PATH line points at the checkout's build; the test's binary comes first.
        script = "%s%s\nexport PATH=%s:$PATH\n" % (exports, line, shlex.quote(bindir))
        if not line.startswith("export "):
            script = "%sexport PATH=%s:$PATH\n%s\n" % (exports, shlex.quote(bindir), line)
        p = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
        t.suite.require(p.returncode == 0, "README line failed (exit %d): %s\n%s\n%s" % (
            p.returncode, line, p.stdout[-2000:], p.stderr[-2000:]))
        if line.startswith("shardops ls"):
            t.suite.check("/merged" in p.stdout and "/parts/3" in p.stdout, "ls printed:\n%s" % p.stdout)
    inp, out = os.path.join(work, "in.h5"), os.path.join(work, "out.h5")
    data = e2e.read_h5(inp, "/data")
    e2e.same_array(t.suite, "merged", e2e.read_h5(out, "/merged"), data)
    idx, upd = e2e.read_h5(inp, "/indices"), e2e.read_h5(inp, "/updates")
    e2e.same_array(t.suite, "rows", e2e.read_h5(out, "/rows"), data[idx[:5000, 0]])
    parts = e2e.read_h5(inp, "/partition")
    for p in range(4):
        e2e.same_array(t.suite, "parts/%d" % p, e2e.read_h5(out, "/parts/%d" % p), data[parts == p])
    sums = np.zeros((100000, 16), np.float32)
    np.add.at(sums, idx[:, 0], upd)
    got = e2e.read_h5(out, "/sums")
    t.suite.check(np.allclose(got, sums, atol=1e-4), "sums differ from NumPy's beyond float32 rounding")
    t.suite.check(os.path.exists(os.path.join(work, "inputs", "out", "pipeline.h5")), "the deck wrote no output")


def links(t, sh):
    broken = doc_links.broken_links(REPO)
    t.suite.require(not broken, "broken links in README.md or docs/:\n" + "\n".join(broken))


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], 2)
    sh = e2e.Shardops(args)
    suite = e2e.Suite("e2e readme", args)

    e2e.run_cases(suite, args, sh, "readme", [("readme_session", session), ("doc_links", links)])
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
