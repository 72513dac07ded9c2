#!/usr/bin/env python3
"""GPU peers of the standard workloads (docs/performance.md): PyTorch, JAX and CuPy on one device.

For each peer that imports, times the equivalents of W1-W5 on the same sizes as
shardops_bench (float32 rows of D values, N output rows, M int64 indices with uniformly
random targets, P partitions), plus that framework's own device-to-device copy, and
writes JSON (for gpu_report.py) and a markdown table.

  gpu_peers.py [--device cuda|cpu] [--rows N] [--updates M] [--cols D] [--partitions P]
               [--repeats R] [--warmup W] [--peers torch,jax,cupy] [--json FILE] [--small]

--small: N=4096, M=8192 (checks the plumbing; --device cpu runs it on any machine with
PyTorch). A peer that does not import (or has no such device) is skipped with a message.
Each peer runs in its own child process, so one framework's memory pool (JAX
preallocates most of the GPU) or crash does not touch the others.

Equivalents (what each op must do, not TensorFlow's exact semantics):
  W1 scatter_nd(sum)        zeros(N, D), then out[idx[i]] += upd[i]
  W2 tensor_scatter_update  copy of base, then out[idx[i]] = upd[i]
  W3 gather_nd              out[i] = base[idx[i]]
  W4 dynamic_partition      stable argsort of the partition ids, rows gathered in that
                            order, counts per partition (the P outputs are its slices)
  W5 dynamic_stitch         out[pos[j]] = rows[j], pos a permutation of [0, N) (W4's
                            outputs put back)
Effective bytes are the standard workloads' formulas (each input read once, each output
written once), so GB/s compare with shardops_bench's column. Atomic scatters (torch
index_add_, CuPy scatter_add, XLA's scatter) are not deterministic in summation order on
a GPU, nor is which duplicate wins in the peers' W2; shardops' results are.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PEERS = ("torch", "jax", "cupy")


def effective_bytes(n, m, d):
    row = 4 * d
    return {
        "W1": m * (row + 8) + n * row,
        "W2": m * (row + 8) + 2 * n * row,
        "W3": m * 8 + 2 * m * row,
        "W4": n * (row + 4) + n * row,
        "W5": n * (row + 8) + n * row,
    }


OPS = {
    "W1": "scatter_nd(sum)",
    "W2": "tensor_scatter_update",
    "W3": "gather_nd",
    "W4": "dynamic_partition",
    "W5": "dynamic_stitch",
}


def timed(fn, sync, repeats, warmup):
    """Median seconds of fn() over `repeats` runs after `warmup`, each run synchronised."""
    for _ in range(warmup):
        fn()
        sync()
    times = []
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


# ------------------------------------------------------------------ the peers
# Each returns (cases, copy, sync, device_name): cases are (workload, peer label, fn);
# copy is a fn doing a device-to-device copy of `copy_bytes` bytes (read once, written once).


def torch_peer(a):
    import torch

    if a.device == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        dev = torch.device("cuda")
        sync = torch.cuda.synchronize
        name = torch.cuda.get_device_name(0)
    else:
        dev = torch.device("cpu")
        sync = lambda: None  # noqa: E731
        name = "cpu"
    n, m, d, p = a.rows, a.updates, a.cols, a.partitions
    g = torch.Generator(device=dev).manual_seed(7)
    idx = torch.randint(0, n, (m,), generator=g, device=dev, dtype=torch.int64)
    upd = torch.rand((m, d), generator=g, device=dev, dtype=torch.float32)
    base = torch.rand((n, d), generator=g, device=dev, dtype=torch.float32)
    parts = torch.randint(0, p, (n,), generator=g, device=dev, dtype=torch.int32)
    order = torch.sort(parts, stable=True).indices
    rows = base.index_select(0, order)  # W4's outputs, concatenated

    def partition():
        o = torch.sort(parts, stable=True).indices
        out = base.index_select(0, o)
        counts = torch.bincount(parts, minlength=p)
        return out, counts

    def stitch():
        out = torch.empty_like(base)
        out.index_copy_(0, order, rows)
        return out

    src = torch.empty(a.copy_bytes // 4, dtype=torch.float32, device=dev).fill_(1.0)
    dst = torch.empty_like(src)
    cases = [
        ("W1", "torch index_add_ (atomic on GPU)", lambda: torch.zeros((n, d), device=dev).index_add_(0, idx, upd)),
        ("W1", "torch index_put_(accumulate)",
         lambda: torch.zeros((n, d), device=dev).index_put_((idx,), upd, accumulate=True)),
        ("W2", "torch index_put_", lambda: base.clone().index_put_((idx,), upd)),
        ("W3", "torch index_select", lambda: base.index_select(0, idx)),
        ("W4", "torch sort(stable)+index_select", partition),
        ("W5", "torch index_copy_", stitch),
    ]
    return cases, (lambda: dst.copy_(src)), sync, name


def jax_peer(a):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax

    jax.config.update("jax_enable_x64", True)  # int64 indices, as W1-W3 use
    import jax.numpy as jnp

    try:
        dev = jax.devices("gpu" if a.device == "cuda" else "cpu")[0]
    except RuntimeError as e:
        raise RuntimeError(f"no JAX {a.device} device: {e}")
    n, m, d, p = a.rows, a.updates, a.cols, a.partitions
    k = jax.random.split(jax.random.PRNGKey(7), 4)
    def stable_argsort(x):
        try:
            return jnp.argsort(x, stable=True)
        except TypeError:  # JAX before `stable=`
            return jnp.argsort(x, kind="stable")

    with jax.default_device(dev):
        idx = jax.random.randint(k[0], (m,), 0, n, dtype=jnp.int64)
        upd = jax.random.uniform(k[1], (m, d), dtype=jnp.float32)
        base = jax.random.uniform(k[2], (n, d), dtype=jnp.float32)
        parts = jax.random.randint(k[3], (n,), 0, p, dtype=jnp.int32)
        order = stable_argsort(parts)
        rows = jnp.take(base, order, axis=0)
        src = jnp.ones((a.copy_bytes // 4,), jnp.float32)

    scatter_add = jax.jit(lambda i, u: jnp.zeros((n, d), jnp.float32).at[i].add(u))
    scatter_set = jax.jit(lambda b, i, u: b.at[i].set(u))
    gather = jax.jit(lambda b, i: jnp.take(b, i, axis=0))

    @jax.jit
    def partition(b, q):
        o = stable_argsort(q)
        return jnp.take(b, o, axis=0), jnp.bincount(q, length=p)

    stitch = jax.jit(lambda pos, r: jnp.empty((n, d), jnp.float32).at[pos].set(r))
    copy = jax.jit(lambda x: x + 0.0)  # an elementwise pass: reads and writes every byte once

    def run(f, *args):
        return lambda: jax.block_until_ready(f(*args))

    cases = [
        ("W1", "jax .at[].add", run(scatter_add, idx, upd)),
        ("W2", "jax .at[].set", run(scatter_set, base, idx, upd)),
        ("W3", "jax take", run(gather, base, idx)),
        ("W4", "jax argsort(stable)+take", run(partition, base, parts)),
        ("W5", "jax .at[].set", run(stitch, order, rows)),
    ]
    return cases, run(copy, src), (lambda: None), str(dev)


def cupy_peer(a):
    if a.device != "cuda":
        raise RuntimeError("CuPy runs on CUDA devices only")
    import cupy
    import cupyx

    n, m, d, p = a.rows, a.updates, a.cols, a.partitions
    rs = cupy.random.RandomState(7)
    idx = rs.randint(0, n, size=m, dtype=cupy.int64)
    upd = rs.random_sample((m, d), dtype=cupy.float32)
    base = rs.random_sample((n, d), dtype=cupy.float32)
    parts = rs.randint(0, p, size=n, dtype=cupy.int32)
    order = cupy.argsort(parts, kind="stable")
    rows = cupy.take(base, order, axis=0)

    def scatter_add():
        out = cupy.zeros((n, d), cupy.float32)
        cupyx.scatter_add(out, idx, upd)
        return out

    def scatter_set():
        out = base.copy()
        out[idx] = upd
        return out

    def partition():
        o = cupy.argsort(parts, kind="stable")
        return cupy.take(base, o, axis=0), cupy.bincount(parts, minlength=p)

    def stitch():
        out = cupy.empty_like(base)
        out[order] = rows
        return out

    src = cupy.ones(a.copy_bytes // 4, cupy.float32)
    dst = cupy.empty_like(src)
    sync = cupy.cuda.get_current_stream().synchronize
    name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    cases = [
        ("W1", "cupyx scatter_add (atomic)", scatter_add),
        ("W2", "cupy fancy assign", scatter_set),
        ("W3", "cupy take", lambda: cupy.take(base, idx, axis=0)),
        ("W4", "cupy argsort(stable)+take", partition),
        ("W5", "cupy fancy assign", stitch),
    ]
    return cases, (lambda: cupy.copyto(dst, src)), sync, name


PEER_FUNCS = {"torch": torch_peer, "jax": jax_peer, "cupy": cupy_peer}


def run_one(a, peer):
    """Times one peer in this process; returns its JSON record (or a skip record)."""
    try:
        cases, copy, sync, device_name = PEER_FUNCS[peer](a)
    except ImportError as e:
        return {"peer": peer, "skipped": f"not importable ({e})"}
    except Exception as e:  # no device, too little memory, ...
        return {"peer": peer, "skipped": f"{type(e).__name__}: {e}"}
    nbytes = effective_bytes(a.rows, a.updates, a.cols)
    copy_s = timed(copy, sync, a.repeats, a.warmup)
    rows = []
    for wid, label, fn in cases:
        try:
            s = timed(fn, sync, a.repeats, a.warmup)
            rows.append({"id": wid, "op": OPS[wid], "peer": label, "time_s": s, "gb_per_s": nbytes[wid] / s / 1e9})
        except Exception as e:  # e.g. out of memory at this size: report, go on
            rows.append({"id": wid, "op": OPS[wid], "peer": label, "error": f"{type(e).__name__}: {e}"})
    return {
        "peer": peer,
        "device": device_name,
        "copy_bytes": a.copy_bytes,
        "copy_s": copy_s,
        # A copy reads and writes each byte: effective bytes = 2 x the buffer.
        "copy_gb_per_s": 2 * a.copy_bytes / copy_s / 1e9,
        "rows": rows,
    }


def markdown(result):
    a = result["args"]
    out = [
        f"GPU peers on `{a['device']}`: N={a['rows']} rows, M={a['updates']} updates, D={a['cols']} float32 cols, "
        f"P={a['partitions']} partitions, median of {a['repeats']} after {a['warmup']} warm-up",
        "",
        "| workload | op | peer | time ms | GB/s | vs own device copy |",
        "|---|---|---|---:|---:|---:|",
    ]
    notes = []
    for rec in result["peers"]:
        if "skipped" in rec:
            notes.append(f"- {rec['peer']}: skipped ({rec['skipped']})")
            continue
        notes.append(f"- {rec['peer']} on {rec['device']}: device copy {rec['copy_gb_per_s']:.1f} GB/s "
                     f"({rec['copy_bytes'] / 2**20:.1f} MiB read and written)")
        for r in rec["rows"]:
            if "error" in r:
                out.append(f"| {r['id']} | {r['op']} | {r['peer']} | failed | - | - |")
                notes.append(f"- {r['peer']} {r['id']}: {r['error']}")
                continue
            out.append(f"| {r['id']} | {r['op']} | {r['peer']} | {r['time_s'] * 1e3:.2f} | {r['gb_per_s']:.1f} | "
                       f"{100 * r['gb_per_s'] / rec['copy_gb_per_s']:.0f}% |")
    return "\n".join(out + [""] + notes) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--rows", type=int, default=1 << 26)
    ap.add_argument("--updates", type=int, default=None, help="default: 2 x rows")
    ap.add_argument("--cols", type=int, default=16)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--copy-bytes", type=int, default=None, help="device copy size (default: N x D x 4 bytes)")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--small", action="store_true", help="N=4096, M=8192, 3 repeats: a plumbing check")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", help="write the table here (default: print it)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.small:
        a.rows, a.updates, a.repeats, a.warmup = 4096, 8192, 3, 1
    if a.updates is None:
        a.updates = 2 * a.rows
    if a.copy_bytes is None:
        a.copy_bytes = a.rows * a.cols * 4
    peers = [x for x in a.peers.split(",") if x]
    for x in peers:
        if x not in PEERS:
            ap.error(f"unknown peer {x!r} (known: {', '.join(PEERS)})")

    if a.child:  # one peer, in this process; JSON on stdout
        print(json.dumps(run_one(a, peers[0])))
        return 0

    records = []
    for peer in peers:
        print(f"gpu_peers: {peer} ...", file=sys.stderr, flush=True)
        args = [sys.executable, os.path.abspath(__file__), "--child", "--peers", peer, "--device", a.device,
                "--rows", str(a.rows), "--updates", str(a.updates), "--cols", str(a.cols),
                "--partitions", str(a.partitions), "--repeats", str(a.repeats), "--warmup", str(a.warmup),
                "--copy-bytes", str(a.copy_bytes)]
        proc = subprocess.run(args, stdout=subprocess.PIPE, text=True)
        lines = proc.stdout.strip().splitlines()
        try:
            rec = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
        except json.JSONDecodeError:
            rec = None
        if rec is None:
            rec = {"peer": peer, "skipped": f"child process failed (exit {proc.returncode})"}
        if "skipped" in rec:
            print(f"gpu_peers: {peer} skipped: {rec['skipped']}", file=sys.stderr, flush=True)
        records.append(rec)

    result = {"args": {k: v for k, v in vars(a).items() if k not in ("child", "json", "markdown")},
              "peers": records}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    md = markdown(result)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(md)
    else:
        print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
