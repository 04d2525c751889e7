#!/usr/bin/env python3
"""Runs another project's test executables natively and under the shim; the pass/fail sets
must be equal. Third-party code is never part of this repository: build the suite yourself
(see tests/peer/README.md) and point this script at the folder of test executables.

    tests/peer/compare.py BUILD_DIR TEST_DIR [--glob 'test_*'] [--timeout 300] [--P N]
                          [--results FILE.md] [--reps 1]
"""
import argparse
import fnmatch
import os
import subprocess
import sys
import tempfile
import time


def run(path, env, timeout):
    t = time.monotonic()
    try:
        r = subprocess.run([path], env=env, capture_output=True, text=True, timeout=timeout, cwd=os.path.dirname(path))
        return ("pass" if r.returncode == 0 else f"fail({r.returncode})"), time.monotonic() - t
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("test_dir")
    ap.add_argument("--glob", default="test_*")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--P", type=int, default=None)
    ap.add_argument("--results", default=None)
    args = ap.parse_args()
    lib = os.path.join(os.path.abspath(args.build), "shim", "libapshim.so")
    tests = sorted(os.path.join(root, f) for root, _, files in os.walk(args.test_dir) for f in files
                   if fnmatch.fnmatch(f, args.glob) and os.access(os.path.join(root, f), os.X_OK)
                   and not f.endswith((".so", ".cmake", ".txt")))
    base = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k != "LD_PRELOAD"}
    rows, differ = [], []
    for i, t in enumerate(tests):
        native, tn = run(t, base, args.timeout)
        env = dict(base, LD_PRELOAD=lib, APSHIM_GAT=os.path.join(tempfile.mkdtemp(prefix="apshim-peer-"), "gat"))
        if args.P:
            env["APSHIM_P"] = str(args.P)
        shim, ts = run(t, env, args.timeout)
        name = os.path.relpath(t, args.test_dir)
        rows.append((name, native, shim, tn, ts))
        if native != shim:
            differ.append(name)
        print(f"[{i + 1}/{len(tests)}] {name:<50} native {native:<10} shim {shim:<10} {tn:6.1f}s {ts:6.1f}s", flush=True)
    lines = [f"| test | native | under the shim | native s | shim s |", "|---|---|---|---:|---:|"]
    lines += [f"| {n} | {a} | {b} | {x:.1f} | {y:.1f} |" for n, a, b, x, y in rows]
    summary = (f"{len(rows)} tests; native passed {sum(r[1] == 'pass' for r in rows)}, under the shim passed "
               f"{sum(r[2] == 'pass' for r in rows)}; differing outcomes: {len(differ)} {differ}")
    print(summary)
    if args.results:
        with open(args.results, "w") as f:
            f.write(summary + "\n\n" + "\n".join(lines) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
