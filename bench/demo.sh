#!/usr/bin/env bash
# The GAT demo: three stand-in jobs arrive and leave on an 8-processor table; watch algorithm DP
# keep the allotments fair, efficient and conservative (Sen Fig. 5-2 style).
set -euo pipefail
BUILD=${1:-build}
GAT=$(mktemp -u /tmp/apshim-demo-XXXXXX)
export APSHIM_GAT=$GAT APSHIM_P=8
job() { "$BUILD/tests/programs/gat_job" "$@" > /dev/null & }
show() { echo "--- $1"; "$BUILD/tools/apshim" status | tail -n +2; }
job 2 4000; sleep 0.3; show "job A arrives wanting 2"
job 8 2000; sleep 0.3; show "job B arrives wanting 8: takes the 6 free processors"
job 8 1000; sleep 0.3; show "job C arrives wanting 8: B and C split what A does not use"
sleep 1.2;  show "job C left: B gets its share back"
sleep 1.0;  show "job B left: A keeps its 2 (it wants no more)"
wait
rm -f "$GAT"
