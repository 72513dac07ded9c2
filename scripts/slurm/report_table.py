#!/usr/bin/python3
"""Prints where time went in shardops runs: one row per --report JSON file given.

Columns are the phases shardops times (the maximum over ranks, in seconds):
  read      parallel HDF5 reads of the inputs
  validate  shape, dtype and index checks (agreed across ranks)
  route     the MPI exchange that moves rows to the ranks that own them
  apply     the Kokkos kernels on each rank's rows
  write     parallel HDF5 writes of the outputs
plus the whole run ("total") and the bytes read, written and sent between ranks.
"""
import json
import sys

PHASES = ["read", "validate", "route", "apply", "write", "total"]


def mib(n):
    return f"{n / 2**20:.1f}"


rows = []  # in the order given (the job numbers its reports by step)
for path in sys.argv[1:]:
    with open(path) as f:
        r = json.load(f)
    s, b = r["seconds"], r["bytes"]
    rows.append([r["command"], str(r["ranks"])] + [f"{s.get(p, 0.0):.3f}" for p in PHASES]
                + [mib(b["read"]), mib(b["written"]), mib(b["sent_between_ranks"])])
head = ["op", "ranks"] + PHASES + ["MiB read", "written", "sent"]
widths = [max(len(x) for x in col) for col in zip(head, *rows)]
print("where time goes (seconds, max over ranks):")
for row in [head] + rows:
    print("  " + "  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(row, widths))))
