#!/bin/bash
# For compare.py manifests of programs with no self-check (real programs: gm, scikit-learn):
#   same_output.sh KEY PROGRAM [ARG ...]
# Runs PROGRAM, hashes its stdout (with any `time_s=...` field taken out), and exits 0 if the hash
# equals the one the first run with this KEY recorded (in ${SAME_OUTPUT_DIR:-/tmp}/same-output.KEY),
# 1 if not, PROGRAM's status if nonzero. compare.py runs a case natively first, so "pass" under
# the shim means: the same output as the native run.
[ $# -ge 2 ] || { echo "usage: $0 KEY PROGRAM [ARG ...]" >&2; exit 2; }
key=$1; shift
ref=${SAME_OUTPUT_DIR:-/tmp}/same-output.$key
sum=$("$@" | sed -E 's/ ?time_s=[^ ]*//g' | sha256sum | cut -c1-64; exit "${PIPESTATUS[0]}")
st=$?
(( st != 0 )) && exit "$st"
[ -e "$ref" ] || echo "$sum" > "$ref"
[ "$(cat "$ref")" = "$sum" ]
