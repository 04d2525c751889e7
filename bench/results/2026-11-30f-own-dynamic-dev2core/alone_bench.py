"""scikit-learn alone (tests/real/sklearn_work.py 60000 150), interleaved configurations, raw CSV."""
import csv, os, statistics, subprocess, sys, time
out = sys.argv[1]
reps = int(sys.argv[2])
new, old = "/work/main/build/shim/libapshim.so", "/tmp/libapshim.old.so"
base = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k not in ("LD_PRELOAD", "OMP_DYNAMIC", "OMP_NUM_THREADS")}
configs = {
    "native": {},
    "native-dynamic": {"OMP_DYNAMIC": "true"},
    "apshim": {"LD_PRELOAD": new},
    "apshim-dynamic-before": {"LD_PRELOAD": old, "OMP_DYNAMIC": "true"},
    "apshim-dynamic": {"LD_PRELOAD": new, "OMP_DYNAMIC": "true"},
}
rows = []
cmd = ["/usr/bin/python3", "tests/real/sklearn_work.py", "60000", "150"]
names = list(configs)
for r in range(reps):
    order = names[r % len(names):] + names[:r % len(names)]
    for name in order:
        env = dict(base, APSHIM_GAT=f"/tmp/alone-bench-{os.getpid()}-{name}", **configs[name])
        load = open("/proc/loadavg").read().split()[2]
        t0 = time.monotonic(); ru0 = os.times()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        t = time.monotonic() - t0; ru1 = os.times()
        cpu = (ru1.children_user - ru0.children_user) + (ru1.children_system - ru0.children_system)
        last = (p.stdout.strip().splitlines() or [""])[-1]
        check = [w for w in last.split() if w.startswith("checksum=")]
        rows.append({"rep": r, "config": name, "wall_s": round(t, 3), "cpu_s": round(cpu, 2), "loadavg15_before": load,
                     "exit": p.returncode, "checksum": check[0][9:] if check else ""})
        print(rows[-1], flush=True)
with open(os.path.join(out, "alone-raw.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
print("| configuration | median wall s | median CPU s | runs |\n|---|---:|---:|---:|")
for name in names:
    rs = [x for x in rows if x["config"] == name and x["exit"] == 0]
    print(f"| {name} | {statistics.median(x['wall_s'] for x in rs):.2f} | {statistics.median(x['cpu_s'] for x in rs):.2f} | {len(rs)} |")
