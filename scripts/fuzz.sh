#!/usr/bin/env bash
# Runs one libFuzzer target of fuzz/ for a bounded time (the ctest tests fuzz_* call it;
# run it by hand for longer):   scripts/fuzz.sh TARGET [SECONDS]   (default 20)
# TARGET: deck, dataset_ref, shape or hdf5_open. Every input kept in fuzz/corpus/TARGET (the
# seeds, and the input of each bug fuzzing found, as regression-NAME) runs first, then
# mutations for SECONDS. Exits non-zero on a crash, a sanitizer report, an uncaught
# exception, a timeout or running out of memory, leaving the input in BUILD/fuzz/crashes/:
# fix the bug, then copy the input to fuzz/corpus/TARGET/regression-WHAT so it stays fixed.
# The targets are built by the main build (tests/fuzz/CMakeLists.txt) into BUILD/fuzz.
set -euo pipefail

target=${1:?usage: scripts/fuzz.sh TARGET [SECONDS]}
seconds=${2:-20}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SHARDOPS_BUILD_DIR:-$REPO/build}
FUZZ=$BUILD/fuzz
bin=$FUZZ/fuzz_$target
if [ ! -x "$bin" ]; then
  echo "fuzz: $bin is not built (the main build builds it when clang with libFuzzer is found)"
  exit 77
fi
work=$FUZZ/work/$target  # new inputs libFuzzer finds; the first corpus is where it writes
mkdir -p "$work" "$FUZZ/crashes" "$REPO/fuzz/corpus/$target"
corpora=("$work" "$REPO/fuzz/corpus/$target")
opts=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
      -artifact_prefix="$FUZZ/crashes/$target-")
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

if [ "$target" = hdf5_open ]; then
  seed=$FUZZ/seed/hdf5
  if [ ! -d "$seed" ]; then
    /usr/bin/python3 "$REPO/fuzz/make_hdf5_corpus.py" "$seed.tmp" && mv "$seed.tmp" "$seed"
  fi
  corpora+=("$seed")
  export TMPDIR=$FUZZ/work  # the target writes each input to a file there
  # Open MPI keeps what MPI_Init allocated (not leaks of shardops). HDF5 1.10 allocates by
  # sizes it reads from the file: a refused allocation is its error path, as without ASan.
  # It also allocates and loops by counts in hostile metadata until memory or time runs
  # out, inside the library (docs/limits.md): those are recorded in crashes/ but do not
  # stop the run; memory errors and sanitizer reports still fail it.
  export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=1024
  opts+=(-fork=1 -ignore_ooms=1 -ignore_timeouts=1)
fi

echo "fuzz: $bin for ${seconds} s on ${corpora[*]}"
exec "$bin" "${opts[@]}" "${corpora[@]}"
