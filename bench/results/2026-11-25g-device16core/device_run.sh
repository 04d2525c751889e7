#!/bin/bash
# Device driver: bench scenarios at P = nproc (16) with the carried build and Debian libraries.
#   bash .dev/run.sh BUDGET_S scenario...      results in $OUT/results.tar.gz, log in $OUT/log.txt
set -u; EXTRA=${EXTRA:-}
R=$PWD; START=$(date +%s); BUDGET=$1; shift
export LD_LIBRARY_PATH=$R/.dev/lib PYTHONUNBUFFERED=1
[ -d /tmp/gm ] || tar xJf .dev/gm.tar.xz -C /tmp
printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/gm:%s/.dev/lib exec /tmp/gm/gm.bin "$@"\n' "$R" > /usr/bin/gm
printf '#!/bin/sh\nexec %s/.dev/lib/flexbar.bin "$@"\n' "$R" > /usr/bin/flexbar
chmod +x /usr/bin/gm /usr/bin/flexbar
PY=$(command -v python3)
if ! /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
  SITE=$($PY -c 'import sklearn,os;print(os.path.dirname(os.path.dirname(sklearn.__file__)))')
  REALPY=$(readlink -f "$PY"); rm -f /usr/bin/python3
  printf '#!/bin/sh\nPYTHONPATH=%s:$PYTHONPATH exec %s "$@"\n' "$SITE" "$REALPY" > /usr/bin/python3; chmod +x /usr/bin/python3
fi
PY=/usr/bin/python3
{ echo "nproc $(nproc)"; uname -a; /usr/bin/python3 --version; head -1 /etc/os-release
  ldd .dev/build/shim/libapshim.so | grep -i 'not found'; ldd /tmp/gm/gm.bin 2>/dev/null | grep -c 'not found'
  /usr/bin/python3 -c 'import sklearn,numpy;print(sklearn.__version__,numpy.__version__)'; ls $(dirname $(dirname $(/usr/bin/python3 -c 'import sklearn;print(sklearn.__file__)')))/scikit_learn.libs
  /usr/bin/gm version | head -1; /usr/bin/flexbar --version 2>&1 | head -2; } >> $OUT/log.txt 2>&1
RES=/tmp/res; mkdir -p $RES
for s in "$@"; do
  now=$(( $(date +%s) - START )); left=$(( BUDGET - now ))
  [ $left -lt 40 ] && { echo "skip $s (left $left s)" >> $OUT/log.txt; continue; }
  echo "== $s at $now s (left $left)" >> $OUT/log.txt
  timeout $left $PY bench/run.py $s --build .dev/build --out $RES/$s $EXTRA >> $OUT/log.txt 2>&1; echo "rc $?" >> $OUT/log.txt
  (cd $RES && tar czf $OUT/results.tar.gz .)
done
echo "done at $(( $(date +%s) - START )) s" >> $OUT/log.txt
