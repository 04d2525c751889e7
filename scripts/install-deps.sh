#!/usr/bin/env bash
# Installs everything apshim needs from Debian 12's packages. Idempotent; run as root.
# Skips apt entirely when every package is already present (fast CI re-runs, offline rebuilds).
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config ccache
      libtbb-dev libomp-dev clang libclang-rt-14-dev libunwind-dev catch2 valgrind unzip libhwloc-dev libeigen3-dev
      python3 python3-matplotlib procps
      python3-numpy python3-scipy libopenblas0-openmp libblis4-openmp graphicsmagick imagemagick flexbar python3-sklearn python3-opencv
      tesseract-ocr tesseract-ocr-eng fonts-dejavu-core xtb enfuse fasttree  # real programs: tests/real, bench
      openmpi-bin libopenmpi-dev)  # MPI + OpenMP, each rank a job: omp.gcc.mpi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run this script as root (it uses apt-get)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
