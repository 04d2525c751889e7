#!/bin/bash
# Two sklearn_work.py fits side by side (the second 0.5 s later) per configuration; wall of each.
R=$PWD; W=tests/real/sklearn_work.py; A="60000 150"; T=${T:-90}
one() {  # tag job env...
  local tag=$1 j=$2; shift 2; local t0=$(date +%s.%N)
  env "$@" timeout $T /usr/bin/python3 $W $A > /tmp/sk-$tag-$j.out 2>&1; local rc=$?
  echo "$tag $j rc=$rc wall=$(echo "$(date +%s.%N) - $t0" | bc) $(tail -1 /tmp/sk-$tag-$j.out)"
}
pair() { local tag=$1; shift; one $tag a "$@" & sleep 0.5; one $tag b "$@" & wait; }
for rep in 1 2; do
  pair static$rep OMP_NUM_THREADS=8
  pair apshim$rep LD_PRELOAD=$R/.dev/build/shim/libapshim.so APSHIM_GAT=/tmp/g-new-$rep
  pair alt$rep LD_PRELOAD=$R/.dev/old/libapshim.so APSHIM_GAT=/tmp/g-old-$rep
done
T=60 pair native1 X=1
