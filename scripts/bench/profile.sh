#!/usr/bin/env bash
# Where an op's time goes: runs shardops_bench with the kernel_times Kokkos Tools
# library, which prints, per rank, the time of every kernel, deep_copy and the time
# outside kernels (MPI, allocation) inside the ops' profiling regions.
# Usage: scripts/bench/profile.sh NP [shardops_bench options], e.g.
#   scripts/bench/profile.sh 1 --ops w1,w3 --repeats 5 --warmup 0
# Environment: BUILD_DIR (default build-bench). For a sampling profile of the same
# run: perf record -F 2999 BUILD_DIR/bench/shardops_bench --ops w1 (perf is in linux-perf).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}
NP=${1:?usage: profile.sh NP [shardops_bench options]}
shift
LIB=$BUILD_DIR/bench/libshardops_kernel_times.so
[[ -f $LIB ]] || { echo "profile.sh: $LIB is missing: cmake --build $BUILD_DIR --target shardops_kernel_times" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
export KOKKOS_PROFILE_LIBRARY=$LIB KOKKOS_TOOLS_LIBS=$LIB  # Kokkos 3 / Kokkos 4 spelling
extra=()
[[ $NP -gt $(nproc) ]] && extra=(--oversubscribe)
mpirun -n "$NP" "${extra[@]}" -x KOKKOS_PROFILE_LIBRARY -x KOKKOS_TOOLS_LIBS "$BUILD_DIR/bench/shardops_bench" "$@"
