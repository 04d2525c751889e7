#!/usr/bin/env bash
# The main demo (README's first command runs it): co-running parallel programs (the bench's
# workloads, bench/workloads) with and without the shim, against the baselines a user would
# otherwise pick, then a short look at the table. About two minutes on 2 idle cores. Full runs: bench/run.py SCENARIO, bench/run.py --list, bench/scripts/run_all.sh (bench/README.md).
set -euo pipefail
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE/results/latest}
PY=/usr/bin/python3

echo "== Two oneTBB jobs co-running (fib, then a parallel-for arriving 0.1 s later)"
$PY "$HERE/run.py" tbb_pair --quick --build "$BUILD" --out "$OUT/tbb_pair"
echo
echo "== Two OpenMP (clang/libomp) jobs co-running, against passive waiting, static split, OMP_DYNAMIC load_balance"
$PY "$HERE/run.py" omp_pair --quick --build "$BUILD" --out "$OUT/omp_pair"
echo
echo "== The same pair built with gcc (libgomp, the OpenMP runtime of most Debian programs, whose idle threads spin before they sleep)"
$PY "$HERE/run.py" gomp_pair --quick --build "$BUILD" --out "$OUT/gomp_pair"
echo
echo "== Sen P3: each job alone under the shim against the greedy bound T1/P̄ + T∞"
$PY "$HERE/run.py" p3_greedy --quick --build "$BUILD" --out "$OUT/p3_greedy"
echo
echo "== The allocation table while three stand-in jobs come and go (algorithm DP)"
GAT=$(mktemp -u /tmp/apshim-demo-XXXXXX)
export APSHIM_GAT=$GAT APSHIM_P=8
job() { "$BUILD/tests/programs/gat_job" "$@" > /dev/null & }
show() { echo "--- $1"; "$BUILD/tools/apshim" status | tail -n +2; }
job 2 3000; sleep 0.3; show "job A arrives wanting 2"
job 8 2200; sleep 0.3; show "job B arrives wanting 8: takes the 6 free processors"
job 8 700;  sleep 0.3; show "job C arrives wanting 8: B and C split what A does not use"
sleep 0.9;  show "job C left: B gets its share back"
wait
rm -f "$GAT"
echo
echo "Plots and raw CSV: $OUT/*/ (response.png, traces.png, raw.csv, summary.md)"
