#!/usr/bin/env python3
"""Checks the bench workloads: every one of the three builds (oneTBB, libgomp, libomp) prints
exactly one well-formed stdout line, and the same checksum, under every thread count, with
--serial, and under its variants (--schedule static, --reverse, --verify).

    bench/workloads/check_workloads.py BUILD_DIR [--defaults] [--only fib,knary,...]

Without --defaults it uses small arguments (a few seconds in all); with --defaults each
workload runs at its default size (what README.md's table reports; minutes on 2 cores).
Exit status 0 if everything agrees; prints a table (runtime, setting, checksum, time_s).
"""
import argparse
import os
import re
import subprocess
import sys

SMALL = {
    "fib": ["24", "0"],
    "loopy": ["40", "500"],
    "knary": ["6", "4", "1", "5"],
    "cholesky": ["512", "64"],
    "pfor": ["200000", "5"],
    "phases": ["20", "60", "2"],
}
# Extra flag sets per workload whose checksum must equal the plain run's.
VARIANTS = {
    "pfor": [["--schedule", "static"]],
    "phases": [["--reverse"]],
    "cholesky": [["--verify"]],
    "knary": [],
}
LINE = re.compile(r"^(?P<name>[a-z-]+)(?P<args>( -?\d+)*) checksum=(?P<c>\d+) time_s=(?P<t>\d+\.\d+)$")
RUNTIMES = ["tbb", "omp_gcc", "omp_clang"]


def run(argv, env_changes):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "KMP_", "APSHIM_"))}
    env.pop("LD_PRELOAD", None)
    env.update(env_changes)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    lines = p.stdout.splitlines()
    m = LINE.match(lines[0]) if len(lines) == 1 else None
    return p.returncode, m, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--defaults", action="store_true", help="run at the default sizes")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    o = ap.parse_args()
    wdir = os.path.join(o.build, "bench", "workloads")
    names = [n for n in SMALL if not o.only or n in o.only.split(",")]
    bad = 0
    print(f"{'workload':9} {'runtime':10} {'setting':28} {'checksum':>22} {'time_s':>8}")
    for name in names:
        args = [] if o.defaults else SMALL[name]
        ref = None
        for rt in RUNTIMES:
            exe = os.path.join(wdir, f"wl_{name}_{rt}")
            if not os.path.exists(exe):
                print(f"{name:9} {rt:10} missing {exe}")
                bad += 1
                continue
            settings = [("default", [], {}), ("--serial", ["--serial"], {})]
            if rt == "tbb":
                settings += [("--threads 1", ["--threads", "1"], {})]
            else:
                settings += [("OMP_NUM_THREADS=1", [], {"OMP_NUM_THREADS": "1"}),
                             ("OMP_NUM_THREADS=2", [], {"OMP_NUM_THREADS": "2"})]
            settings += [(" ".join(v), v, {}) for v in VARIANTS.get(name, [])]
            for label, extra, env in settings:
                rc, m, out, err = run([exe] + args + extra, env)
                ok = rc == 0 and m is not None
                c = m.group("c") if m else "-"
                if ok and ref is None:
                    ref = c
                ok = ok and c == ref
                bad += not ok
                t = m.group("t") if m else "-"
                print(f"{name:9} {rt:10} {label:28} {c:>22} {t:>8}{'' if ok else '  <-- WRONG'}")
                if not ok:
                    print(f"    rc={rc} stdout={out!r} stderr={err.strip()[:300]!r}")
                sys.stdout.flush()
    print("all checksums agree" if bad == 0 else f"{bad} wrong or failed runs")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
