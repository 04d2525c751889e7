#!/usr/bin/env bash
# Installs dependencies, builds apshim, and runs every test: sanitizer builds (ASan+UBSan and
# TSan) of the unit tests, then the full suite (unit + integration on real TBB/OpenMP programs).
# This is what CI runs (.ci/run). Works from a clean clone as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
./scripts/install-deps.sh

for san in address thread; do
  echo "== unit tests under -fsanitize=$san"
  extra=""
  [ "$san" = address ] && extra="-DCMAKE_CXX_FLAGS=-fsanitize=undefined -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=undefined"
  cmake -S . -B "build-$san" -G Ninja -DAPSHIM_SANITIZE=$san -DAPSHIM_BENCH=OFF $extra > "build-$san.log"
  cmake --build "build-$san" -j "$JOBS" --target unit_tests >> "build-$san.log"
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1" UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --test-dir "build-$san" -L unit -j "$JOBS" --output-on-failure
done

echo "== full suite"
cmake -S . -B build -G Ninja > build.log
cmake --build build -j "$JOBS"
ctest --test-dir build -j "$JOBS" --output-on-failure
