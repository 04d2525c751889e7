#!/bin/bash
# GOMP_SPINCOUNT A/B for gcc NPB W, alone (shim, table of its own) and throttled (gat_job 2 holding P=2)
B=/work/main/build; cd /work/peer
echo "prog,mode,spincount,rep,seconds"
for rep in 1 2 3; do
 for prog in sp.W bt.W lu.W cg.W mg.W ep.W; do
  for sc in 10000 3000 1000 300; do
   t=$( { APSHIM_GAT=/tmp/ab-$RANDOM$RANDOM.gat GOMP_SPINCOUNT=$sc LD_PRELOAD=$B/shim/libapshim.so /usr/bin/time -f "%e" npb-omp-gcc/bin/$prog > /dev/null; } 2>&1 | tail -1 )
   echo "$prog,alone,$sc,$rep,$t"
   G=/tmp/abt-$RANDOM$RANDOM.gat; APSHIM_GAT=$G APSHIM_P=2 $B/tests/programs/gat_job 2 120000 & GJ=$!; sleep 0.2
   t=$( { APSHIM_GAT=$G APSHIM_P=2 GOMP_SPINCOUNT=$sc LD_PRELOAD=$B/shim/libapshim.so timeout 100 /usr/bin/time -f "%e" npb-omp-gcc/bin/$prog > /dev/null; } 2>&1 | tail -1 )
   kill $GJ; wait $GJ 2>/dev/null
   echo "$prog,throttled,$sc,$rep,$t"
  done
  t=$( { OMP_NUM_THREADS=1 /usr/bin/time -f "%e" npb-omp-gcc/bin/$prog > /dev/null; } 2>&1 | tail -1 ); echo "$prog,one-thread-native,-,$rep,$t"
  t=$( { /usr/bin/time -f "%e" npb-omp-gcc/bin/$prog > /dev/null; } 2>&1 | tail -1 ); echo "$prog,native,-,$rep,$t"
 done
done
