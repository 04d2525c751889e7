#!/usr/bin/env bash
# Every scenario of bench/scenarios.py into one dated results folder, plus the P = 8 (APSHIM_P)
# versions of the experiments that P = 2 cannot show (the desire's climb in O1 and Fig. 7-4).
#
#   bench/scripts/run_all.sh [BUILD] [OUTDIR] [extra run.py options, e.g. --quick or --reps 3]
#
# OUTDIR defaults to bench/results/<date>-<hostname>-<nproc>core. Writes OUTDIR/<scenario>/
# (summary.md, raw.csv, *.png, traces) and OUTDIR/index.md with every scenario's first table.
# One scenario at a time (BENCH_NICE=19 to run niced). Estimated time: bench/README.md.
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$HERE/../build}
OUT=${2:-$HERE/results/$(date +%Y-%m-%d)-$(hostname -s)-$(nproc)core}
shift $(( $# < 2 ? $# : 2 ))
RUN=(nice -n "${BENCH_NICE:-0}" /usr/bin/python3 "$HERE/run.py")  # BENCH_NICE=19: be kind to a shared machine
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/apshim-run_all-XXXXXX")  # stdout of each run (the tables are in summary.md)
mkdir -p "$OUT"
SCENARIOS=$("${RUN[@]}" --list --build "$BUILD" | awk '/^Scenarios/{s=1;next} /^$/{s=0} s && $1 !~ /^configs:/ {print $1}')
failed=()
run() {  # name outdir-name [options]
    local name=$1 dir=$2; shift 2
    echo "== $dir" >&2
    "${RUN[@]}" "$name" --build "$BUILD" --out "$OUT/$dir" "$@" > "$LOGS/$dir.log" || failed+=("$dir")
}
for s in $SCENARIOS; do run "$s" "$s" "$@"; done
run o1_allprocs o1_allprocs-P8 --P 8 "$@"
run fig7_4 fig7_4-P8 --P 8 "$@"
{
    echo "# Results $(date +%Y-%m-%d), $(nproc) cores"
    echo
    echo "One folder per scenario (summary.md, raw.csv, response.png, traces*.png, analysis plots);"
    echo "\`*-P8\`: the same scenario with APSHIM_P=8 (the shim's table has 8 processors on $(nproc) cores)."
    echo "Machine: see any machine.txt. Produced by bench/scripts/run_all.sh."
    for d in "$OUT"/*/; do
        [ -f "$d/summary.md" ] || continue
        echo
        echo "## [$(basename "$d")]($(basename "$d")/summary.md)"
        echo
        awk 'NR>2 && /^\|/ {print; t=1; next} t {exit}' "$d/summary.md"
    done
} > "$OUT/index.md"
echo "index: $OUT/index.md" >&2
if [ ${#failed[@]} -gt 0 ]; then echo "FAILED: ${failed[*]} (stdout in $LOGS)" >&2; exit 1; fi
