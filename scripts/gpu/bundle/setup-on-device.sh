# setup-on-device.sh: SOURCE it (bash) from the root of the repository copy:
#     . .gpu/setup-on-device.sh            (or: . .gpu/setup-on-device.sh REPO_ROOT)
# 1. unpacks .gpu/*.tar.xz to $SHARDOPS_GPU_DIR (default /tmp/gpu), unless already there;
# 2. links the packed build dir(s) into the repository copy, and the original repository
#    path (e.g. /work/main, which CMakeCache/CTestTestfile name) to the copy when absent;
# 3. links /usr/bin/mpiexec, mpirun, orterun to the bundled Open MPI when absent;
# 4. picks the bundled libraries this system lacks (select-libs.sh) and sources env.sh.
# Environment: SHARDOPS_GPU_DIR, SHARDOPS_BUNDLE_LIBS=auto|all (select-libs.sh).
_sod_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_sod_repo=$(cd "${1:-$PWD}" && pwd)
_sod_g=${SHARDOPS_GPU_DIR:-/tmp/gpu}
if [[ -z ${SHARDOPS_GPU_DIR-} ]] && findmnt -no OPTIONS -T /tmp 2>/dev/null | grep -qw noexec; then
  _sod_g=$_sod_here/unpacked         # /tmp is noexec: unpack next to the tarball
fi
_sod_rc=0
if [[ -f $_sod_here/env.sh && -d $_sod_here/lib-all ]]; then
  _sod_g=$_sod_here                      # sourced from inside an unpacked bundle
else
  _sod_tar=$(ls "$_sod_here"/*.tar.xz 2>/dev/null | head -n 1)
  if [[ -z $_sod_tar ]]; then echo "setup-on-device: no tarball in $_sod_here" >&2; _sod_rc=1
  else
    mkdir -p "$_sod_g"
    if command -v xz > /dev/null; then tar -xJf "$_sod_tar" -C "$_sod_g" --strip-components=1 || _sod_rc=1
    else  # no xz-utils: Python's lzma
      python3 - "$_sod_tar" "$_sod_g" <<'PYEOF' || _sod_rc=1
import sys, tarfile
t = tarfile.open(sys.argv[1])
ms = []
for m in t.getmembers():
    parts = m.name.split("/", 1)
    if len(parts) == 2:
        m.name = parts[1]
        ms.append(m)
kw = {"filter": "fully_trusted"} if hasattr(tarfile, "data_filter") else {}
t.extractall(sys.argv[2], members=ms, **kw)
PYEOF
    fi
  fi
fi
if [[ $_sod_rc == 0 ]]; then
  _sod_orig=$(cat "$_sod_g/REPO_PATH")
  for _sod_d in "$_sod_g"/repo/*; do
    _sod_n=${_sod_d##*/}
    if [[ ! -e $_sod_repo/$_sod_n ]]; then ln -s "$_sod_d" "$_sod_repo/$_sod_n"
    else echo "setup-on-device: $_sod_repo/$_sod_n exists: kept (bundle copy in $_sod_d)" >&2; fi
  done
  if [[ ! -e $_sod_orig ]]; then
    mkdir -p "$(dirname "$_sod_orig")" && ln -s "$_sod_repo" "$_sod_orig"
  elif [[ $(cd "$_sod_orig" && pwd -P) != $(cd "$_sod_repo" && pwd -P) ]]; then
    echo "setup-on-device: WARNING: $_sod_orig exists and is not this repository copy: ctest uses $_sod_orig" >&2
  fi
  # absolute paths the build names outside the repo (Kokkos_DIR), when this machine lacks them
  while IFS= read -r _sod_d; do
    _sod_n=${_sod_d#"$_sod_g/sys"}
    [[ -e $_sod_n ]] || { mkdir -p "$(dirname "$_sod_n")" && ln -s "$_sod_d" "$_sod_n"; }
  done < <(find "$_sod_g/sys" -type f 2>/dev/null)
  for _sod_n in mpiexec mpirun orterun; do
    if [[ ! -e /usr/bin/$_sod_n ]]; then ln -sfn "$_sod_g/ompi/usr/bin/$_sod_n" "/usr/bin/$_sod_n"
    elif [[ $(readlink -f "/usr/bin/$_sod_n") != "$_sod_g"/* ]]; then
      echo "setup-on-device: WARNING: /usr/bin/$_sod_n is $(readlink -f /usr/bin/$_sod_n), not the bundle's" >&2
    fi
  done
  # record python3 before env.sh changes PATH (peer-python runs it without the bundle's libs)
  export SHARDOPS_PEER_PYTHON=${SHARDOPS_PEER_PYTHON:-$(command -v python3 || echo python3)}
  _sod_save=${LD_LIBRARY_PATH-}
  [[ -n ${SHARDOPS_ORIG_SET-} ]] && _sod_save=${SHARDOPS_ORIG_LD_LIBRARY_PATH-}
  SHARDOPS_ORIG_LD_LIBRARY_PATH=$_sod_save "$_sod_g/select-libs.sh" || _sod_rc=1
  . "$_sod_g/env.sh"
  # vader's single copy (CMA, process_vm_readv) is faster but refused in some containers: keep
  # env.sh's "none" unless a 2-rank probe passes with CMA (or the caller chose).
  if [[ -z ${SHARDOPS_SINGLE_COPY_CHOSEN-} ]]; then
    if OMPI_MCA_btl_vader_single_copy_mechanism=cma timeout 60 mpiexec -n 2 "$_sod_g/bin/mpi-probe" > /dev/null 2>&1; then
      export OMPI_MCA_btl_vader_single_copy_mechanism=cma
    fi
    echo "setup-on-device: vader single copy: $OMPI_MCA_btl_vader_single_copy_mechanism" >&2
  fi
  _sod_shm=$(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 {print $2}')
  if [[ -z $_sod_shm || $_sod_shm -lt 1048576 ]]; then export OMPI_MCA_btl_vader_backing_directory=/tmp; fi
  echo "setup-on-device: bundle in $_sod_g ($(head -n 1 "$_sod_g/BUNDLE_INFO")); mpiexec: $(command -v mpiexec)" >&2
fi
unset _sod_here _sod_repo _sod_g _sod_tar _sod_orig _sod_d _sod_n _sod_save _sod_shm
(exit $_sod_rc)
