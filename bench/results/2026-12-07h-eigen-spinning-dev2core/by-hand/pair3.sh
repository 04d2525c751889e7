#!/bin/bash
# usage: pair3.sh CONFIG TAG   CONFIG: native | a lib path. obabel QEq (Eigen LU) twice in a row + 12 gm blurs in a row, started together.
CFG=$1; TAG=$2; G=/apshim-obpair-$RANDOM
if [ $CFG = native ]; then PRE=""; else PRE="LD_PRELOAD=$CFG APSHIM_GAT=$G APSHIM_P=2"; fi
mkdir -p /tmp/eig/p3.$TAG; cd /tmp/eig/p3.$TAG
( /usr/bin/time -f '%e %U %S' -o /tmp/eig/p3.$TAG/time.ob bash -c "for i in 1 2; do env $PRE obabel /tmp/eigsweep/in/obabel/w12.xyz --partialcharge qeq -omol2 -O out\$i.mol2 2>/dev/null || exit 1; done" ) &
A=$!
( /usr/bin/time -f '%e %U %S' -o /tmp/eig/p3.$TAG/time.gm bash -c "for i in \$(seq 12); do env $PRE gm convert /tmp/apshim-real-inputs-0/in.ppm -blur 0x24 /tmp/eig/p3.$TAG/g.ppm || exit 1; done" ) &
B=$!
wait $A $B
read ow ou os < time.ob; read gw gu gs < time.gm
echo "$TAG obabel2=$ow ($(python3 -c "print('%.2f'%(($ou+$os)/$ow))") cpus) gm12=$gw ($(python3 -c "print('%.2f'%(($gu+$gs)/$gw))") cpus) $(cat out1.mol2 out2.mol2 | md5sum | cut -c1-8) $(md5sum < g.ppm | cut -c1-8)"
