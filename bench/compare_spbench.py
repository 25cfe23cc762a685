#!/usr/bin/env python3
"""Compare spbench CSVs of two builds, kernel row by kernel row.

    compare_spbench.py --old a1.csv a2.csv --new b1.csv b2.csv [--tol 0.03]

Each side's time of a row (matrix, precision, op, kernel) is the median over its
CSVs (runs of spbench, each itself a median of --reps timed runs).  Prints a
markdown table of new/old per row and a summary: how many of our kernels'
rows lie within +-tol, and the same for cuSPARSE's rows, which are the same
library in both builds and so show the run-to-run noise of the machine."""
import argparse
import csv
import statistics
import sys


def load(paths):
    rows = {}
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                if r.get("status") != "ok":
                    continue
                try:
                    ms = float(r["ms"])
                except (KeyError, ValueError):
                    continue
                key = (r["matrix"], r["precision"], r["op"], r["kernel"])
                rows.setdefault(key, []).append(ms)
    return {k: statistics.median(v) for k, v in rows.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", nargs="+", required=True)
    ap.add_argument("--new", nargs="+", required=True)
    ap.add_argument("--tol", type=float, default=0.03)
    a = ap.parse_args()
    old, new = load(a.old), load(a.new)
    keys = sorted(set(old) & set(new))
    if not keys:
        print("no common rows")
        return 1
    print("| matrix | prec | op | kernel | old ms | new ms | new/old |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: |")
    stats = {"ours": [0, 0, []], "cusparse": [0, 0, []]}
    for k in keys:
        ratio = new[k] / old[k]
        side = "ours" if k[3].startswith("ours") else "cusparse"
        s = stats[side]
        s[0] += 1
        if abs(ratio - 1.0) <= a.tol:
            s[1] += 1
        s[2].append(ratio)
        flag = "" if abs(ratio - 1.0) <= a.tol else " **"
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {old[k]:.5f} | {new[k]:.5f} | {ratio:.3f}{flag} |")
    print()
    missing = sorted(set(old) ^ set(new))
    if missing:
        print(f"rows in one build only: {len(missing)} (e.g. {missing[:3]})")
    for side, (n, ok, rs) in stats.items():
        if n:
            gm = statistics.geometric_mean(rs)
            print(f"{side}: {ok}/{n} rows within +-{a.tol * 100:.0f} %, geometric mean new/old {gm:.4f}, "
                  f"min {min(rs):.3f}, max {max(rs):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
