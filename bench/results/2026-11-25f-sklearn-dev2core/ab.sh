#!/bin/bash
# ab.sh REPS: each program alone and throttled under the old (exp, HEAD) and new (main) builds
reps=$1
echo "rep,prog,mode,spin,secs,rc"
for r in $(seq $reps); do
 while IFS='|' read name dir cmd; do
  for lib in old new; do B=/work/exp/build; [ $lib = new ] && B=/work/main/build
  for mode in alone thr; do
   d=$(mktemp -d)
   if [ $mode = thr ]; then export APSHIM_GAT=$d/gat APSHIM_P=2; $B/tests/programs/gat_job 2 600000 >/dev/null 2>&1 & co=$!; sleep 0.2; else export APSHIM_GAT=$d/gat; unset APSHIM_P; co=; fi
   s=$(date +%s.%N)
   (cd $dir && LD_PRELOAD=$B/shim/libapshim.so $cmd > $d/out 2>&1); rc=$?
   e=$(date +%s.%N)
   [ -n "$co" ] && { kill $co; wait $co 2>/dev/null; }
   echo "$r,$name,$mode,$lib,$(echo "$e - $s" | bc),$rc"
   rm -rf $d
  done; done
 done < ${PROGS:-/tmp/sweep/progs.txt}
done
