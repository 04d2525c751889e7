#!/usr/bin/python3
"""Scenario runner: co-running jobs under each configuration, repeated interleaved.

    bench/run.py --list
    bench/run.py SCENARIO [--reps N] [--configs a,b,...] [--build DIR] [--out DIR] [--P N] [--quick]
                          [--keep-traces]

For every repetition it runs each configuration once (A B C A B C ...), so drift in the machine
hits all configurations alike. Each job's response time is measured from its arrival to its
exit; its stdout line (`<name> ... checksum=<c> time_s=<t>`) must carry the same checksum under
every configuration, or the run is marked wrong. Writes to OUT: raw.csv (one row per job and
run), summary.md (medians, min-max, ratios, P̄ per job, the scenario's analyses), response.png,
the APSHIM_TRACE files of the apshim runs (trace-*.csv) with traces.png, and one PNG per
analysis (allprocs.png, overhead.png, greedy.png). Once summary.md and the plots are written,
only the first repetition's traces (r0, the ones plotted) are kept, unless --keep-traces: the
others, read for summary.md's per-repetition columns, made up half of the results' size.
"""
import argparse
import csv
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import configs  # noqa: E402
import scenarios  # noqa: E402

ALONE = "one-worker"  # this configuration always runs its jobs one after another


def job_env(job, env_changes):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("APSHIM_", "OMP_", "KMP_", "GOMP_"))}
    env.pop("LD_PRELOAD", None)
    env.update(job.env)
    env.update(env_changes)
    return env


def run_job(sc, job, extra_argv, env, timeout_s):
    argv = job.argv + (extra_argv if job.accepts_threads else [])
    start = time.monotonic()
    # A process group of its own, killed whole: a job's children (a real program under
    # bench/real_job.py) hold its pipes, and killing the job alone left communicate() waiting for them.
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0)
    try:
        out, err = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    except BaseException:  # Ctrl-C: the group is not the terminal's foreground group, so take it along
        os.killpg(p.pid, signal.SIGKILL)
        raise
    end = time.monotonic()
    return start, end, p.returncode, out or "", err or ""


def run_once(sc, config_name, rep, out_dir):
    """Runs every job of the scenario under one configuration; returns a list of result dicts."""
    configure = configs.ALL[config_name]
    gat_dir = tempfile.mkdtemp(prefix="apshim-bench-")
    sc.gat_path = os.path.join(gat_dir, "gat")
    sc.trace_pattern = sc.ranks_trace_pattern = None
    if configs.is_shim(config_name):
        sc.trace_pattern = os.path.join(out_dir, f"trace-{config_name}-r{rep}-{{job}}.csv")
        sc.ranks_trace_pattern = os.path.join(out_dir, f"trace-{config_name}-r{rep}-{{job}}-rank%p.csv")
    results, lock = [], threading.Lock()
    solo = sc.solo or config_name == ALONE

    def launch(job, t0):
        arrival = 0.0 if solo else job.arrival_s
        delay = t0 + arrival - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        extra_argv, env_changes = configure(job, sc)
        start, end, rc, out, err = run_job(sc, job, extra_argv, job_env(job, env_changes), sc.timeout_s)
        m = re.search(r"checksum=(\S+)", out)
        t = re.search(r"time_s=(\S+)", out)
        with lock:
            results.append({
                "rep": rep, "config": config_name, "job": job.name, "arrival_s": round(arrival, 3),
                "start_s": round(start - t0, 4), "end_s": round(end - t0, 4), "response_s": round(end - t0 - arrival, 4),
                "time_s": t.group(1) if t else "", "exit": rc, "checksum": m.group(1) if m else "",
                "stderr": err.strip()[:200],
            })

    if solo:
        for job in sc.jobs:
            launch(job, time.monotonic())
    else:
        t0 = time.monotonic()
        threads = [threading.Thread(target=launch, args=(job, t0)) for job in sc.jobs]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    try:
        os.unlink(sc.gat_path)
    except OSError:
        pass
    try:
        os.rmdir(gat_dir)
    except OSError:
        pass
    return results


