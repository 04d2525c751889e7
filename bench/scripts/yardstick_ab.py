#!/usr/bin/env python3
"""Issue #13's yardstick, A/B between libraries: processors a program uses at allotment 1.

    bench/scripts/yardstick_ab.py BUILD GM_INPUT_PPM NPB_DIR REPS NAME=LIBAPSHIM [NAME=LIBAPSHIM ...]

For each repetition, each program (GraphicsMagick's three blurs of GM_INPUT_PPM, as
device_run.sh's throttle:issue runs them; NPB_DIR/npb-clang/bin/ep.W and NPB_DIR/npb-gcc/bin/ep.W)
runs under each library in turn (the order alternating between repetitions), beside a stand-in
co-runner (BUILD's gat_job) holding the rest of a fresh table of P = 2: allotment 1 from its first
look. The reading is the whole run's CPU time (the child's rusage: every thread, the controller's
and the start's unconfined windows included) over its wall time, untraced, as users run it.
Prints one line a run and the medians; timing: run it on an idle machine.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    build, ppm, npb, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    libs = [a.split("=", 1) for a in sys.argv[5:]]
    gat_job = os.path.join(build, "tests", "programs", "gat_job")
    progs = {
        "gm-blur": ["/usr/bin/gm", "convert", ppm, "-blur", "0x24", "-blur", "0x24", "-blur", "0x24", "ppm:/dev/null"],
        "ep.W-clang": [os.path.join(npb, "npb-clang", "bin", "ep.W")],
        "ep.W-gcc": [os.path.join(npb, "npb-gcc", "bin", "ep.W")],
    }
    res = {}
    for rep in range(reps):
        order = libs if rep % 2 == 0 else libs[::-1]
        for prog, argv in progs.items():
            for name, lib in order:
                with tempfile.TemporaryDirectory(prefix="apshim-yardstick-") as tmp:
                    env = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k != "LD_PRELOAD"}
                    env.update(APSHIM_GAT=os.path.join(tmp, "gat"), APSHIM_P="2")
                    co = subprocess.Popen([gat_job, "2", "600000"], env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
                    try:
                        time.sleep(0.4)
                        t0 = time.monotonic()
                        p = subprocess.Popen(argv, env=dict(env, LD_PRELOAD=os.path.abspath(lib)),
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        _, status, ru = os.wait4(p.pid, 0)
                        wall = time.monotonic() - t0
                    finally:
                        co.terminate()
                        co.wait()
                cpus = (ru.ru_utime + ru.ru_stime) / wall
                res.setdefault((prog, name), []).append(cpus)
                print(f"rep {rep} {prog} {name}: {cpus:.3f} CPUs, {wall:.2f} s, exit status {status}", flush=True)
    print()
    for prog in progs:
        for name, _ in libs:
            v = res[(prog, name)]
            print(f"{prog:11s} {name:10s} median {statistics.median(v):.3f} [{min(v):.3f}-{max(v):.3f}] CPUs")


if __name__ == "__main__":
    main()
