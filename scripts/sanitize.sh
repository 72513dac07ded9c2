#!/usr/bin/env bash
# Builds shardops with AddressSanitizer and UndefinedBehaviorSanitizer (GCC,
# -fsanitize=address,undefined, no recovery) into build-sanitize/ and runs the suite there:
# the unit tests, the MPI tests at 1-4 ranks and the end-to-end tests (the shardops binary
# under mpirun on h5py files). A memory error or undefined behaviour anywhere fails its test.
#   bash scripts/sanitize.sh              # everything but the Slurm, install and fuzz tests
#   bash scripts/sanitize.sh -R e2e_decks # extra arguments go to ctest
# Leak checking is off: Open MPI and HDF5 keep what they allocate at start-up until exit.
# The build takes long (about half an hour on 2 cores); later runs rebuild what changed.
# The fuzz targets are sanitized builds of their own (scripts/fuzz.sh) and are not built here.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SHARDOPS_SANITIZE_BUILD_DIR:-$REPO/build-sanitize}
FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"

bash "$REPO/scripts/setup.sh"
cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPIEXEC_MAX_NUMPROCS=4 \
  -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DSHARDOPS_ENABLE_FUZZ=OFF -DSHARDOPS_ENABLE_BENCHMARKS=OFF
cmake --build "$BUILD" --parallel "$(nproc)"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
# A small quarantine (freed memory ASan holds back to catch use after free): the limit
# tests run jobs of several ranks inside memory cgroups of a few hundred MB.
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:quarantine_size_mb=32
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$BUILD"
ctest --output-on-failure --parallel "$(nproc)" -LE '^(slurm|install)$' "$@" 2>&1 | tee "$BUILD/ctest-sanitize.log"
exit "${PIPESTATUS[0]}"
