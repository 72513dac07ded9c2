#!/usr/bin/env bash
# check-without-system-mpi.sh REPO_COPY 'COMMANDS'
# Runs COMMANDS (bash, cwd REPO_COPY) in a private mount namespace where the system's Open MPI,
# PMIx, HDF5, hwloc plugins, /opt (Kokkos installs) and the folder holding the repository the
# bundle was made from (so setup-on-device.sh must link its path to the copy) are hidden,
# /usr/bin has no MPI launchers, and every library of the bundle's lib-all that the basic tools
# (bash, ctest, python3, tar, xz, git, coreutils) do not need is replaced by an empty file.
# NS_KEEP_EXTRA: extra sonames to keep visible.
set -euo pipefail
COPY=$(cd "$1" && pwd); CMD=$2
ML=/usr/lib/x86_64-linux-gnu
W=$(mktemp -d /tmp/ns-work.XXXXXX)
trap 'rm -rf "$W"' EXIT
# /usr/bin without Open MPI's programs
cp -al /usr/bin "$W/usrbin"
for f in $(dpkg -L openmpi-bin libopenmpi-dev 2>/dev/null | grep '^/usr/bin/'); do rm -f "$W/usrbin/${f##*/}"; done
for f in "$W"/usrbin/*; do
  t=$(readlink -f "$f" 2>/dev/null || true)
  case ${t##*/} in orterun|orted|opal_wrapper|ompi_info|ompi-server|oshmem_info) rm -f "$f" ;; esac
done
rm -f "$W"/usrbin/{mpirun,mpiexec,mpicc,mpicxx,mpic++,mpiCC,mpif77,mpif90,mpifort,orterun,orted,ompi_info,h5pcc,h5pfc}
for f in ${NS_HIDE_BIN-}; do rm -f "$W/usrbin/$f"; done   # e.g. NS_HIDE_BIN="xz unxz"
: > "$W/empty"
# sonames the basic tools need stay visible (a GPU machine's image has its own of those)
tools="bash ctest cmake python3 tar xz git sed grep mawk find df ls hostname date readlink dirname env sort xargs cp ln mkdir rm cat head tail tee id nproc gzip"
{ for t in $tools; do ldd "/usr/bin/$t" 2>/dev/null || true; done
  find /usr/lib/python3.11/lib-dynload /usr/lib/python3/dist-packages/numpy /usr/lib/python3/dist-packages/h5py -name '*.so' -exec ldd {} \; 2>/dev/null
} | awk '$2 == "=>" {print $1}' | sort -u > "$W/keep"
for s in ${NS_KEEP_EXTRA-}; do echo "$s" >> "$W/keep"; done
# hide: every soname of the bundle not in keep (the bundle is the first found .gpu/*.tar.xz)
BUNDLE=$(ls "$COPY"/.gpu/*.tar.xz | head -n1)
REPO_PARENT=$(dirname "$(tar -xJOf "$BUNDLE" gpu/REPO_PATH)")
[[ $REPO_PARENT != / ]] || { echo "check-without-system-mpi: the bundle's repository sits in /, which cannot be hidden" >&2; exit 2; }
case $COPY/ in "$REPO_PARENT"/*) echo "check-without-system-mpi: $COPY is inside $REPO_PARENT, which is hidden: copy it elsewhere" >&2; exit 2 ;; esac
tar -tJf "$BUNDLE" | sed -n 's|^gpu/lib-all/\(..*\)$|\1|p' | sort -u > "$W/bundled"
: > "$W/hide"
while read -r s; do
  grep -qxF "$s" "$W/keep" && continue
  for d in $ML /usr/lib /usr/local/lib /usr/local/cuda/lib64; do [[ -e $d/$s ]] && readlink -f "$d/$s" >> "$W/hide"; done
done < "$W/bundled"
sort -u -o "$W/hide" "$W/hide"
echo "check-without-system-mpi: hiding $(wc -l < "$W/hide") library files; visible from the system: $(comm -12 "$W/bundled" "$W/keep" | tr '\n' ' ')" >&2
unshare -m bash -c '
  set -e
  W=$1; COPY=$2; CMD=$3; REPO_PARENT=$4; ML=/usr/lib/x86_64-linux-gnu
  mount --make-rprivate /
  while read -r f; do mount --bind "$W/empty" "$f"; done < "$W/hide"
  for d in $ML/openmpi $ML/pmix2 $ML/hdf5 $ML/hwloc /usr/share/openmpi /etc/openmpi /opt "$REPO_PARENT"; do
    [[ -d $d ]] && mount -t tmpfs -o size=1m none "$d"
  done
  mount --bind "$W/usrbin" /usr/bin
  # the loader cache as a system without the hidden libraries would have it
  ldconfig -X -C "$W/ld.so.cache" 2>/dev/null; mount --bind "$W/ld.so.cache" /etc/ld.so.cache
  set +e
  cd "$COPY" && bash -c "$CMD"
' ns "$W" "$COPY" "$CMD" "$REPO_PARENT"
