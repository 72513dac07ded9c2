#!/usr/bin/env bash
# Installs what scripts/bench/run_all.sh compares against, beyond scripts/setup.sh (which
# it runs first: compiler, MPI, HDF5, NumPy, matplotlib and the TensorFlow venv):
#   - PyTorch from Debian (a peer of peers.py under /usr/bin/python3)
#   - PETSc (petsc_sf_bench) and Trilinos Tpetra (tpetra_bench). Debian's Tpetra CMake
#     package loads the Teuchos, KokkosKernels and Epetra ones without depending on
#     their packages, so those are listed too.
#   - linux-perf, for scripts/bench/profile.sh's sampling profile
# Safe to run again. Needs root (or sudo) for apt-get.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bash "$REPO/scripts/setup.sh"

PACKAGES=(python3-torch libpetsc-real-dev libtrilinos-tpetra-dev libtrilinos-teuchos-dev
  libtrilinos-kokkos-kernels-dev libtrilinos-epetra-dev linux-perf)
missing=()
for pkg in "${PACKAGES[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ] || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=()
  [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
  echo "setup-peers: installing ${missing[*]}"
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup-peers: done; run scripts/bench/run_all.sh"
