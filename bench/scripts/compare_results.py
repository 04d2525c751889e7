#!/usr/bin/env python3
"""Side by side: each scenario's "ratio vs native" (first table of summary.md) in two results
folders written by run_all.sh, e.g. before and after a change.

    bench/scripts/compare_results.py OLD_DIR NEW_DIR [--configs apshim,static]

Prints a markdown table: scenario, configuration, ratio in OLD, ratio in NEW. Ratios compare
each folder's configurations with its own native runs (interleaved in the same run), so the two
folders need not come from equally loaded machines; the columns are still separate runs."""
import argparse
import os
import sys


def ratios(summary):
    """{configuration: ratio} from the first table of a summary.md that has a ratio column."""
    out, col = {}, None
    with open(summary) as f:
        for line in f:
            if not line.startswith("|"):
                if col is not None and out:
                    break
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if col is None:
                col = next((i for i, c in enumerate(cells) if c.startswith("ratio vs native")), None)
                continue
            if set(cells[0]) <= set("-: "):
                continue
            try:
                out[cells[0]] = float(cells[col])
            except (ValueError, IndexError):
                pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--configs", default="", help="comma-separated configurations to show (default: all but native)")
    args = ap.parse_args()
    wanted = [c for c in args.configs.split(",") if c]
    print(f"| scenario | configuration | {os.path.basename(args.old.rstrip('/'))} | {os.path.basename(args.new.rstrip('/'))} |")
    print("|---|---|---:|---:|")
    for scenario in sorted(os.listdir(args.new)):
        new_summary = os.path.join(args.new, scenario, "summary.md")
        old_summary = os.path.join(args.old, scenario, "summary.md")
        if not os.path.exists(new_summary):
            continue
        new = ratios(new_summary)
        old = ratios(old_summary) if os.path.exists(old_summary) else {}
        for config in new:
            if config == "native" or (wanted and config not in wanted):
                continue
            o = f"{old[config]:.2f}" if config in old else "-"
            print(f"| {scenario} | {config} | {o} | {new[config]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
