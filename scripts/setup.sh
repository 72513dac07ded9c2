#!/usr/bin/env bash
# Installs what shardops needs on Debian 12; safe to run again (does nothing when all is there).
#   1. Debian packages: compiler, CMake, Kokkos, Open MPI, parallel HDF5, test/bench libraries,
#      clang-format 14, Python 3 with NumPy and h5py (the tests make their HDF5 files with h5py),
#      pybind11, mpi4py and pytest (the Python module, python/, and its tests),
#      and slurm-wlm + munge (the slurm_sbatch test starts a single-node Slurm to run the
#      sbatch scripts in scripts/slurm; nothing is started here), and clang 14 with its
#      sanitizer and libFuzzer runtimes (the fuzz tests build fuzz/ with it),
#      and acl (setfacl: a test writes outputs into a folder with a default ACL).
#   2. Optionally (SHARDOPS_WITH_TF=1, the default) a venv with tensorflow-cpu at
#      $SHARDOPS_TF_VENV (default: <repo>/.venv-tf), the reference for the TensorFlow
#      comparison tests. Without network access this step prints a note and those tests are skipped.
# Needs root (or sudo) for apt-get.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PACKAGES=(
  g++ make cmake git ca-certificates
  libtrilinos-kokkos-dev libopenmpi-dev openmpi-bin libhdf5-openmpi-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libyaml-cpp-dev
  clang-format clang-14 libclang-rt-14-dev
  python3 python3-numpy python3-h5py python3-venv python3-pip python3-matplotlib
  python3-dev pybind11-dev python3-mpi4py python3-pytest
  slurm-wlm munge iproute2 acl
  hdf5-plugin-lzf liblzf1 nlohmann-json3-dev libxxhash-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" != installed ]; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  echo "setup: installing ${missing[*]}"
  "${SUDO[@]}" apt-get update -qq
  for pkg in "${missing[@]}"; do
    policy=$(apt-cache policy "$pkg" 2>/dev/null)
    if ! grep -q 'Candidate: [^(]' <<<"$policy"; then
      echo "setup: apt has no package named '$pkg' (is this Debian 12?)" >&2
      exit 1
    fi
  done
  log=$(mktemp /tmp/shardops-apt.XXXXXX.log)
  if ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "setup: apt-get install failed (full log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
fi
echo "setup: Debian packages ok"

if [ "${SHARDOPS_WITH_TF:-1}" != 1 ]; then
  echo "setup: SHARDOPS_WITH_TF=${SHARDOPS_WITH_TF}: no TensorFlow venv"
  exit 0
fi

# A plain venv, not --system-site-packages: tensorflow-cpu needs a newer NumPy than Debian's.
VENV=${SHARDOPS_TF_VENV:-$REPO/.venv-tf}
has_tf() { TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" -c 'import tensorflow, h5py, numpy' >/dev/null 2>&1; }
if has_tf; then
  echo "setup: TensorFlow venv ok ($VENV)"
  exit 0
fi
if ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  /usr/bin/python3 -m venv --clear "$VENV"
fi
echo "setup: pip install tensorflow-cpu h5py numpy into $VENV (a few minutes, once)"
log=$(mktemp /tmp/shardops-pip.XXXXXX.log)
if "$VENV/bin/python" -m pip install -q --disable-pip-version-check tensorflow-cpu h5py numpy >"$log" 2>&1 && has_tf; then
  rm -f "$log"
  echo "setup: TensorFlow venv ok ($VENV)"
else
  echo "setup: NOTE: could not install tensorflow-cpu into $VENV (no PyPI access?); the TensorFlow" \
    "comparison tests will be skipped. pip log: $log"
fi
exit 0
