import csv, os, statistics, subprocess, sys, time
out, reps = sys.argv[1], int(sys.argv[2])
libs = {"before": "/tmp/libapshim.old.so", "width-cap": "/tmp/libapshim.widthcap.so", "now": "/work/main/build/shim/libapshim.so"}
base = {k: v for k, v in os.environ.items() if not k.startswith("APSHIM_") and k not in ("LD_PRELOAD", "OMP_DYNAMIC", "OMP_NUM_THREADS")}
configs = {"native": {}, "native-dynamic": {"OMP_DYNAMIC": "true"}, "native-limit1": {"OMP_THREAD_LIMIT": "1"},
           "apshim": {"LD_PRELOAD": libs["now"]}}
for k, v in libs.items():
    configs[f"apshim-dynamic-{k}"] = {"LD_PRELOAD": v, "OMP_DYNAMIC": "true"}
rows = []
names = list(configs)
for r in range(reps):
    for name in names[r % len(names):] + names[:r % len(names)]:
        env = dict(base, APSHIM_GAT=f"/tmp/tess-{os.getpid()}-{name}", **configs[name])
        load = open("/proc/loadavg").read().split()[2]
        t0 = time.monotonic(); a = os.times()
        p = subprocess.run(["/usr/bin/tesseract", "/tmp/page.png", f"/tmp/tess-out-{name}"], env=env, capture_output=True, text=True, timeout=120)
        t = time.monotonic() - t0; b = os.times()
        cpu = b.children_user - a.children_user + b.children_system - a.children_system
        text = open(f"/tmp/tess-out-{name}.txt", "rb").read()
        import hashlib
        rows.append({"rep": r, "config": name, "wall_s": round(t, 3), "cpu_s": round(cpu, 2), "loadavg15_before": load, "rc": p.returncode, "text_sha": hashlib.sha256(text).hexdigest()[:12]})
        print(rows[-1], flush=True)
with open(os.path.join(out, "tesseract-raw.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
print("| configuration | median wall s | median CPU s |\n|---|---:|---:|")
for n in names:
    rs = [x for x in rows if x["config"] == n]
    print(f"| {n} | {statistics.median(x['wall_s'] for x in rs):.2f} | {statistics.median(x['cpu_s'] for x in rs):.2f} |")
