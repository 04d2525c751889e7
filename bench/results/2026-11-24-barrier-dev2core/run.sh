#!/bin/bash
# run.sh MODE... : each program of $PROGS (default: progs.txt here) throttled (gat_job holds desire 2 at P=2) under the shim,
# once per KMP_USE_YIELD mode (def = unset); prints name mode wall user sys invol-csw verify-ok
B=${B:-/work/main/build}
PROGS=${PROGS:-$(cd "$(dirname "$0")" && pwd)/progs.txt}
cd "${PEER:-/work/peer}"  # where the BOTS and NPB builds are (tests/peer/README.md)
while read -r name cmd; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  for m in "$@"; do
    for thr in throttled; do
      d=$(mktemp -d); export APSHIM_GAT=$d/gat APSHIM_P=2
      $B/tests/programs/gat_job 2 600000 & co=$!; sleep 0.3
      if [ $m = def ]; then unset KMP_USE_YIELD; elif [ $m = native ]; then :; else export KMP_USE_YIELD=$m; fi
      pre=${SHIM:-$B/shim/libapshim.so}; [ $m = native ] && pre=
      LD_PRELOAD=$pre timeout 120 /usr/bin/time -o $d/time -f "%e %U %S %c" bash -c "$cmd" > $d/out 2>&1; out=$(cat $d/time)
      ok=$(grep -c -i "successful\|verification *= *success\|result: *ok\|verified" $d/out)
      kill $co; wait $co 2>/dev/null; unset KMP_USE_YIELD
      echo "$name $m $out ok=$ok"
      rm -rf $d
    done
  done
done < "$PROGS"
