#!/usr/bin/env bash
# Installs dependencies, builds apshim, and runs the main demo (bench/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
./scripts/install-deps.sh
cmake -S . -B build -G Ninja > build.log
cmake --build build -j "$JOBS"
exec ./bench/demo.sh build
