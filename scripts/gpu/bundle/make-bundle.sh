#!/usr/bin/env bash
# make-bundle.sh BUILD_DIR [OUT_DIR]
#
# Packs a shardops build (CUDA or host) with the Open MPI / PMIx / parallel-HDF5 runtime and
# the whole shared-library closure (except glibc and libcuda) into ONE compressed tarball, so
# that the executables, `mpirun` and `ctest -L 'unit|mpi'` run on a machine without MPI/HDF5.
#
#   OUT_DIR        default <repository>/.gpu (git-ignored); gets <name>.tar.xz and setup-on-device.sh
#   BUNDLE_NAME    tarball base name (default: bundle)
#   BUNDLE_LABELS  ctest label regex whose test executables are packed (default 'unit|mpi')
#   BUNDLE_XZ      xz options (default: -9 -T1 --lzma2=preset=9,dict=192MiB; one thread and a large
#                  dictionary let xz share the device code that every test executable repeats)
#   BUNDLE_STRIP   strip option for the packed executables (default --strip-all; --strip-debug keeps symbols)
#
# Tarball layout (extracted to G=/tmp/gpu by setup-on-device.sh):
#   G/repo/<build dir relative to the repo>/...   executables (stripped, BUNDLE_STRIP), CMakeCache.txt,
#                                                 every CTestTestfile.cmake
#   G/ompi/usr/bin, G/ompi/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3, .../pmix2/{lib/pmix,share},
#   G/ompi/usr/share/openmpi, G/ompi/etc/openmpi  Open MPI + PMIx, Debian's layout under a new prefix
#   G/lib-all/<soname>                            the ldd closure (real files)
#   G/elf-list                                    ELF files checked by select-libs.sh
#   G/sys/<absolute path>                         files the build names by absolute path outside the
#                                                 repo (Kokkos_DIR's *.cmake, read by run-gpu-checks.sh)
#   G/env.sh G/setup-on-device.sh G/select-libs.sh G/bin/peer-python  G/REPO_PATH
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,20p' "$0"; exit 2; }
BUILD=$(cd "$1" && pwd -P)
NAME=${BUNDLE_NAME:-bundle}
LABELS=${BUNDLE_LABELS:-unit|mpi}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ -f $BUILD/CMakeCache.txt ]] || { echo "not a CMake build dir: $BUILD" >&2; exit 2; }
REPO=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")
REL=${BUILD#"$REPO"/}
OUTDIR=${2:-$REPO/.gpu}
[[ $REL != "$BUILD" ]] || { echo "build dir $BUILD is not inside the source tree $REPO" >&2; exit 2; }
ML=/usr/lib/x86_64-linux-gnu
TMP=$(mktemp -d /tmp/gpu-bundle.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
G=$TMP/gpu
mkdir -p "$G/repo/$REL" "$G/lib-all" "$G/bin"
echo "$REPO" > "$G/REPO_PATH"
echo "$REL" > "$G/BUILD_REL"

# --- 1. executables of the build ------------------------------------------------------------
exes=$(cd "$BUILD" && ctest --show-only=json-v1 -L "$LABELS" 2>/dev/null | python3 -c '
import json, os, sys
b = sys.argv[1]
seen = set()
for t in json.load(sys.stdin).get("tests", []):
    for a in t.get("command", []) or []:
        if a.startswith(b + "/") and os.path.isfile(a) and a not in seen:
            seen.add(a); print(a)
' "$BUILD")
missing=$(cd "$BUILD" && ctest -N -L "$LABELS" 2>&1 | grep -c "Could not find executable" || true)
[[ $missing == 0 ]] || { echo "WARNING: $missing ctest commands have no executable (not built?)" >&2; }
exes="$exes
$BUILD/apps/shardops/shardops
$BUILD/bench/shardops_bench"
: > "$G/elf-list"
for e in $exes; do
  [[ -f $e ]] || { echo "missing executable: $e" >&2; exit 1; }
  r=${e#"$BUILD"/}
  mkdir -p "$G/repo/$REL/$(dirname "$r")"
  cp -p "$e" "$G/repo/$REL/$r"
  strip ${BUNDLE_STRIP:---strip-all} "$G/repo/$REL/$r"
  echo "repo/$REL/$r" >> "$G/elf-list"
done
cp -p "$BUILD/CMakeCache.txt" "$G/repo/$REL/"
(cd "$BUILD" && find . -name CTestTestfile.cmake -not -path '*/CMakeFiles/*' -print0 | xargs -0 cp --parents -t "$G/repo/$REL/")
echo "executables: $(echo "$exes" | grep -c .)"
# Kokkos_DIR's config files: run-gpu-checks.sh reads Kokkos_DEVICES there.
KD=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
if [[ -n $KD && -d $KD ]]; then mkdir -p "$G/sys$KD"; cp -p "$KD"/*.cmake "$G/sys$KD/"; fi

# --- 2. Open MPI + PMIx runtime (Debian layout under G/ompi) ---------------------------------
O=$G/ompi
mkdir -p "$O/usr/bin" "$O/usr/lib/x86_64-linux-gnu/openmpi/lib" "$O/usr/share" "$O/etc" \
         "$O/usr/lib/x86_64-linux-gnu/pmix2/lib"
for b in orterun orted ompi_info; do cp -p "/usr/bin/$b" "$O/usr/bin/"; echo "ompi/usr/bin/$b" >> "$G/elf-list"; done
for l in mpirun mpiexec mpirun.openmpi mpiexec.openmpi; do ln -s orterun "$O/usr/bin/$l"; done
cp -a "$ML/openmpi/lib/openmpi3" "$O/usr/lib/x86_64-linux-gnu/openmpi/lib/"
cp -a /usr/share/openmpi "$O/usr/share/"
cp -a /etc/openmpi "$O/etc/"
cp -a "$ML/pmix2/lib/pmix" "$O/usr/lib/x86_64-linux-gnu/pmix2/lib/"
cp -a "$ML/pmix2/share" "$O/usr/lib/x86_64-linux-gnu/pmix2/"
(cd "$G" && find ompi -name '*.so' -type f) >> "$G/elf-list"
mpicc -O2 "$HERE/mpi-probe.c" -o "$G/bin/mpi-probe"   # setup-on-device.sh: does CMA work here?
echo "bin/mpi-probe" >> "$G/elf-list"

# --- 3. the shared-library closure -----------------------------------------------------------
# Everything ldd resolves, but glibc's own libraries and the driver's libcuda.
skip='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libmvec|libnsl|libBrokenLocale|libthread_db|libnss_[a-z]+|libcuda|libnvidia-[a-z]+)\.so|^ld-linux|^linux-vdso'
while read -r e; do ldd "$G/$e" 2>/dev/null || true; done < "$G/elf-list" |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r so path; do
    [[ $so =~ $skip ]] && continue
    [[ -e $G/lib-all/$so ]] || cp -L "$path" "$G/lib-all/$so"
  done
chmod -R u+w "$G/lib-all"
# strip copies of libs: only debug info (Debian's are already stripped; cheap to be sure)
strip --strip-debug "$G"/lib-all/* 2>/dev/null || true
(cd "$G" && ls lib-all | sed 's|^|lib-all/|') >> "$G/elf-list"
echo "libraries: $(ls "$G/lib-all" | wc -l) ($(du -sh "$G/lib-all" | cut -f1))"

# --- 4. scripts ---------------------------------------------------------------------------------
cp "$HERE/env.sh" "$HERE/select-libs.sh" "$HERE/setup-on-device.sh" "$G/"
cp "$HERE/peer-python" "$G/bin/"
chmod +x "$G/select-libs.sh" "$G/setup-on-device.sh" "$G/bin/peer-python"
{
  echo "built: $(date -Is) on $(hostname) from $BUILD"
  echo "repository: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)$(git -C "$REPO" diff --quiet 2>/dev/null || echo ' (dirty tree)')"
  echo "Open MPI: $(ompi_info --version 2>/dev/null | head -n1)"
} > "$G/BUNDLE_INFO"

# --- 5. tarball -----------------------------------------------------------------------------------
mkdir -p "$OUTDIR"
rm -f "$OUTDIR/$NAME.tar.xz"
(cd "$TMP" && find gpu ! -type d | LC_ALL=C sort > "$TMP/list")
tar -C "$TMP" --no-recursion -cf - -T "$TMP/list" | xz ${BUNDLE_XZ:--9 -T1 --lzma2=preset=9,dict=192MiB} > "$OUTDIR/$NAME.tar.xz"
cp "$HERE/setup-on-device.sh" "$OUTDIR/setup-on-device.sh"
echo "unpacked: $(du -sh "$G" | cut -f1)"
ls -la "$OUTDIR"
du -sh "$OUTDIR"
