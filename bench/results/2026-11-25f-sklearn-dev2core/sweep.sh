#!/bin/bash
# sweep.sh REPS SPINS...: each program alone and throttled (gat_job holding half of a P=2 table), one row per run
B=/work/exp/build; reps=$1; shift; spins="$@"
echo "rep,prog,mode,spin,secs,rc"
for r in $(seq $reps); do
 while IFS='|' read name dir cmd; do
  for mode in native one; do
   s=$(date +%s.%N)
   if [ $mode = one ]; then (cd $dir && OMP_NUM_THREADS=1 $cmd > /dev/null 2>&1); rc=$?; else (cd $dir && $cmd > /dev/null 2>&1); rc=$?; fi
   e=$(date +%s.%N); echo "$r,$name,$mode,-,$(echo "$e - $s" | bc),$rc"
  done
  for sc in $spins; do for mode in alone thr; do
   d=$(mktemp -d)
   if [ $mode = thr ]; then export APSHIM_GAT=$d/gat APSHIM_P=2; $B/tests/programs/gat_job 2 600000 >/dev/null 2>&1 & co=$!; sleep 0.2; else export APSHIM_GAT=$d/gat; unset APSHIM_P; co=; fi
   s=$(date +%s.%N)
   (cd $dir && APSHIM_EXP_SPIN=$sc LD_PRELOAD=$B/shim/libapshim.so $cmd > $d/out 2>&1); rc=$?
   e=$(date +%s.%N)
   [ -n "$co" ] && { kill $co; wait $co 2>/dev/null; }
   echo "$r,$name,$mode,$sc,$(echo "$e - $s" | bc),$rc"
   rm -rf $d
  done; done
 done < ${PROGS:-/tmp/sweep/progs.txt}
done
