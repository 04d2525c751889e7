#!/bin/bash
# The runs behind this folder's CSVs, one row per run: rep,prog,mode,spin,secs,rc.
#   runs.sh spin REPS SPINS...   native, one thread, then under an experimental build (f891206 taking
#                                GOMP_SPINCOUNT's default from APSHIM_EXP_SPIN, not committed) alone
#                                and throttled at each count (spin-sweep-*.csv)
#   runs.sh ab REPS              alone and throttled under the old build (f891206) and the new one (ab-programs.csv)
# Programs: PROGS (default programs.txt beside this), lines "name|directory|command".
# Throttled = gat_job 2 holding half of a P=2 table, so the program's allotment is 1.
kind=$1 reps=$2; shift 2
OLD=/work/exp/build NEW=/work/main/build
one_run() {  # one_run REP NAME DIR CMD MODE BUILD LABEL [SPIN]
  local r=$1 name=$2 dir=$3 cmd=$4 mode=$5 B=$6 label=$7 sc=$8 d co= s e rc
  d=$(mktemp -d)
  if [ "$mode" = thr ]; then export APSHIM_GAT=$d/gat APSHIM_P=2; $B/tests/programs/gat_job 2 600000 >/dev/null 2>&1 & co=$!; sleep 0.2
  else export APSHIM_GAT=$d/gat; unset APSHIM_P; fi
  s=$(date +%s.%N)
  (cd "$dir" && APSHIM_EXP_SPIN=$sc LD_PRELOAD=$B/shim/libapshim.so $cmd > $d/out 2>&1); rc=$?
  e=$(date +%s.%N)
  [ -n "$co" ] && { kill $co; wait $co 2>/dev/null; }
  echo "$r,$name,$mode,$label,$(echo "$e - $s" | bc),$rc"
  rm -rf $d
}
echo "rep,prog,mode,spin,secs,rc"
for r in $(seq $reps); do
  while IFS='|' read name dir cmd; do
    if [ "$kind" = spin ]; then
      for mode in native one; do
        s=$(date +%s.%N)
        if [ $mode = one ]; then (cd $dir && OMP_NUM_THREADS=1 $cmd > /dev/null 2>&1); rc=$?; else (cd $dir && $cmd > /dev/null 2>&1); rc=$?; fi
        e=$(date +%s.%N); echo "$r,$name,$mode,-,$(echo "$e - $s" | bc),$rc"
      done
      for sc in "$@"; do for mode in alone thr; do one_run $r $name $dir "$cmd" $mode $OLD $sc $sc; done; done
    else
      for lib in old new; do B=$OLD; [ $lib = new ] && B=$NEW
        for mode in alone thr; do one_run $r $name $dir "$cmd" $mode $B $lib; done
      done
    fi
  done < "${PROGS:-$(dirname "$0")/programs.txt}"
done