def calibrate(sc):
    """Sen P1: T = one job's time alone on P/2 processors (native, --threads max(1, P/2));
    jobs with arrival_frac f then arrive at f*T."""
    index, _ = sc.calibrate
    job = sc.jobs[index]
    start, end, rc, out, err = run_job(sc, job, ["--threads", str(max(1, sc.P // 2))], job_env(job, {}), sc.timeout_s)
    if rc != 0:
        raise SystemExit(f"calibration run of {job.name} failed: {err.strip()[:200]}")
    sc.calibrated_T = end - start
    for j in sc.jobs:
        if j.arrival_frac is not None:
            j.arrival_s = j.arrival_frac * sc.calibrated_T


# ---------------------------------------------------------------- traces


def read_trace(out_dir, config, rep, job):
    """The job's trace rows; of a job of several ranks (Job.ranks: a trace per process), its first
    rank's (the lowest pid), so that P̄ and the plots read one rank."""
    path = os.path.join(out_dir, f"trace-{config}-r{rep}-{job}.csv")
    if not os.path.exists(path):
        prefix = f"trace-{config}-r{rep}-{job}-rank"
        ranks = [f for f in os.listdir(out_dir) if f.startswith(prefix)]
        if ranks:
            path = os.path.join(out_dir, min(ranks, key=lambda f: int(f[len(prefix):].split(".")[0])))
    try:
        with open(path) as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def p_bar(rows):
    """Sen §7.2.2: P̄ is the job's average usage over all est_cycle intervals."""
    return statistics.mean(int(r["usage"]) for r in rows) if rows else None


def all_procs(rows, P):
    """Sen O1: (time since the job's controller started at the end of the first est_cycle in
    which the job's usage reached P, that cycle's number); (None, None) if it never did."""
    for i, r in enumerate(rows):
        if int(r["usage"]) >= P:
            return float(r["time_ms"]), i + 1
    return None, None


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


# ---------------------------------------------------------------- summary


def response_stats(sc, rows):
    """Per configuration: median / min / max of the per-rep mean response, median makespan, bad runs."""
    reference = {}
    for name in sc.configs:
        for r in rows:
            if r["config"] == name and r["exit"] == 0 and r["checksum"]:
                reference.setdefault(r["job"], r["checksum"])
    by_config = {}
    for r in rows:
        by_config.setdefault(r["config"], {}).setdefault(r["rep"], []).append(r)
    stats = {}
    for name in sc.configs:
        mean_resp, makespan, bad = [], [], 0
        for rep_rows in by_config.get(name, {}).values():
            mean_resp.append(statistics.mean(r["response_s"] for r in rep_rows))
            makespan.append(max(r["end_s"] for r in rep_rows) - min(r["arrival_s"] for r in rep_rows))
            bad += sum(1 for r in rep_rows if r["exit"] != 0 or r["checksum"] != reference.get(r["job"]))
        if mean_resp:
            stats[name] = (statistics.median(mean_resp), min(mean_resp), max(mean_resp), statistics.median(makespan), bad)
    return stats


def job_median(rows, config, job):
    return med([r["response_s"] for r in rows if r["config"] == config and r["job"] == job and r["exit"] == 0])


def summarize(sc, rows, out_dir):
    stats = response_stats(sc, rows)
    shown = [n for n in stats if n != ALONE]
    base_name = shown[0] if shown else None
    base = stats.get(base_name)
    arrivals = ", ".join(f"`{j.name}` at {j.arrival_s:.3g} s" for j in sc.jobs)
    lines = [f"# Scenario `{sc.name}`", "", sc.description, "",
             f"P = {sc.P}{' (APSHIM_P)' if sc.P_override else ''}, repetitions = {sc.reps} (interleaved), jobs: " +
             ("each alone, one after another: " + ", ".join(f"`{j.name}`" for j in sc.jobs) if sc.solo else arrivals), ""]
    if sc.notes:
        lines += [f"**Note.** {sc.notes}", ""]
    if sc.solo:
        lines += [f"| configuration | mean running time over jobs (s), median [min-max] | ratio vs {base_name} | "
                  "wrong or failed runs |", "|---|---|---|---|"]
    else:
        lines += ["| configuration | mean response (s), median [min-max] | makespan (s) | throughput (jobs/s) | power | "
                  f"ratio vs {base_name} (mean response) | wrong or failed runs |", "|---|---|---|---|---|---|---|"]
    for name in shown:
        m, lo, hi, mk, bad = stats[name]
        ratio = f"{m / base[0]:.2f}" if base else "-"
        if sc.solo:
            lines.append(f"| {name} | {m:.3f} [{lo:.3f}-{hi:.3f}] | {ratio} | {bad} |")
        else:
            thr = len(sc.jobs) / mk
            lines.append(f"| {name} | {m:.3f} [{lo:.3f}-{hi:.3f}] | {mk:.3f} | {thr:.3f} | {thr / m:.3f} | {ratio} | {bad} |")
    if ALONE in stats:
        lines += ["", f"`{ALONE}` (each job alone on one worker, for T1): {stats[ALONE][4]} wrong or failed runs."]
    lines += ["", f"Median {'running' if sc.solo else 'response'} time per job (s):", "",
              "| configuration | " + " | ".join(j.name for j in sc.jobs) + " |", "|---|" + "---|" * len(sc.jobs)]
    for name in stats:
        lines.append(f"| {name} | " + " | ".join(fmt(job_median(rows, name, j.name)) for j in sc.jobs) + " |")
    shim = [n for n in stats if configs.is_shim(n)]
    if shim:
        lines += ["", "P̄ per job: mean usage over the job's est_cycles (APSHIM_TRACE), median over repetitions:", "",
                  "| configuration | " + " | ".join(j.name for j in sc.jobs) + " |", "|---|" + "---|" * len(sc.jobs)]
        for name in shim:
            cells = [fmt(med([p_bar(read_trace(out_dir, name, rep, j.name)) for rep in range(sc.reps)]), ".2f")
                     for j in sc.jobs]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    extra_plots = []
    for analysis in sc.analyses:
        text, png = ANALYSES[analysis](sc, rows, out_dir)
        lines += [""] + text
        if png:
            extra_plots.append(png)
    lines += ["", ("Ratios below 1 mean faster than the first configuration. " +
                   ("" if sc.solo else "Response = exit - arrival; throughput = jobs / makespan; "
                    "power = throughput / mean response (Sen §7.2). ") +
                   "Raw rows: `raw.csv`; machine: `machine.txt`; plots: `response.png`, `traces*.png`" +
                   "".join(f", `{p}`" for p in extra_plots) + ".")]
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return stats, "\n".join(lines)


# ---------------------------------------------------------------- analyses


_NO_PLOTS = []


def pyplot():
    if _NO_PLOTS:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print(f"matplotlib not available to {sys.executable}: no plots (Debian: apt install python3-matplotlib)",
              file=sys.stderr)
        _NO_PLOTS.append(1)
        return None


def save_figure(plt, fig, out_dir, name):
    """Writes one plot as out_dir/name (PNG, 110 dpi) and frees it; returns name."""
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    return name


def analysis_allprocs(sc, rows, out_dir):
    """Sen O1 / Fig. 7-2 and 7-4: all-procs time per est_cycle, in ms and in est_cycle intervals."""
    shim = [c for c in sc.configs if configs.is_shim(c)]
    table = {}
    for c in shim:
        for j in sc.jobs:
            per_rep = [all_procs(read_trace(out_dir, c, rep, j.name), sc.P) for rep in range(sc.reps)]
            reached = [v for v in per_rep if v[0] is not None]
            table[c, j.name] = (med([v[0] for v in reached]), med([v[1] for v in reached]), len(reached), len(per_rep))
    text = ["## All-procs time (Sen O1)", "",
            f"Time until the job's usage first reached P = {sc.P}: median ms over the repetitions that reached it, "
            "(median number of est_cycles the controller ran until then; more than ms / est_cycle when the "
            "controller thread was delayed), `never` when no repetition did.", "",
            "| configuration | est_cycle (ms) | " + " | ".join(j.name for j in sc.jobs) + " |",
            "|---|---|" + "---|" * len(sc.jobs)]
    for c in shim:
        ec = configs.est_cycle_ms(c)
        cells = []
        for j in sc.jobs:
            v, cycles, n, total = table[c, j.name]
            if v is None:
                cells.append("never")
            else:
                cells.append(f"{v:.1f} ({cycles:g})" + (f" [{n}/{total} reached]" if n < total else ""))
        text.append(f"| {c} | {ec:g} | " + " | ".join(cells) + " |")
    plt = pyplot()
    if not plt:
        return text, None
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    families = {}
    for c in shim:
        fam = "apshim-inst" if "inst" in c else ("apshim-equi (desire P)" if "equi" in c else "apshim (WSAP)")
        families.setdefault(fam, []).append(c)
    for fam, cs in families.items():
        for j in sc.jobs:
            pts = [(configs.est_cycle_ms(c), table[c, j.name][0], table[c, j.name][1]) for c in cs
                   if table[c, j.name][0] is not None]
            pts.sort()
            if not pts:
                continue
            label = f"{j.name}, {fam}"
            style = "--" if "inst" in fam else "-"
            marker = "s" if "equi" in fam else ("x" if "inst" in fam else "o")
            a.plot([p[0] for p in pts], [p[1] for p in pts], style, marker=marker, label=label)
            b.plot([p[0] for p in pts], [p[2] for p in pts], style, marker=marker, label=label)
    for ax, ylabel in ((a, "all-procs time (ms)"), (b, "all-procs time (est_cycles run)")):
        ax.set_xscale("log")
        ax.set_xlabel("est_cycle (ms)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    a.legend(fontsize=7)
    fig.suptitle(f"{sc.name}: all-procs time vs est_cycle (P={sc.P}, median of {sc.reps})")
    save_figure(plt, fig, out_dir, "allprocs.png")
    return text, "allprocs.png"


def analysis_overhead(sc, rows, out_dir):
    """Sen O2 / Fig. 7-5: running time under the shim over native (or the first configuration), per est_cycle."""
    ref = "native" if "native" in sc.configs else sc.configs[0]
    shim = [c for c in sc.configs if configs.is_shim(c) and c != ref]
    text = ["## Running-time overhead (Sen O2)", "",
            f"Median running time under each configuration / median under `{ref}` - 1, in percent "
            "(negative: faster).", "",
            "| configuration | est_cycle (ms) | " + " | ".join(j.name for j in sc.jobs) + " |",
            "|---|---|" + "---|" * len(sc.jobs)]
    points = {}
    for c in shim:
        cells = []
        for j in sc.jobs:
            r, t = job_median(rows, ref, j.name), job_median(rows, c, j.name)
            v = None if (r is None or t is None) else 100 * (t / r - 1)
            points[c, j.name] = v
            cells.append(fmt(v, "+.1f") + ("%" if v is not None else ""))
        text.append(f"| {c} | {configs.est_cycle_ms(c):g} | " + " | ".join(cells) + " |")
    plt = pyplot()
    if not plt:
        return text, None
    fig, ax = plt.subplots(figsize=(7, 4))
    for fam in ("inst", "wsap"):
        cs = [c for c in shim if ("inst" in c) == (fam == "inst") and "equi" not in c]
        for j in sc.jobs:
            pts = sorted((configs.est_cycle_ms(c), points[c, j.name]) for c in cs if points[c, j.name] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "--" if fam == "inst" else "-",
                        marker="x" if fam == "inst" else "o", label=f"{j.name}{', inst' if fam == 'inst' else ''}")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("est_cycle (ms)")
    ax.set_ylabel(f"running-time overhead vs {ref} (%)")
    ax.set_title(f"{sc.name}: overhead vs est_cycle (P={sc.P}, median of {sc.reps})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(plt, fig, out_dir, "overhead.png")
    return text, "overhead.png"


def analysis_greedy(sc, rows, out_dir):
    """Sen P3 / Theorem 3: T <= T1/P̄ + T∞, with T1 from the one-worker runs, T∞ = T1 * S/W."""
    shim = [c for c in sc.configs if configs.is_shim(c)]
    text = ["## Greedy bound (Sen P3)", ""]
    if ALONE not in sc.configs:
        return text + [f"(no `{ALONE}` configuration in this run: no T1, no bound)"], None
    text += ["T1 = median one-worker running time alone; T∞ = T1 · S/W (analytic critical path over work); "
             "P̄ = mean usage over the trace; bound = T1/P̄ + T∞; T = median measured "
             f"{'running' if sc.solo else 'response'} time.", "",
             "| job | T1 (s) | S/W | T∞ (s) | configuration | P̄ | bound (s) | T (s) | T / bound |",
             "|---|---|---|---|---|---|---|---|---|"]
    bars = []
    for j in sc.jobs:
        if j.span_fraction is None:
            continue
        t1 = job_median(rows, ALONE, j.name)
        if t1 is None:
            continue
        tinf = t1 * j.span_fraction
        for c in shim:
            pb = med([p_bar(read_trace(out_dir, c, rep, j.name)) for rep in range(sc.reps)])
            t = job_median(rows, c, j.name)
            bound = None if pb is None else t1 / pb + tinf
            ratio = None if (bound is None or t is None) else t / bound
            text.append(f"| {j.name} | {t1:.3f} | {j.span_fraction:.2g} | {tinf:.4f} | {c} | {fmt(pb, '.2f')} | "
                        f"{fmt(bound)} | {fmt(t)} | {fmt(ratio, '.2f')} |")
            if bound is not None and t is not None:
                bars.append((f"{j.name}\n{c}", bound, t))
    plt = pyplot()
    if not plt or not bars:
        return text, None
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(bars)), 4))
    x = range(len(bars))
    ax.bar([i - 0.2 for i in x], [b[1] for b in bars], 0.4, label=r"greedy bound $T_1/\bar{P} + T_\infty$", color="#bbb")
    ax.bar([i + 0.2 for i in x], [b[2] for b in bars], 0.4, label="measured T (median)", color="#2a7")
    ax.set_xticks(list(x))
    ax.set_xticklabels([b[0] for b in bars], fontsize=7)
    ax.set_ylabel("time (s)")
    ax.set_title(f"{sc.name}: measured time vs greedy bound (P={sc.P})")
    ax.legend(fontsize=8)
    save_figure(plt, fig, out_dir, "greedy.png")
    return text, "greedy.png"


def analysis_calibration(sc, rows, out_dir):
    if sc.calibrated_T is None:
        return ["Arrival times are fixed (no calibration)."], None
    return [f"T (one job alone on max(1, P/2) = {max(1, sc.P // 2)} workers, native, measured once before the "
            f"repetitions) = {sc.calibrated_T:.3f} s; arrivals: " +
            ", ".join(f"`{j.name}` at {j.arrival_s:.3f} s" for j in sc.jobs) + "."], None


ANALYSES = {"allprocs": analysis_allprocs, "overhead": analysis_overhead, "greedy": analysis_greedy,
            "calibration": analysis_calibration}


# ---------------------------------------------------------------- plots


def plot(sc, stats, out_dir):
    plt = pyplot()
    if not plt:
        return
    names = [n for n in stats if n != ALONE]
    if names:
        medv = [stats[n][0] for n in names]
        err = [[stats[n][0] - stats[n][1] for n in names], [stats[n][2] - stats[n][0] for n in names]]
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(names)), 4))
        ax.bar(names, medv, yerr=err, capsize=4, color=["#2a7" if configs.is_shim(n) else "#888" for n in names])
        ax.set_ylabel(f"mean {'running' if sc.solo else 'response'} time (s)\nmedian of reps, bars = min-max")
        ax.set_xlabel("configuration")
        ax.set_title(f"{sc.name}: P={sc.P}, {len(sc.jobs)} jobs{' (each alone)' if sc.solo else ''}, {sc.reps} reps")
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
        save_figure(plt, fig, out_dir, "response.png")
    # Desire / allotment / usage over time of the first repetition (Sen Fig. 6-2's picture).
    shim = [n for n in sc.configs if configs.is_shim(n)]
    wanted = sc.trace_configs or shim[:1]
    for i, config in enumerate(c for c in wanted if c in shim):
        traces = [(j.name, read_trace(out_dir, config, 0, j.name)) for j in sc.jobs]
        traces = [(n, t) for n, t in traces if t]
        if not traces:
            continue
        fig, axes = plt.subplots(len(traces), 1, figsize=(8, 2.2 * len(traces) + 0.6), sharex=not sc.solo,
                                 squeeze=False)
        for ax, (job, rows) in zip(axes[:, 0], traces):
            t = [float(r["time_ms"]) / 1000 for r in rows]
            for key, style in (("desire", ":"), ("allotment", "-"), ("usage", "--")):
                ax.step(t, [int(r[key]) for r in rows], style, where="post", label=key)
            ax.plot(t, [float(r["busy"]) for r in rows], lw=0.8, alpha=0.6, label="busy (avg working threads)")
            ax.set_ylabel("processors")
            ax.set_ylim(0, max(sc.P, max(int(r["desire"]) for r in rows)) + 0.5)
            ax.set_title(f"{job} under {config} (rep 1)", fontsize=9)
            ax.legend(loc="upper right", fontsize=7)
        axes[-1, 0].set_xlabel("time since the job's controller started (s)")
        save_figure(plt, fig, out_dir, "traces.png" if i == 0 else f"traces-{config}.png")


