#!/usr/bin/env bash
# device-run.sh OUT_DIR [BUILD_DIR=build-cuda]: the GPU checks on a machine that has a GPU but
# no MPI, HDF5 or Kokkos, from a bundle that make-bundle.sh made (.gpu/ beside this checkout).
# Run from the repository root of the copy on that machine. It sets the bundle up
# (setup-on-device.sh), records the machine, runs run-gpu-checks.sh (the unit and MPI tests,
# staged and not, shardops_bench at 1 and 2 ranks, the GPU peers) under a time limit, and
# leaves in OUT_DIR three files: gpu-run.log, results.md and gpu-results.tar.gz (every log
# and JSON). A run cut off by the limit still leaves a partial results.md.
# Environment: GPU_CHECK_LIMIT (seconds for run-gpu-checks.sh, default 370), GPU_CHECK_ARGS
# (more run-gpu-checks.sh options, e.g. "--rows 16777216").
set -uo pipefail
OUT=${1:?usage: device-run.sh OUT_DIR [BUILD_DIR]}
BUILD=${2:-build-cuda}
R=/tmp/gpu-results
rm -rf "$R"
mkdir -p "$OUT"
{
  # The machine's own python (with torch/jax/cupy) runs the peers, without the bundle's libraries.
  SHARDOPS_PEER_PYTHON=$(command -v python3)
  [[ -x /opt/torch/.venv/bin/python3 ]] && SHARDOPS_PEER_PYTHON=/opt/torch/.venv/bin/python3
  export SHARDOPS_PEER_PYTHON
  date
  # shellcheck source=/dev/null
  . .gpu/setup-on-device.sh "$PWD" && echo "setup: ok"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "cores: $(nproc)"; free -g | head -n 2; df -h /dev/shm /tmp | tail -n 2
  # shellcheck disable=SC2086
  time timeout -k 10 "${GPU_CHECK_LIMIT:-370}" scripts/gpu/run-gpu-checks.sh --build "$BUILD" --out "$R" \
    --ranks "1 2" --staged-mpi-pass --ctest-args "-L unit|mpi -j 12" --repeats 5 --warmup 1 \
    --python "$SHARDOPS_GPU_BUNDLE/bin/peer-python" ${GPU_CHECK_ARGS-}
  echo "run-gpu-checks.sh: exit $?"
  date
  if [[ ! -s $R/results.md ]]; then  # cut off by the limit: report what it left
    # shellcheck disable=SC2086
    scripts/gpu/run-gpu-checks.sh --build "$BUILD" --out "$R" --report-only \
      --python "$SHARDOPS_GPU_BUNDLE/bin/peer-python" ${GPU_CHECK_ARGS-}
  fi
} 2>&1 | tee "$OUT/gpu-run.log"
tar -czf "$OUT/gpu-results.tar.gz" -C /tmp gpu-results
cp "$R/results.md" "$OUT/" 2>/dev/null
ls -la "$OUT"
