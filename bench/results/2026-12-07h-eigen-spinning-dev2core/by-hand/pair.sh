#!/bin/bash
# usage: pair.sh CONFIG TAG   CONFIG: native | a lib path. RcppML (2 threads) + omp_rounds_gcc 2000 16 500, started together.
CFG=$1; TAG=$2; G=/apshim-eigpair-$RANDOM
if [ $CFG = native ]; then PRE=""; else PRE="LD_PRELOAD=$CFG APSHIM_GAT=$G APSHIM_P=2"; fi
( /usr/bin/time -f '%e %U %S' -o /tmp/eig/ptime.r.$TAG env $PRE Rscript /tmp/sweep90/in/rcppml/work.R 2 > /tmp/eig/pout.r.$TAG 2>&1 ) &
A=$!
( /usr/bin/time -f '%e %U %S' -o /tmp/eig/ptime.o.$TAG env $PRE /work/main/build/tests/omp/omp_rounds_gcc 2000 16 500 > /tmp/eig/pout.o.$TAG 2>/dev/null ) &
B=$!
wait $A $B
read rw ru rs < /tmp/eig/ptime.r.$TAG; read ow ou os < /tmp/eig/ptime.o.$TAG
echo "$TAG rcppml=$rw ($(python3 -c "print('%.2f'%(($ru+$rs)/$rw))") cpus) rounds=$ow ($(python3 -c "print('%.2f'%(($ou+$os)/$ow))") cpus) $(md5sum < /tmp/eig/pout.r.$TAG | cut -c1-8) $(cut -d' ' -f1-5 /tmp/eig/pout.o.$TAG)"
