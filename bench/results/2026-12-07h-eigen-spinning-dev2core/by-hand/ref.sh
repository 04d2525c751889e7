#!/bin/bash
# usage: ref.sh THREADS TAG -> native RcppML run
/usr/bin/time -f '%e %U %S' -o /tmp/eig/time.$2 Rscript /tmp/sweep90/in/rcppml/work.R $1 > /tmp/eig/out.$2 2>&1
read w u s < /tmp/eig/time.$2
echo "$2 wall=$w cpus=$(python3 -c "print('%.2f'%(($u+$s)/$w))") $(md5sum < /tmp/eig/out.$2 | cut -c1-8)"
