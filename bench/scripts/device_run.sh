#!/usr/bin/env bash
# Runs bench scenarios and peer checks on the lent 16-core machine with what
# bench/scripts/device_pack.sh packed into .dev (carried there). From the repository's root, as
# root (it installs gm and flexbar wrappers into /usr/bin where those are missing, as
# bench/real_job.py calls them there):
#   bash bench/scripts/device_run.sh BUDGET_S STEP [STEP...]
#   EXTRA="--reps 3 --configs native,static,apshim" BENCH_REPEAT=4 bash bench/scripts/device_run.sh 480 real_gm_gm
# A STEP is one of:
#   SCENARIO          bench/run.py SCENARIO at P = the machine's CPUs ($EXTRA appended)
#   throttle:SUITE    tests/peer/compare.py on .dev/peer/SUITE (its manifest.txt), each case natively
#                     and under the shim at allotment 1 (P-1 stand-in co-runners): outcome and CPUs
#   throttle:real     the same for real programs, output compared with the native run's: gm blur
#                     and, where this machine's Python has it, scikit-learn
#   throttle:issue    issue #13's yardstick at allotment 1: NPB EP.W (clang, gcc) and the full-size
#                     gm blur (1600x1200), long enough that the job's start weighs little
#   pairs:npb         tests/peer/pairs.py on NAS pairs (class A), native / static / apshim (the shim
#                     jobs' traces kept: traces-pairs-npb/, likewise for pairs:bots)
#   pairs:bots        the same on BOTS pairs (health + sort, fft + sparselu: the issue's stalls)
#   pairs:sklearn     two scikit-learn fits (this machine's Python) side by side
#   pairs:sklearn-dyn the same, static against apshim and apshim with OMP_DYNAMIC=true
#                     (PAIRS_SHIM_ENV=VAR=VALUE: one more variable for the shim, APSHIM_WIDTH_CHECK=0 say)
# A throttle step may end in +VAR=VALUE, one more variable for the shim (throttle:issue+APSHIM_CONFINE_CHECK=0:
# the same runs without the confinement check's unconfined windows); its results and traces carry
# the suffix in their names. THROTTLE_REPS (default 1) runs each case that many times each way.
# Throttle steps keep every shim run's trace (traces-NAME/CASE.REP.PID.csv: the unconfined phases
# cycle by cycle); THROTTLE_TRACE=0 runs them untraced, as users run (the trace costs about 0.03
# CPUs at 16 threads: its threads_running column reads every thread's /proc stat each cycle), and
# names the results NAME-notrace.
# Steps run in order while BUDGET_S lasts (one that would start with under 40 s left is skipped,
# said in the log); each is bounded by what is left. Results: $OUT/results.tar.gz (refreshed after
# each step, so a run cut short still brings back what finished) and $OUT/log.txt with the
# machine's description. Without $OUT (a try on this machine): ./.dev/out.
set -u
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: $0 BUDGET_S STEP..." >&2; exit 2; }
BUDGET=$1; shift
START=$(date +%s)
R=$PWD
OUT=${OUT:-$R/.dev/out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
DEV=/tmp/apshim-dev
mkdir -p "$DEV"
[ -d "$DEV/lib" ] || tar -C "$DEV" -xJf .dev/libs.tar.xz
export LD_LIBRARY_PATH=$DEV/lib PYTHONUNBUFFERED=1 EXTRA=${EXTRA:-}
# gm reads its configuration from MAGICK_CONFIGURE_PATH; the wrappers keep the carried libraries
# to gm and flexbar, whatever their caller's environment.
for p in gm flexbar; do
  if [ ! -e /usr/bin/$p ]; then
    printf '#!/bin/sh\nMAGICK_CONFIGURE_PATH=%s LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
      "$R/.dev/gm-config" "$DEV/lib" "$R/.dev/bin/$p" > /usr/bin/$p
    chmod +x /usr/bin/$p
  fi
done
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
[ -e $font ] || { mkdir -p "$(dirname $font)" && cp .dev/fonts/DejaVuSans.ttf $font 2>/dev/null; }
# A Python with scikit-learn, for the steps that use it (Debian's, else a virtual environment's).
PY=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import sklearn' 2>/dev/null; then PY=$(command -v "$p"); break; fi
done
export BENCH_PYTHON=${PY:-/usr/bin/python3}
CPUS=$(nproc)
{
  echo "== machine"; nproc; uname -a; head -2 /etc/os-release; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|NUMA node\(s\)'
  echo "apshim packed at: $(cat .dev/commit 2>/dev/null)"; echo "missing libraries:"
  ldd .dev/build/shim/libapshim.so .dev/bin/gm .dev/bin/flexbar | grep 'not found' || echo "  none"
  /usr/bin/gm version | head -1; /usr/bin/flexbar --version 2>&1 | sed -n 2p
  echo "python with scikit-learn: ${PY:-none}"
  [ -n "$PY" ] && "$PY" -c 'import sklearn, numpy; print("scikit-learn", sklearn.__version__, "numpy", numpy.__version__)'
} >> "$LOG" 2>&1
RES=$DEV/results
mkdir -p "$RES"
THROTTLE="--P $CPUS --corunner $CPUS --corunners $((CPUS - 1)) --reps ${THROTTLE_REPS:-1}"

# compare.py at allotment 1 (THROTTLE) on a manifest: DIR MANIFEST NAME TIMEOUT_S TITLE SECONDS_LEFT
# (SHIM_ENV, set by step: one more VAR=VALUE for the shim, or empty)
throttle() {
  local name=$3${SHIM_ENV:+-${SHIM_ENV//[^A-Za-z0-9_]/_}} traces untraced=
  if [ "${THROTTLE_TRACE:-1}" = 0 ]; then
    name=$name-notrace traces=(--no-trace) untraced=", untraced"
  else
    traces=(--keep-traces "$RES/traces-$name")
  fi
  timeout "$6" python3 tests/peer/compare.py .dev/build "$1" --manifest "$2" --timeout "$4" $THROTTLE \
    ${SHIM_ENV:+--shim-env "$SHIM_ENV"} "${traces[@]}" \
    --results "$RES/throttle-$name.md" --title "$5 at allotment 1 of $CPUS${SHIM_ENV:+, $SHIM_ENV}$untraced"
}

# A manifest line: gm's three blurs of IN/in.ppm, output compared with the native run's (KEY).
gm_case() {  # NAME KEY IN
  echo "$1 $R/tests/peer/same_output.sh $2 /usr/bin/gm convert $3/in.ppm -blur 0x24 -blur 0x24 -blur 0x24 ppm:-"
}

# Two scikit-learn fits side by side through pairs.py: OUT SECONDS_LEFT [pairs.py options]
sklearn_pair() {
  [ -n "$PY" ] || { echo "no Python with scikit-learn here"; return 1; }
  local out=$1 left=$2
  shift 2
  timeout "$left" python3 tests/peer/pairs.py .dev/build --cwd "$R" --reps 2 --timeout 25 --out "$RES/$out" "$@" \
    --pair "sklearn+sklearn" "$PY tests/real/sklearn_work.py 60000 150" "$PY tests/real/sklearn_work.py 60000 150"
}

step() {  # STEP SECONDS_LEFT
  local s=${1%%+*} left=$2 peer=$R/.dev/peer
  SHIM_ENV=
  [[ $1 == *+* ]] && SHIM_ENV=${1#*+}
  case $s in
    throttle:real)
      local in=$DEV/real m=$DEV/real.manifest
      python3 bench/real_job.py prepare "$in" --quick
      gm_case gm-blur gm "$in" > "$m"
      [ -n "$PY" ] && echo "sklearn-hgb $R/tests/peer/same_output.sh sk $PY $R/tests/real/sklearn_work.py 20000 60" >> "$m"
      throttle "$R" "$m" real 60 "real programs" "$left" ;;
    throttle:issue)
      local in=$DEV/real-full m=$DEV/issue.manifest
      python3 bench/real_job.py prepare "$in"
      {
        gm_case gm-blur-1600x1200 gmfull "$in"
        echo "ep.W-clang $peer/npb-clang/verify.sh $peer/npb-clang/bin/ep.W"
        echo "ep.W-gcc $peer/npb-gcc/verify.sh $peer/npb-gcc/bin/ep.W"
      } > "$m"
      throttle "$R" "$m" issue 60 "issue #13's yardstick" "$left" ;;
    throttle:*)
      local suite=${s#throttle:}
      throttle "$peer/$suite" "$peer/$suite/manifest.txt" "$suite" 40 "$suite" "$left" ;;
    pairs:npb)
      local a=()
      for cc in clang gcc; do
        a+=(--pair "ep.A+cg.A $cc" "npb-$cc/verify.sh npb-$cc/bin/ep.A" "npb-$cc/verify.sh npb-$cc/bin/cg.A")
        a+=(--pair "mg.A+ft.A $cc" "npb-$cc/verify.sh npb-$cc/bin/mg.A" "npb-$cc/verify.sh npb-$cc/bin/ft.A")
        a+=(--pair "ep.A+bt.W $cc" "npb-$cc/verify.sh npb-$cc/bin/ep.A" "npb-$cc/verify.sh npb-$cc/bin/bt.W")
      done
      timeout "$left" python3 tests/peer/pairs.py .dev/build --cwd "$peer" --reps 3 --timeout 60 --out "$RES/pairs-npb" \
        --keep-traces "$RES/traces-pairs-npb" "${a[@]}" ;;
    pairs:bots)
      local b=bots-clang/verify.sh i=bots-clang/inputs
      timeout "$left" python3 tests/peer/pairs.py .dev/build --cwd "$peer" --reps 3 --timeout 60 --out "$RES/pairs-bots" \
        --keep-traces "$RES/traces-pairs-bots" \
        --pair "health+sort clang" "$b bots-clang/bin/health.clang.omp-tasks-manual -f $i/health/small.input -c" \
                                   "$b bots-clang/bin/sort.clang.omp-tasks -n 8388608 -c" \
        --pair "fft+sparselu clang" "$b bots-clang/bin/fft.clang.omp-tasks -n 2097152 -c" \
                                    "$b bots-clang/bin/sparselu.clang.single-omp-tasks -n 40 -m 32 -c" ;;
    pairs:sklearn)
      sklearn_pair pairs-sklearn "$left" ;;
    pairs:sklearn-dyn)
      sklearn_pair pairs-sklearn-dyn "$left" --configs static,apshim,apshim-dynamic ${PAIRS_SHIM_ENV:+--shim-env "$PAIRS_SHIM_ENV"} ;;
    *)
      # shellcheck disable=SC2086  # EXTRA holds several arguments
      timeout "$left" python3 bench/run.py "$s" --build .dev/build --out "$RES/$s" $EXTRA ;;
  esac
}

for s in "$@"; do
  left=$(( BUDGET - ($(date +%s) - START) ))
  if [ $left -lt 40 ]; then echo "== skip $s: $left s left" >> "$LOG"; continue; fi
  echo "== $s, $left s left" >> "$LOG"
  step "$s" "$left" >> "$LOG" 2>&1
  echo "rc $? after $(( $(date +%s) - START )) s" >> "$LOG"
  tar -C "$RES" -czf "$OUT/results.tar.gz" .
done
echo "== done after $(( $(date +%s) - START )) s" >> "$LOG"
