#!/usr/bin/python3
"""A host lost mid-job on the namespace cluster (ctest cluster_host_loss; docs/clusters.md).

Runs under tests/cluster/with_cluster.sh, which made the hosts h1..h3; shardops runs through
scripts/cluster/ns-mpirun.sh (mpirun on h1, two ranks per host). For each way of losing h2
-- its link cut (`ip link set eth0 down` inside h2), every process on it SIGKILLed, every
process on it SIGSTOPped -- in each of the phases read, route (the exchange) and write, the
job must

  * end within the documented bound after the loss (SIGKILL: the daemon's connection closes,
    LOSS_BOUND_KILL; link down: the launcher's TCP keepalive, LOSS_BOUND_LINK; SIGSTOP: a
    stopped host still answers TCP, so only the job's time limit, MPIEXEC_TIMEOUT, ends it),
  * exit non-zero,
  * leave the existing output file byte for byte as it was,
  * leave no process on the surviving hosts and no temporary file beside the output (the
    surviving ranks remove it on mpirun's SIGTERM), and the next job writing the file (on the
    mended cluster) must succeed and keep the file's earlier datasets;

and h2 frozen with its rows written in place, then woken after the next job committed, must
leave that job's file alone.

SHARDOPS_TEST_PAUSE=PHASE:SECONDS makes every rank wait at the start of PHASE, so the loss
lands in that phase; the ranks then go on and need h2's ranks.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import numpy as np  # noqa: E402

import e2e_common as e2e  # noqa: E402
from test_output_safety import Job, gather_args, leftovers, make_existing, make_inputs  # noqa: E402

# The bounds docs/clusters.md states for this setup (ns-mpirun.sh's keepalive: 5 s idle, then
# 3 probes 1 s apart), each with 6 s for mpirun to end the job on a loaded 2-core machine.
KEEPALIVE_BOUND = 5 + 3 * 1
LOSS_BOUND_KILL = 6.0
LOSS_BOUND_LINK = KEEPALIVE_BOUND + 6.0
JOB_TIME_LIMIT = 25  # MPIEXEC_TIMEOUT of every job here: far above a healthy run's few seconds
LOSS_BOUND_STOP_FROM_START = JOB_TIME_LIMIT + 6.0
PAUSE = 3
LOST = "h2"
PHASES = ["read", "route", "write"]
FAULTS = ["link_down", "sigkill", "sigstop"]


class Cluster:
    """The hosts of $SHARDOPS_CLUSTER_DIR/hosts (name, namespace, address)."""

    def __init__(self):
        with open(os.path.join(os.environ["SHARDOPS_CLUSTER_DIR"], "hosts")) as f:
            rows = [line.split() for line in f if line.strip()]
        self.ns = {name: ns for name, ns, _ in rows}

    def pids(self, host):
        out = subprocess.run(["ip", "netns", "pids", self.ns[host]], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout
        return [int(p) for p in out.split()]

    def signal_all(self, host, sig):
        for pid in self.pids(host):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def link(self, host, state):
        subprocess.run(["ip", "-n", self.ns[host], "link", "set", "eth0", state], check=True)

    def wait_empty(self, host, seconds):
        end = time.monotonic() + seconds
        while self.pids(host) and time.monotonic() < end:
            time.sleep(0.1)
        return self.pids(host)

    def mend(self, host):
        """Ends whatever is left on host (a lost host is rebooted) and plugs its link back in."""
        for _ in range(50):
            if not self.pids(host):
                break
            self.signal_all(host, signal.SIGKILL)  # a stopped process dies of SIGKILL too
            time.sleep(0.1)
        self.link(host, "up")


def lose_host(t, sh, cluster, fault, phase):
    inp, expected = make_inputs(t.d, rows=8192, index_rows=4096)
    out = os.path.join(t.d, "target.h5")
    before = make_existing(out)
    env = {"SHARDOPS_TEST_PAUSE": "%s:%d" % (phase, PAUSE), "MPIEXEC_TIMEOUT": str(JOB_TIME_LIMIT)}
    started = time.monotonic()
    job = Job(sh, gather_args(inp, e2e.ref(out, "/g")), sh.np, env=env)
    try:
        if not job.wait_for("test pause at " + phase, count=sh.np):
            rc = job.finish()
            t.suite.require(False, "the job never reached its %s phase" % phase, job.result(rc))
        lost_at = time.monotonic()
        if fault == "link_down":
            cluster.link(LOST, "down")
        else:
            cluster.signal_all(LOST, signal.SIGKILL if fault == "sigkill" else signal.SIGSTOP)
        rc = job.finish(timeout=JOB_TIME_LIMIT + 30)
        ended = time.monotonic()
    finally:
        if job.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(job.proc.pid, signal.SIGKILL)
            job.proc.wait()
    took = ended - lost_at
    r = job.result(rc, took)
    t.suite.require(rc is not None, "the job did not end within %d s of losing %s" % (JOB_TIME_LIMIT + 30, LOST), r)
    print("  %s in %s: ended %.1f s after the loss (%.1f s after the start), exit %d, left %s"
          % (fault, phase, took, ended - started, rc, leftovers(t.d)), flush=True)
    if fault == "sigkill":
        t.suite.check(took <= LOSS_BOUND_KILL, "ended %.1f s after the SIGKILL, bound %.1f s" % (took, LOSS_BOUND_KILL), r)
    elif fault == "link_down":
        t.suite.check(took <= LOSS_BOUND_LINK, "ended %.1f s after the link went down, bound %.1f s"
                      % (took, LOSS_BOUND_LINK), r)
        t.suite.check("lost communication with a remote daemon" in r.stderr,
                      "mpirun did not say it lost the daemon", r)
    else:
        t.suite.check(ended - started <= LOSS_BOUND_STOP_FROM_START, "ended %.1f s after the start, bound %.1f s"
                      % (ended - started, LOSS_BOUND_STOP_FROM_START), r)
        t.suite.check("time limit for job execution has been reached" in r.stderr,
                      "mpirun did not say the time limit ended the job", r)
    t.suite.check(rc != 0, "the job that lost %s exited 0" % LOST, r)
    t.suite.check(e2e.file_state(out) == before, "the output file changed", r)
    for host in cluster.ns:
        if host != LOST:
            left = cluster.wait_empty(host, 3.0)
            t.suite.check(not left, "processes left on %s after the job: %s" % (host, left), r)
    if fault == "link_down":
        # Cut off, h2's daemon notices mpirun is gone (its own keepalive) and ends its ranks.
        left = cluster.wait_empty(LOST, KEEPALIVE_BOUND + 4.0)
        t.suite.check(not left, "processes on the cut-off %s did not end by themselves: %s" % (LOST, left), r)
    # The surviving ranks (rank 0, which holds the lock, among them) got mpirun's SIGTERM and
    # removed the job's new file and lock themselves.
    left_files = leftovers(t.d)
    t.suite.check(left_files == [], "the lost job left %s" % left_files, r)
    cluster.mend(LOST)
    # The next job on the mended cluster: succeeds, cleans what the lost job left, keeps the file.
    r2 = sh.run(gather_args(inp, e2e.ref(out, "/next")), env={"MPIEXEC_TIMEOUT": str(JOB_TIME_LIMIT)})
    e2e.expect_success(t.suite, r2, "the next job (left before it: %s)" % left_files)
    e2e.same_array(t.suite, "/next", e2e.read_h5(out, "/next"), expected, r2)
    e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64), r2)
    with e2e.h5py.File(out, "r") as f:
        t.suite.check("g" not in f, "the lost job's dataset is in the file", r2)
    t.suite.check(leftovers(t.d) == [], "left after the next job: %s" % leftovers(t.d), r2)


def host_wakes_after_the_next_job(t, sh, cluster):
    """h2 frozen (SIGSTOP) with its rows written into an existing target: the job ends at its
    time limit and the next job adds its dataset; then h2 wakes, and its daemon, its mpirun
    gone, ends its ranks with SIGTERM. Their stop handlers leave the file alone: they cut it
    back to its length before their job, under the next job's dataset ("truncated file")."""
    inp, expected = make_inputs(t.d, rows=8192, index_rows=4096)
    out = os.path.join(t.d, "target.h5")
    make_existing(out)
    env = {"SHARDOPS_TEST_PAUSE": "in-place:%d" % PAUSE, "MPIEXEC_TIMEOUT": str(JOB_TIME_LIMIT)}
    job = Job(sh, gather_args(inp, e2e.ref(out, "/g")), sh.np, env=env)
    try:
        if not job.wait_for("test pause at in-place", count=sh.np):
            t.suite.require(False, "the job never reached in-place", job.result(job.finish()))
        cluster.signal_all(LOST, signal.SIGSTOP)
        rc = job.finish(timeout=JOB_TIME_LIMIT + 30)
    finally:
        if job.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(job.proc.pid, signal.SIGKILL)
            job.proc.wait()
    t.suite.require(rc is not None and rc != 0, "the job with %s frozen exited %s" % (LOST, rc), job.result(rc))
    r = sh.run(gather_args(inp, e2e.ref(out, "/next")), env={"MPIEXEC_TIMEOUT": str(JOB_TIME_LIMIT)})
    e2e.expect_success(t.suite, r, "the next job")
    after_next = e2e.file_state(out)
    cluster.signal_all(LOST, signal.SIGCONT)
    left = cluster.wait_empty(LOST, KEEPALIVE_BOUND + 6.0)
    t.suite.check(not left, "the woken processes on %s did not end: %s" % (LOST, left), r)
    t.suite.check(e2e.file_state(out) == after_next, "%s's woken ranks changed the file after the next job" % LOST, r)
    e2e.same_array(t.suite, "/next", e2e.read_h5(out, "/next"), expected, r)
    e2e.same_array(t.suite, "/b", e2e.read_h5(out, "/b"), np.arange(100, dtype=np.int64), r)


class Ctx:
    def __init__(self, suite, d):
        self.suite, self.d = suite, d


def main():
    args = e2e.parse_args(__doc__.splitlines()[0], default_np=6)
    if "SHARDOPS_CLUSTER_DIR" not in os.environ:
        raise SystemExit("run this under tests/cluster/with_cluster.sh (no SHARDOPS_CLUSTER_DIR)")
    suite = e2e.Suite("cluster_host_loss", args)
    sh = e2e.Shardops(args)
    cluster = Cluster()
    for fault in FAULTS:
        for phase in PHASES:
            with e2e.work_dir(args, "loss") as d:
                try:
                    suite.case("%s_in_%s" % (fault, phase), lose_host, Ctx(suite, d), sh, cluster, fault, phase)
                finally:
                    cluster.mend(LOST)
    with e2e.work_dir(args, "loss") as d:
        try:
            suite.case("sigstop_in_in-place_woken_after_the_next_job", host_wakes_after_the_next_job, Ctx(suite, d), sh,
                       cluster)
        finally:
            cluster.mend(LOST)
    return suite.finish(sh)


if __name__ == "__main__":
    sys.exit(main())
