#!/usr/bin/env bash
# The run paths (RUNPATH/RPATH) of the given binaries hold absolute folders only: an empty
# entry (CMake pads its build-tree run path with one) or a relative one makes the loader look
# for MPI and HDF5 in the working directory, where anyone may have put a library of that name.
set -euo pipefail
status=0
for binary in "$@"; do
  paths=$(readelf -d "$binary" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  [ -n "$paths" ] || continue
  IFS=: read -r -a entries <<< "$paths:"
  for entry in "${entries[@]}"; do
    if [[ "$entry" != /* ]]; then
      echo "$binary: run path '$paths' has the entry '$entry', not an absolute folder" >&2
      status=1
    fi
  done
done
exit $status
