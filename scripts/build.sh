#!/usr/bin/env bash
# Configures and builds shardops (Release) into build/. Extra arguments go to the cmake
# configure step, e.g. scripts/build.sh -DKokkos_ROOT=/opt/kokkos.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SHARDOPS_BUILD_DIR:-$REPO/build}

# MPIEXEC_MAX_NUMPROCS=4: FindMPI caps it at the core count (2 on CI) and the MPI tests run at up to 4 ranks.
cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMPIEXEC_MAX_NUMPROCS=4 "$@"
cmake --build "$BUILD" --parallel "$(nproc)"
