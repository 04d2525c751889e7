#!/bin/bash
# usage: pair2.sh CONFIG TAG   CONFIG: native | a lib path. RcppML (2 threads) + 12 gm blurs in a row, started together.
CFG=$1; TAG=$2; G=/apshim-eigpair-$RANDOM
if [ $CFG = native ]; then PRE=""; else PRE="LD_PRELOAD=$CFG APSHIM_GAT=$G APSHIM_P=2"; fi
( /usr/bin/time -f '%e %U %S' -o /tmp/eig/p2time.r.$TAG env $PRE Rscript /tmp/sweep90/in/rcppml/work.R 2 > /tmp/eig/p2out.r.$TAG 2>&1 ) &
A=$!
( /usr/bin/time -f '%e %U %S' -o /tmp/eig/p2time.g.$TAG bash -c "for i in \$(seq 12); do env $PRE gm convert /tmp/apshim-real-inputs-0/in.ppm -blur 0x24 /tmp/eig/p2.$TAG.ppm || exit 1; done" ) &
B=$!
wait $A $B
read rw ru rs < /tmp/eig/p2time.r.$TAG; read gw gu gs < /tmp/eig/p2time.g.$TAG
echo "$TAG rcppml=$rw ($(python3 -c "print('%.2f'%(($ru+$rs)/$rw))") cpus) gm12=$gw ($(python3 -c "print('%.2f'%(($gu+$gs)/$gw))") cpus) $(md5sum < /tmp/eig/p2out.r.$TAG | cut -c1-8) $(md5sum < /tmp/eig/p2.$TAG.ppm | cut -c1-8)"
