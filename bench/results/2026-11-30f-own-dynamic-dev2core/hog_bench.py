"""omp_dynamic (OMP_DYNAMIC's shape: omp_set_dynamic(1), regions of fixed work) beside a CPU hog
outside the table, job at nice 5: interleaved configurations, raw CSV."""
import csv, os, statistics, subprocess, sys, time
sys.path.insert(0, "/work/main/tests/support")
from cpu_hog import JOB_NICE, OutsideHog
out, reps, regions = sys.argv[1], int(sys.argv[2]), sys.argv[3]
new, old = "/work/main/build/shim/libapshim.so", "/tmp/libapshim.old.so"
base = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k not in ("LD_PRELOAD", "OMP_DYNAMIC", "OMP_NUM_THREADS")}
configs = {"one-thread": ({"OMP_NUM_THREADS": "1"}, "1"), "native-dynamic": ({}, "1"),
           "apshim-before": ({"LD_PRELOAD": old}, "1"), "apshim": ({"LD_PRELOAD": new}, "1")}
rows = []
with OutsideHog():
    time.sleep(1)
    for r in range(reps):
        for comp in ("gcc", "clang"):
            prog = f"/work/main/build/tests/omp/omp_dynamic_{comp}"
            names = list(configs)
            for name in names[r % 4:] + names[:r % 4]:
                extra, dyn = configs[name]
                env = dict(base, APSHIM_GAT=f"/tmp/hog-bench-{os.getpid()}-{name}", APSHIM_P="2", **extra)
                t0 = time.monotonic()
                try:
                    p = subprocess.run([*JOB_NICE, prog, regions, "20000", dyn], env=env, capture_output=True, text=True, timeout=60)
                    t, rc, o = time.monotonic() - t0, p.returncode, p.stdout.strip()
                except subprocess.TimeoutExpired:
                    t, rc, o = 60.0, "timeout", ""
                w = dict(x.split("=") for x in o.split()[1:]) if o else {}
                rows.append({"rep": r, "compiler": comp, "config": name, "wall_s": round(t, 3), "rc": rc,
                             "team1": w.get("team1", ""), "regions": regions, "checksum": w.get("checksum", "")})
                print(rows[-1], flush=True)
with open(os.path.join(out, f"hog-raw-{regions}.csv"), "w", newline="") as f:
    wr = csv.DictWriter(f, fieldnames=list(rows[0])); wr.writeheader(); wr.writerows(rows)
print("| compiler | configuration | median wall s | median regions in teams of one |\n|---|---|---:|---:|")
for comp in ("gcc", "clang"):
    for name in configs:
        rs = [x for x in rows if x["config"] == name and x["compiler"] == comp]
        print(f"| {comp} | {name} | {statistics.median(x['wall_s'] for x in rs):.2f} | {statistics.median(int(x['team1'] or 0) for x in rs)} |")
