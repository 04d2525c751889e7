#!/usr/bin/env bash
# Runs bench scenarios on the lent 16-core machine with what bench/scripts/device_pack.sh packed
# into .dev (carried there). From the repository's root, as root (it installs gm and flexbar
# wrappers into /usr/bin where those are missing, as bench/real_job.py calls them there):
#   bash bench/scripts/device_run.sh BUDGET_S SCENARIO [SCENARIO...]
#   EXTRA="--reps 3 --configs native,static,apshim" BENCH_REPEAT=4 bash bench/scripts/device_run.sh 480 real_gm_gm
# Each scenario runs through bench/run.py at P = the machine's CPUs, while BUDGET_S lasts (one
# that would start with under 40 s left is skipped, said in the log). Results: $OUT/results.tar.gz
# (refreshed after each scenario, so a run cut short still brings back what finished), the log
# with the machine's description: $OUT/log.txt. Without $OUT (a try on this machine): ./.dev/out.
set -u
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: $0 BUDGET_S SCENARIO..." >&2; exit 2; }
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
{
  echo "== machine"; nproc; uname -a; head -2 /etc/os-release; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|NUMA node\(s\)'
  echo "apshim packed at: $(cat .dev/commit 2>/dev/null)"; echo "missing libraries:"
  ldd .dev/build/shim/libapshim.so .dev/bin/gm .dev/bin/flexbar | grep 'not found' || echo "  none"
  /usr/bin/gm version | head -1; /usr/bin/flexbar --version 2>&1 | sed -n 2p
} >> "$LOG" 2>&1
RES=$DEV/results
mkdir -p "$RES"
for s in "$@"; do
  left=$(( BUDGET - ($(date +%s) - START) ))
  if [ $left -lt 40 ]; then echo "== skip $s: $left s left" >> "$LOG"; continue; fi
  echo "== $s, $left s left" >> "$LOG"
  # shellcheck disable=SC2086  # EXTRA holds several arguments
  timeout "$left" python3 bench/run.py "$s" --build .dev/build --out "$RES/$s" $EXTRA >> "$LOG" 2>&1
  echo "rc $? after $(( $(date +%s) - START )) s" >> "$LOG"
  tar -C "$RES" -czf "$OUT/results.tar.gz" .
done
echo "== done after $(( $(date +%s) - START )) s" >> "$LOG"
