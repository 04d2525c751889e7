#!/bin/bash
# usage: thr.sh LIB TAG [extra env]  -> throttled RcppML run at allotment 1 on P=2
LIB=$1; TAG=$2; shift 2
G=/apshim-eig-$RANDOM
APSHIM_GAT=$G APSHIM_P=2 /work/main/build/tests/programs/gat_job 2 600000 > /dev/null 2>&1 &
CO=$!; sleep 0.3
/usr/bin/time -f '%e %U %S' -o /tmp/eig/time.$TAG env LD_PRELOAD=$LIB APSHIM_GAT=$G APSHIM_P=2 APSHIM_TRACE=/tmp/eig/trace.$TAG.csv "$@" Rscript /tmp/sweep90/in/rcppml/work.R 2 > /tmp/eig/out.$TAG 2> /tmp/eig/err.$TAG
kill $CO; wait $CO 2>/dev/null
read w u s < /tmp/eig/time.$TAG
echo "$TAG wall=$w cpus=$(python3 -c "print('%.2f'%(($u+$s)/$w))") $(md5sum < /tmp/eig/out.$TAG | cut -c1-8) shimlines=$(grep -c '^apshim' /tmp/eig/err.$TAG)"
