#!/usr/bin/env python3
"""Scenario runner: co-running jobs under each configuration, repeated interleaved.

    bench/run.py SCENARIO [--reps N] [--configs a,b,...] [--build DIR] [--out DIR] [--P N]

For every repetition it runs each configuration once (A B C A B C ...), so drift in the machine
hits all configurations alike. Each job's response time is measured from its arrival to its
exit; its stdout line (`<name> ... checksum=<c> time_s=<t>`) must carry the same checksum under
every configuration, or the run is marked wrong. Writes to OUT: raw.csv (one row per job and
run), summary.md (medians, min-max, ratios against native), response.png, and APSHIM_TRACE
files of the apshim runs (trace-*.csv) with traces.png.
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import configs  # noqa: E402
import scenarios  # noqa: E402


def run_once(sc, config_name, rep, out_dir):
    """Runs every job of the scenario under one configuration; returns a list of result dicts."""
    configure = configs.ALL[config_name]
    gat_dir = tempfile.mkdtemp(prefix="apshim-bench-")
    sc.gat_path = os.path.join(gat_dir, "gat")
    sc.trace_pattern = None
    if config_name.startswith("apshim"):
        sc.trace_pattern = os.path.join(out_dir, f"trace-{config_name}-r{rep}-{{job}}.csv")
    results, threads = [], []
    t0 = time.monotonic()

    def launch(job):
        delay = t0 + job.arrival_s - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        extra_argv, env_changes = configure(job, sc)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("APSHIM_", "OMP_", "KMP_"))}
        env.pop("LD_PRELOAD", None)
        env.update(job.env)
        env.update(env_changes)
        argv = job.argv + (extra_argv if job.accepts_threads else [])
        start = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = p.communicate(timeout=sc.timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        end = time.monotonic()
        m = re.search(r"checksum=(\S+)", out or "")
        results.append({
            "rep": rep, "config": config_name, "job": job.name, "arrival_s": round(job.arrival_s, 3),
            "start_s": round(start - t0, 4), "end_s": round(end - t0, 4), "response_s": round(end - start, 4),
            "exit": p.returncode, "checksum": m.group(1) if m else "", "stderr": (err or "").strip()[:200],
        })

    for job in sc.jobs:
        th = threading.Thread(target=launch, args=(job,))
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    try:
        os.unlink(sc.gat_path)
        os.rmdir(gat_dir)
    except OSError:
        pass
    return results


def summarize(sc, rows, out_dir):
    by_config = {}
    for r in rows:
        by_config.setdefault(r["config"], {}).setdefault(r["rep"], []).append(r)
    reference = {}
    for r in rows:
        if r["config"] == sc.configs[0] and r["exit"] == 0:
            reference.setdefault(r["job"], r["checksum"])
    lines = [f"# Scenario `{sc.name}`", "", sc.description, "",
             f"P = {sc.P}, repetitions = {sc.reps} (interleaved), jobs: " +
             ", ".join(f"`{j.name}` at {j.arrival_s:g} s" for j in sc.jobs), "",
             "| configuration | mean response (s), median [min-max] | makespan (s) | throughput (jobs/s) | power | ratio vs "
             f"{sc.configs[0]} (mean response) | wrong or failed runs |",
             "|---|---|---|---|---|---|---|"]
    stats = {}
    for name in sc.configs:
        reps = by_config.get(name, {})
        mean_resp, makespan, bad = [], [], 0
        for rep_rows in reps.values():
            mean_resp.append(statistics.mean(r["response_s"] for r in rep_rows))
            makespan.append(max(r["end_s"] for r in rep_rows) - min(r["arrival_s"] for r in rep_rows))
            bad += sum(1 for r in rep_rows if r["exit"] != 0 or r["checksum"] != reference.get(r["job"]))
        if not mean_resp:
            continue
        stats[name] = (statistics.median(mean_resp), min(mean_resp), max(mean_resp), statistics.median(makespan), bad)
    base = stats.get(sc.configs[0])
    for name, (med, lo, hi, mk, bad) in stats.items():
        thr = len(sc.jobs) / mk
        power = thr / med
        ratio = f"{med / base[0]:.2f}" if base else "-"
        lines.append(f"| {name} | {med:.3f} [{lo:.3f}-{hi:.3f}] | {mk:.3f} | {thr:.3f} | {power:.3f} | {ratio} | {bad} |")
    per_job = ["", "Median response time per job (s):", "", "| configuration | " + " | ".join(j.name for j in sc.jobs) + " |",
               "|---|" + "---|" * len(sc.jobs)]
    for name in stats:
        cells = []
        for j in sc.jobs:
            v = [r["response_s"] for r in rows if r["config"] == name and r["job"] == j.name]
            cells.append(f"{statistics.median(v):.3f}" if v else "-")
        per_job.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += per_job
    lines += ["", "Ratios below 1 mean faster than the first configuration. Power = throughput / mean response "
              "(Sen §7.2). Raw rows: `raw.csv`; machine: `machine.txt`."]
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return stats, "\n".join(lines)


def plot(sc, stats, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plots", file=sys.stderr)
        return
    names = list(stats)
    med = [stats[n][0] for n in names]
    err = [[stats[n][0] - stats[n][1] for n in names], [stats[n][2] - stats[n][0] for n in names]]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names)), 4))
    ax.bar(names, med, yerr=err, capsize=4, color=["#888" if not n.startswith("apshim") else "#2a7" for n in names])
    ax.set_ylabel("mean response time (s), median of reps, bars = min-max")
    ax.set_title(f"{sc.name}: P={sc.P}, {len(sc.jobs)} jobs, {sc.reps} reps")
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "response.png"), dpi=110)
    plt.close(fig)
    # Desire / allotment / usage over time of the first apshim run (Sen Fig. 6-2's picture).
    traces = sorted(f for f in os.listdir(out_dir) if f.startswith("trace-apshim-r0-") or
                    (f.startswith("trace-apshim") and "-r0-" in f))
    traces = [t for t in traces if t.startswith(f"trace-{next((n for n in names if n.startswith('apshim')), 'apshim')}-r0-")]
    if not traces:
        return
    fig, axes = plt.subplots(len(traces), 1, figsize=(8, 2.2 * len(traces)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], traces):
        with open(os.path.join(out_dir, name)) as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        t = [float(r["time_ms"]) / 1000 for r in rows]
        for key, style in (("desire", ":"), ("allotment", "-"), ("usage", "--")):
            ax.step(t, [int(r[key]) for r in rows], style, where="post", label=key)
        ax.set_ylabel("processors")
        ax.set_title(name.replace("trace-", "").replace(".csv", ""), fontsize=9)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time since the job's controller started (s)")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "traces.png"), dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", choices=sorted(scenarios.ALL))
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--configs", default=None, help="comma-separated names from bench/configs.py")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--P", type=int, default=None, help="processors (default: nproc); > nproc sets APSHIM_P")
    ap.add_argument("--quick", action="store_true", help="smaller inputs, fewer reps (the demo)")
    args = ap.parse_args()
    sc = scenarios.ALL[args.scenario](build=os.path.abspath(args.build), P=args.P or os.cpu_count(), quick=args.quick)
    sc.P_override = args.P is not None and args.P != os.cpu_count()
    if args.reps:
        sc.reps = args.reps
    if args.configs:
        sc.configs = args.configs.split(",")
    unknown = [c for c in sc.configs if c not in configs.ALL]
    if unknown:
        ap.error(f"unknown configurations: {unknown}; known: {sorted(configs.ALL)}")
    sc.shim_lib = os.path.join(os.path.abspath(args.build), "shim", "libapshim.so")
    out_dir = args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "latest", sc.name)
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.startswith("trace-"):
            os.unlink(os.path.join(out_dir, f))
    machine = subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "machine.sh")],
                             capture_output=True, text=True).stdout
    with open(os.path.join(out_dir, "machine.txt"), "w") as f:
        f.write(machine)
    rows = []
    total = sc.reps * len(sc.configs)
    done = 0
    t_start = time.monotonic()
    for rep in range(sc.reps):
        for name in sc.configs:
            t = time.monotonic()
            rows += run_once(sc, name, rep, out_dir)
            done += 1
            print(f"\r[{done}/{total}] rep {rep + 1}/{sc.reps} {name:<16} {time.monotonic() - t:6.2f} s"
                  f"  (elapsed {time.monotonic() - t_start:6.1f} s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    with open(os.path.join(out_dir, "raw.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    stats, text = summarize(sc, rows, out_dir)
    plot(sc, stats, out_dir)
    print(text)
    failed = [r for r in rows if r["exit"] != 0]
    if failed:
        print(f"\n{len(failed)} job runs failed; first stderr: {failed[0]['stderr']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
