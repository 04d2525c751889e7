#!/bin/bash
# cmp2.sh DIR LIST: each program throttled, base vs new library, interleaved; rc, wall
dir=$1; list=$2
cd $dir
while read -r name rest; do
  for lib in /tmp/base/build/shim/libapshim.so /work/main/build/shim/libapshim.so; do
    tag=$([ $lib = /tmp/base/build/shim/libapshim.so ] && echo base || echo roots)
    rm -f /tmp/explore/t.gat
    APSHIM_GAT=/tmp/explore/t.gat APSHIM_P=2 /work/main/build/tests/programs/gat_job 2 600000 > /dev/null 2>&1 & cr=$!
    sleep 0.3
    s=$(date +%s.%N)
    timeout 120 env LD_PRELOAD=$lib APSHIM_GAT=/tmp/explore/t.gat APSHIM_P=2 bash -c "./$rest" > /tmp/explore/o.txt 2>&1; rc=$?
    e=$(date +%s.%N)
    printf "%-18s %-6s rc=%s %6.2f\n" $name $tag $rc $(echo "$e - $s" | bc)
    kill $cr; wait $cr 2>/dev/null
  done
done < $list
