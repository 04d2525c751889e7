#!/usr/bin/env bash
# The two packages a user installs apshim with, built, installed fresh and used on a real program:
#   - the Debian package (cpack -G DEB from BUILD), installed with dpkg -i, removed afterwards;
#   - the Python package (pip install . into a new virtual environment): `apshim` on PATH,
#     `python -m apshim`, apshim.status().
# Each runs tests/omp's omp_contract (a real OpenMP program) under the installed shim and checks
# the output is the one without the shim and the trace shows the shim at work.
# Usage: scripts/test-packages.sh [BUILD]     (run by scripts/test.sh after the build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
PROG="$BUILD/tests/omp/omp_contract_gcc"
WORK=$(mktemp -d /tmp/apshim-packages.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok   $1"; passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi
}
expected=$("$PROG" 2 5000000 2>/dev/null)

run_under() {  # run_under NAME APSHIM_COMMAND...: the program under that apshim, private table
  local name=$1; shift
  local out
  out=$(APSHIM_GAT="$WORK/gat-$name" "$@" run --trace "$WORK/trace-$name.csv" -- "$PROG" 2 5000000 2>/dev/null) || return 1
  [ "$out" = "$expected" ] && [ "$(wc -l < "$WORK/trace-$name.csv")" -gt 2 ]
}

echo "== Debian package"
(cd "$BUILD" && cpack -G DEB > "$WORK/cpack.log")
deb=$(ls "$BUILD"/apshim_*_amd64.deb)
dpkg -r apshim > /dev/null 2>&1 || true
check "dpkg -i $(basename "$deb")" dpkg -i "$deb"
check "the man page is installed (man -w apshim)" man -w apshim
check "/usr/bin/apshim run: same output, traced" run_under deb /usr/bin/apshim
check "a copied apshim finds the installed library through the install prefix" \
  sh -c "cp /usr/bin/apshim '$WORK/apshim-copy' && APSHIM_GAT='$WORK/gat-copy' '$WORK/apshim-copy' run -- '$PROG' 2 5000000 > /dev/null 2>&1"
check "dpkg -r apshim" dpkg -r apshim

echo "== Python package"
python3 -m venv "$WORK/venv"
# The wheel's build in build-pip/, as deep in the tree as build/: with the same compiler and flags
# (pyproject.toml), scripts/test.sh's compiler cache (CMAKE_ARGS) then compiles nothing again.
if "$WORK/venv/bin/pip" install -q . -C build-dir=build-pip > "$WORK/pip.log" 2>&1; then
  check "pip install . into a fresh virtual environment" true
  check "apshim on the environment's PATH: same output, traced" run_under pip "$WORK/venv/bin/apshim"
  check "python -m apshim: same output, traced" run_under module "$WORK/venv/bin/python" -m apshim
  check "apshim.status() returns the table as a dict" "$WORK/venv/bin/python" -c \
    "import apshim, sys; s = apshim.status(gat='$WORK/gat-py'); sys.exit(0 if isinstance(s['jobs'], list) and s['P'] >= 1 else 1)"
else
  tail -20 "$WORK/pip.log"
  if grep -q -i -E "Could not find a version|No matching distribution|Temporary failure|Network is unreachable" "$WORK/pip.log"; then
    echo "SKIP the Python package: its build requirements (scikit-build-core) cannot be fetched from PyPI here"
  else
    check "pip install . into a fresh virtual environment" false
  fi
fi
echo "packages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
