#!/usr/bin/env bash
# Packs into .dev/ (ignored by git) what the bench needs on a machine that has none of this one's
# Debian packages and no compilers: the 16-core machine some sessions are lent (the `device`
# tool). There, with .dev carried: `bash bench/scripts/device_run.sh BUDGET_S SCENARIO...`.
#   bench/scripts/device_pack.sh [BUILD [PEER]]  (BUILD: a built tree, default build; PEER: the folder
#                                                tests/peer/README.md builds the suites in)
# What goes in:
#   .dev/build     the shim, the CLI, gat_job and the workloads, in BUILD's layout (run.py --build)
#   .dev/libs.tar.xz  every library those and Debian's gm and flexbar load, except glibc's own and
#                  libstdc++/libgcc_s (a newer system's serve older programs): the runtimes measured
#                  there are Debian 12's (oneTBB 2021.8, libomp 14, libgomp 12), as here
#   .dev/bin       gm and flexbar; .dev/gm-config GraphicsMagick's configuration; .dev/fonts the
#                  font tests/real/inputs.py draws the OCR page with
#   .dev/peer      with PEER: the built NPB and BOTS suites (npb-*/bin, bots-*/bin, their inputs,
#                  verify.sh, NPB-TBB's verify-tbb.sh, and the manifest PEER/m-SUITE.txt), for tests/peer/compare.py and
#                  pairs.py there (device_run.sh's throttle: and pairs: steps)
# The device tool carries at most 64 MiB with the working tree: the script says what it packed.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
PEER=${2:-}
D=.dev
for f in "$B/shim/libapshim.so" "$B/tools/apshim" "$B/tests/programs/gat_job" "$B/bench/workloads/wl_fib_tbb" \
         /usr/bin/gm /usr/bin/flexbar; do
  [ -e "$f" ] || { echo "device_pack: $f missing (build first; scripts/install-deps.sh for gm, flexbar)" >&2; exit 1; }
done
rm -rf "$D"
mkdir -p "$D/build/shim" "$D/build/tools" "$D/build/tests/programs" "$D/build/bench/workloads" "$D/bin" \
         "$D/lib" "$D/fonts"
cp "$B/shim/libapshim.so" "$D/build/shim/"
cp "$B/tools/apshim" "$D/build/tools/"
cp "$B/tests/programs/gat_job" "$D/build/tests/programs/"
find "$B/bench/workloads" -maxdepth 1 -name 'wl_*' -type f -executable -exec cp {} "$D/build/bench/workloads/" \;
cp /usr/bin/gm /usr/bin/flexbar "$D/bin/"
cp -r /usr/lib/GraphicsMagick-*/config "$D/gm-config"
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$D/fonts/" 2>/dev/null || true
if [ -n "$PEER" ]; then
  for s in npb-clang npb-gcc npb-tbb npb-pstl bots-clang bots-gcc; do
    [ -d "$PEER/$s/bin" ] || continue
    mkdir -p "$D/peer/$s"
    cp -r "$PEER/$s/bin" "$D/peer/$s/"
    cp "$PEER/wrap/verify.sh" "$D/peer/$s/"
    [ "$s" = npb-tbb ] && cp "$PEER/wrap/verify-tbb.sh" "$D/peer/$s/"  # TBB_NUM_THREADS = the CPUs there
    [ -e "$PEER/m-$s.txt" ] && cp "$PEER/m-$s.txt" "$D/peer/$s/manifest.txt"
    [ -d "$PEER/$s/inputs" ] && cp -r "$PEER/$s/inputs" "$D/peer/$s/"
  done
fi

# The libraries: ldd's closure of everything above, glibc and the C++ runtime left to the system.
system='^(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so'
for f in "$D"/build/shim/libapshim.so "$D"/build/tools/apshim "$D"/build/tests/programs/gat_job \
         "$D"/build/bench/workloads/wl_* "$D"/bin/* $(find "$D/peer" -path '*/bin/*' -type f -perm -u+x 2>/dev/null); do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
  [[ $(basename "$lib") =~ $system ]] || cp -L "$lib" "$D/lib/"
done
tar -C "$D" -cJf "$D/libs.tar.xz" lib
git log -1 --format="%h %s" > "$D/commit" 2>/dev/null || true
rm -rf "$D/lib"
echo "device_pack: $(du -sh "$D" | cut -f1) in $D (carry limit 64 MiB with the working tree):"
echo "  $(ls "$D"/build/bench/workloads | wc -l) workloads, $(tar -tJf "$D/libs.tar.xz" | grep -c '\.so') libraries;" \
     "carry [\".dev\"] and run: bash bench/scripts/device_run.sh BUDGET_S SCENARIO..."
