#!/usr/bin/env bash
# select-libs.sh: fills G/lib (on LD_LIBRARY_PATH) with links into G/lib-all.
#   SHARDOPS_BUNDLE_LIBS=auto (default): the MPI/PMIx/HDF5/hwloc/libevent/Kokkos family always;
#     any other library only if this system has no library of that soname (ldconfig -p), or if
#     ldd of a bundled ELF file reports it "not found" or "version ... not found".
#   SHARDOPS_BUNDLE_LIBS=all: every bundled library (shadows the system's).
set -uo pipefail
G=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${SHARDOPS_BUNDLE_LIBS:-auto}
always='^(libmpi|libopen-(pal|rte)|libmca_common|liboshmem|libompitrace|libpmix|libhdf5|libhwloc|libevent|libtrilinos|libkokkos|libyaml-cpp|libsz|libaec)'
rm -rf "$G/lib"; mkdir -p "$G/lib"
have=$( { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | awk '/x86-64/ {print $1}' | sort -u)
[[ -n $have ]] || { echo "select-libs: no ldconfig cache: taking every bundled library" >&2; mode=all; }
for f in "$G"/lib-all/*; do
  s=${f##*/}
  if [[ $mode == all || $s =~ $always ]] || ! grep -qxF "$s" <<< "$have"; then ln -s "../lib-all/$s" "$G/lib/$s"; fi
done
check() {
  local e
  while read -r e; do
    LD_LIBRARY_PATH=$G/lib${SHARDOPS_ORIG_LD_LIBRARY_PATH:+:$SHARDOPS_ORIG_LD_LIBRARY_PATH} ldd "$G/$e" 2>&1
  done < "$G/elf-list"
}
for round in 1 2 3 4 5; do
  out=$(check)
  want=$( { sed -n 's/^[[:space:]]*\([^[:space:]]*\) => not found.*/\1/p' <<< "$out"
            sed -n "s/.*[[:space:]:]\([^[:space:]:]*\): version .* not found.*/\1/p; s/.*error while loading shared libraries: \([^:]*\):.*/\1/p" <<< "$out" | xargs -r -n1 basename
          } | sort -u)
  added=0
  for s in $want; do
    if [[ -e $G/lib-all/$s && ! -e $G/lib/$s ]]; then ln -s "../lib-all/$s" "$G/lib/$s"; added=1; echo "select-libs: + $s (system copy missing or too old)" >&2; fi
  done
  [[ $added == 1 ]] || break
done
bad=$(grep -E 'not found|error while loading' <<< "$out" | grep -v 'libcuda\.so' | sort -u)
echo "select-libs: mode $mode, $(ls "$G/lib" | wc -l) of $(ls "$G/lib-all" | wc -l) bundled libraries on LD_LIBRARY_PATH" >&2
if [[ -n $bad ]]; then echo "select-libs: UNRESOLVED:" >&2; echo "$bad" >&2; exit 1; fi
if grep -q 'libcuda\.so.*not found' <<< "$out"; then echo "select-libs: note: libcuda.so.1 not found (no NVIDIA driver libraries here)" >&2; fi
exit 0
