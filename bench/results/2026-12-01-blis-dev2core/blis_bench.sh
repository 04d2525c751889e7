#!/usr/bin/env bash
# NumPy on Debian's OpenMP BLIS (libblis4-openmp, blis-openmp/libblas.so.3), dyn-var off (the
# default), interleaved repetitions on the 2-core dev VM:
#   solo:  15 products of 900 x 900 (tests/real/numpy_work.py 900 15 1000); natively with one and
#          two threads, and with two threads throttled to allotment 1 (a stand-in co-runner,
#          gat_job, holds the rest of a P = 2 table) under the library before (OLD_LIB) and now.
#   pair:  60 such products beside omp_rounds (libgomp, 2 threads, 600 rounds of dynamic loops) in
#          one table: natively, and both under the library before and now.
# Usage (from the repository root, build/ built): OLD_LIB=/path/to/old/libapshim.so REPS=3 \
#   bash bench/results/2026-12-01-blis-dev2core/blis_bench.sh > raw.csv
set -u
B=/usr/lib/x86_64-linux-gnu/blis-openmp
NEW_LIB=${NEW_LIB:-build/shim/libapshim.so}
REPS=${REPS:-3}
echo "scenario,config,rep,job,wall_s,cpu_s,checksum"
timed() {  # scenario config rep job -- command...: one CSV row
    local sc=$1 cf=$2 rep=$3 job=$4; shift 5
    local out t0 t1 cpu
    out=$( { /usr/bin/time -f "TIME %e %U %S" "$@"; } 2>&1 )
    local line=$(echo "$out" | grep '^TIME')
    local sum=$(echo "$out" | grep -o 'checksum=[^ ]*' | head -1 | cut -d= -f2)
    echo "$sc,$cf,$rep,$job,$(echo $line | awk '{print $2}'),$(echo $line | awk '{printf "%.2f", $3 + $4}'),$sum"
}
corunner() { rm -f /dev/shm/blis-bench-gat; APSHIM_GAT=/dev/shm/blis-bench-gat APSHIM_P=2 build/tests/programs/gat_job 2 120000 > /dev/null & CORUNNER=$!; sleep 0.5; }
W="/usr/bin/python3 tests/real/numpy_work.py 900 15 1000"
W60="/usr/bin/python3 tests/real/numpy_work.py 900 60 1000"
R="build/tests/omp/omp_rounds_gcc 600 16 500"
for rep in $(seq 1 "$REPS"); do
    timed solo native-1-thread "$rep" numpy -- env LD_LIBRARY_PATH=$B OMP_NUM_THREADS=1 $W
    timed solo native-2-threads "$rep" numpy -- env LD_LIBRARY_PATH=$B OMP_NUM_THREADS=2 $W
    for cf in old new; do
        lib=$OLD_LIB; [ $cf = new ] && lib=$NEW_LIB
        corunner
        timed solo "apshim-$cf-throttled" "$rep" numpy -- env LD_LIBRARY_PATH=$B OMP_NUM_THREADS=2 \
            APSHIM_GAT=/dev/shm/blis-bench-gat APSHIM_P=2 LD_PRELOAD=$lib $W
        kill $CORUNNER; wait $CORUNNER 2> /dev/null
    done
    for cf in native old new; do
        rm -f /dev/shm/blis-bench-pair
        pre=""; [ $cf = old ] && pre="LD_PRELOAD=$OLD_LIB"; [ $cf = new ] && pre="LD_PRELOAD=$NEW_LIB"
        name=native; [ $cf != native ] && name="apshim-$cf"
        timed pair "$name" "$rep" numpy -- env $pre APSHIM_GAT=/dev/shm/blis-bench-pair APSHIM_P=2 \
            LD_LIBRARY_PATH=$B OMP_NUM_THREADS=2 $W60 &
        timed pair "$name" "$rep" omp_rounds -- env $pre APSHIM_GAT=/dev/shm/blis-bench-pair APSHIM_P=2 $R &
        wait
    done
done
