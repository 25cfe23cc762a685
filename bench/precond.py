#!/usr/bin/env python3
"""Preconditioner benchmark (issue 21 item 7): time to solution split into the
preconditioner's setup and the solve, iterations, and one application, per matrix and
preconditioner, from `spsolve --json` runs.

    bench/precond.py --spsolve build/spsolve [--matrices DIR] [--backend cuda|cpu]
                     [--out DIR] [--quick]

Problems: 2D/3D Poisson (generated; poisson3d:128 unless --quick), the 3x3-block
stencil (stencil27b3:40, or :16 with --quick), the SPD and
nonsymmetric matrices of the shared corpus named below (where --matrices is given), and
the 3x3-block elasticity-like matrices read with --block-size 3 where the corpus has
them.  SPD problems: CG with none, jacobi, bjacobi, ic0 (exact and sweeps:3), cheby.
Nonsymmetric: BiCGSTAB and GMRES(30) with none, jacobi, bjacobi, ilu0 (exact and
sweeps:3).  rtol 1e-8, maxit 5000.  Writes precond-<backend>.csv and .md to --out
(default .), one row per run: time.precond_setup, time.setup, time.solve, iterations,
time.precond_apply and time.spmv (one A*x timed the same way: spmv_equiv is their
ratio), the outcome and the true residual; for bjacobi on b x b block entries, the
apply's bandwidth counting the n*b stored inverse entries and x and y once each
(gbs, pct_copy against --copy-gbs).  A run that fails says why in
the note column; nothing is dropped.  PETSc's iteration counts for the same pairs
come from tests/petsc/petsc_compare (CPU), run separately.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

SPD = ["spd/bcsstk16", "spd/nasa2146", "spd/s1rmq4m1", "spd/gridgena", "spd/1138_bus"]
NONSYM = ["nonsym/sherman3", "nonsym/orsirr_1", "nonsym/pde900", "nonsym/add20", "nonsym/rdb1250"]
SPD_PCS = [("none", []), ("jacobi", []), ("bjacobi", []), ("ic0", []), ("ic0", ["--trisolve", "sweeps:3"]),
           ("cheby", [])]
NONSYM_PCS = [("none", []), ("jacobi", []), ("bjacobi", []), ("ilu0", []), ("ilu0", ["--trisolve", "sweeps:3"])]


def run(spsolve, src, solver, pc, extra, backend):
    cmd = [spsolve, "-m", src, "--solver", solver, "--precond", pc, "--backend", backend, "--rtol", "1e-8",
           "--maxit", "5000", "--json"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    row = {"matrix": src, "solver": solver, "precond": pc + ("" if not extra else " " + " ".join(extra[1:])),
           "note": ""}
    try:
        j = json.loads(p.stdout)
    except ValueError:
        row["note"] = (p.stderr.strip().splitlines() or ["no output"])[-1][:160]
        return row
    t, r = j["time"], j["result"]
    row.update({"rows": j["matrix"]["rows"], "nnz": j["matrix"]["nnz"], "backend": j["backend"]["name"],
                "format": j["matrix"]["format"], "iterations": r["iterations"], "reason": r["reason"],
                "relres": r.get("true_relative_residual"), "pc_setup_s": t.get("precond_setup", 0),
                "setup_s": t["setup"], "solve_s": t["solve"], "pc_apply_ms": 1e3 * t.get("precond_apply", 0),
                "spmv_ms": 1e3 * t.get("spmv", 0), "total_to_solution_s": t["setup"] + t["solve"]})
    if t.get("spmv", 0) > 0 and t.get("precond_apply", 0) > 0:
        row["spmv_equiv"] = t["precond_apply"] / t["spmv"]
    entry = j["matrix"].get("entry", "scalar")
    if pc == "bjacobi" and entry.startswith("block") and t.get("precond_apply", 0) > 0:
        b = int(entry[5:])
        n = j["matrix"]["rows"] * b  # scalar rows
        size = {"f32": 4, "f64": 8, "c32": 8, "c64": 16}[j["matrix"]["scalar"]]
        row["gbs"] = (n * b + 2 * n) * size / t["precond_apply"] / 1e9
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spsolve", required=True)
    ap.add_argument("--matrices")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--copy-gbs", type=float, default=0.0,
                    help="measured device-to-device copy bandwidth (GB/s) for pct_copy")
    a = ap.parse_args()
    spd = ["poisson2d:200", "poisson3d:48" if a.quick else "poisson3d:128",
           "stencil27b3:16" if a.quick else "stencil27b3:40"]
    nonsym = []
    if a.matrices:
        spd += [os.path.join(a.matrices, m + ".mtx.gz") for m in SPD if os.path.exists(os.path.join(a.matrices, m + ".mtx.gz"))]
        nonsym += [os.path.join(a.matrices, m + ".mtx.gz") for m in NONSYM
                   if os.path.exists(os.path.join(a.matrices, m + ".mtx.gz"))]
    rows = []
    for src in spd:
        # the generated problems also give the sweeps:K target its K = 1 and 5 points
        extra_pcs = [("ic0", ["--trisolve", "sweeps:1"]), ("ic0", ["--trisolve", "sweeps:5"])] if ":" in src else []
        for pc, extra in SPD_PCS + extra_pcs:
            rows.append(run(a.spsolve, src, "cg", pc, extra, a.backend))
            print(rows[-1], file=sys.stderr)
    # the bjacobi bandwidth target wants a vector pass well above launch latency: 3N^3
    # rows of 5 values each (3 inverse-block entries, x, y) is 120 MB at N = 100
    bw = "stencil27b3:40" if a.quick else "stencil27b3:100"
    for pc in ("jacobi", "bjacobi"):
        rows.append(run(a.spsolve, bw, "cg", pc, ["--maxit", "10"], a.backend))
        rows[-1]["precond"] = pc + " (bandwidth, 10 its)"
        print(rows[-1], file=sys.stderr)
    for src in nonsym:
        for solver in ("bicgstab", "gmres"):
            for pc, extra in NONSYM_PCS:
                rows.append(run(a.spsolve, src, solver, pc, extra, a.backend))
                print(rows[-1], file=sys.stderr)
    for r in rows:
        if "gbs" in r and a.copy_gbs > 0:
            r["pct_copy"] = 100.0 * r["gbs"] / a.copy_gbs
    keys = ["matrix", "rows", "nnz", "backend", "format", "solver", "precond", "iterations", "reason", "relres",
            "pc_setup_s", "setup_s", "solve_s", "total_to_solution_s", "pc_apply_ms", "spmv_ms", "spmv_equiv", "gbs",
            "pct_copy", "note"]
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, "precond-" + a.backend)
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in keys})
    with open(base + ".md", "w") as f:
        f.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
        for r in rows:
            cells = []
            for k in keys:
                v = r.get(k, "")
                cells.append(f"{v:.4g}" if isinstance(v, float) else str(v))
            f.write("| " + " | ".join(cells).replace(os.path.join(a.matrices or "", ""), "") + " |\n")
    print("wrote", base + ".csv", base + ".md")


if __name__ == "__main__":
    main()