# ---------------------------------------------------------------- main


def list_all(build, P):
    print("Scenarios (bench/run.py NAME):")
    for name in sorted(scenarios.ALL):
        sc = scenarios.ALL[name](build=build, P=P, quick=False)
        print(f"  {name:<22} {sc.description}\n  {'':<22} configs: {', '.join(sc.configs)}; reps {sc.reps}"
              f"{'; jobs alone' if sc.solo else ''}")
    print("\nConfigurations (--configs a,b,...):")
    for name in configs.ALL:
        print(f"  {name:<18} {configs.META.get(name, '')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", nargs="?", choices=sorted(scenarios.ALL))
    ap.add_argument("--list", action="store_true", help="list scenarios and configurations")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--configs", default=None, help="comma-separated names from bench/configs.py")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--P", type=int, default=None, help="processors (default: nproc); another value sets APSHIM_P")
    ap.add_argument("--quick", action="store_true", help="smaller inputs, fewer reps (the demo)")
    ap.add_argument("--keep-traces", action="store_true", help="keep every repetition's traces (default: r0's)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if args.list:
        list_all(build, args.P or os.cpu_count())
        return 0
    if not args.scenario:
        ap.error("name a scenario (bench/run.py --list shows them)")
    sc = scenarios.ALL[args.scenario](build=build, P=args.P or os.cpu_count(), quick=args.quick)
    sc.P_override = args.P is not None and args.P != os.cpu_count()
    if args.reps:
        sc.reps = args.reps
    if args.configs:
        sc.configs = args.configs.split(",")
    unknown = [c for c in sc.configs if c not in configs.ALL]
    if unknown:
        ap.error(f"unknown configurations: {unknown}; known: {sorted(configs.ALL)}")
    missing = sorted({j.argv[0] for j in sc.jobs if not os.access(j.argv[0], os.X_OK)})
    if missing:
        ap.error(f"workload binaries missing (build them in {build}): {missing}")
    sc.shim_lib = os.path.join(build, "shim", "libapshim.so")
    if any(configs.is_shim(c) for c in sc.configs) and not os.path.exists(sc.shim_lib):
        ap.error(f"{sc.shim_lib} missing")
    # Absolute: the jobs get trace paths in it, and a job that runs its program elsewhere (xtb and
    # cp2k in a temporary folder) would write a relative one there.
    out_dir = os.path.abspath(args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "latest", sc.name))
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.startswith("trace-") or f.endswith(".png"):
            os.unlink(os.path.join(out_dir, f))
    machine = subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "machine.sh")],
                             capture_output=True, text=True).stdout
    with open(os.path.join(out_dir, "machine.txt"), "w") as f:
        f.write(machine)
    if sc.prepare:
        print(f"{sc.name}: preparing inputs ...", file=sys.stderr, flush=True)
        sc.prepare()
    if sc.calibrate:
        print(f"{sc.name}: calibrating T ...", file=sys.stderr, flush=True)
        calibrate(sc)
    rows = []
    total = sc.reps * len(sc.configs)
    done = 0
    t_start = time.monotonic()
    for rep in range(sc.reps):
        for name in sc.configs:
            t = time.monotonic()
            rows += run_once(sc, name, rep, out_dir)
            done += 1
            elapsed = time.monotonic() - t_start
            eta = elapsed / done * (total - done)
            print(f"\r{sc.name} [{done}/{total}] rep {rep + 1}/{sc.reps} {name:<18} {time.monotonic() - t:6.2f} s"
                  f"  elapsed {elapsed:6.1f} s, about {eta:5.0f} s left ", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    with open(os.path.join(out_dir, "raw.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    stats, text = summarize(sc, rows, out_dir)
    plot(sc, stats, out_dir)
    if not args.keep_traces:
        for f in os.listdir(out_dir):
            if re.fullmatch(r"trace-.*-r[1-9][0-9]*-.*\.csv", f):
                os.unlink(os.path.join(out_dir, f))
    print(text)
    failed = [r for r in rows if r["exit"] != 0]
    if failed:
        print(f"\n{len(failed)} job runs failed; first stderr: {failed[0]['stderr']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
