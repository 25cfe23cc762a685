#!/usr/bin/env python3
"""CPU backend against PETSc (issue 24 item 8): time to solution (preconditioner setup +
solve, wall clock) of the same systems, from tests/petsc/petsc_compare's cases, with our
CPU backend on 1 and 2 OpenMP threads (PETSc: one process, one thread).

    bench/cpu_petsc.py --compare build/tests/petsc_compare --matrices DIR [--out FILE.md]

Each case of `petsc_compare --solver S --pc all` (CG, BiCGSTAB, GMRES(30); none, Jacobi,
the factorisations, block-Jacobi), b = A*1, rtol 1e-8.  The table gives both times, the
ratio ours/PETSc, and whether 2 threads were slower than 1 (by more than 5 %: the
machine's run-to-run noise).  Only cases where both converged count in the geometric
means."""
import argparse
import math
import os
import re
import subprocess
import sys

LINE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+its\s+(-?\d+)/(-?\d+)\s.*?(\S+)/(\S+)\s+ms\s+([\d.e+-]+)/([\d.e+-]+)\s+(PASS|FAIL)")


def run(compare, mdir, solver, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    p = subprocess.run([compare, "--solver", solver, "--matrices", mdir, "--pc", "all"], capture_output=True,
                       text=True, env=env)
    rows = {}
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m:
            name, s, pc, io, ip, ro, rp, to, tp, _ = m.groups()
            rows[(name, s, pc)] = dict(its=(int(io), int(ip)), conv=ro.startswith("converged") and rp.startswith("CONVERGED"),
                                       ours=float(to), petsc=float(tp))
    return rows


def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", required=True)
    ap.add_argument("--matrices", required=True)
    ap.add_argument("--out", default="cpu-petsc.md")
    a = ap.parse_args()
    res = {}
    for s in ("cg", "bicgstab", "gmres"):
        for th in (1, 2):
            for k, v in run(a.compare, a.matrices, s, th).items():
                res.setdefault(k, {})[th] = v
            print(s, th, "done", file=sys.stderr)
    keys = sorted(res)
    r1, r2, slower = [], [], []
    lines = ["| matrix | solver | pc | its ours/PETSc | PETSc ms | ours 1 thread ms | ours 2 threads ms | ours/PETSc (2 threads) |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for k in keys:
        d = res[k]
        if 1 not in d or 2 not in d:
            continue
        one, two = d[1], d[2]
        ratio = two["ours"] / two["petsc"] if two["petsc"] > 0 else float("nan")
        if one["conv"] and two["conv"]:
            r1.append(one["ours"] / one["petsc"])
            r2.append(ratio)
        if two["ours"] > 1.05 * one["ours"] and two["ours"] > 0.5:
            slower.append((k, one["ours"], two["ours"]))
        lines.append("| %s | %s | %s | %d/%d | %.3g | %.3g | %.3g | %.2f |" % (
            k[0], k[1], k[2], two["its"][0], two["its"][1], two["petsc"], one["ours"], two["ours"], ratio))
    with open(a.out, "w") as f:
        f.write("cases: %d; both converged: %d\n\n" % (len(keys), len(r2)))
        f.write("geometric mean of ours/PETSc time to solution: %.3f on 1 thread, %.3f on 2 threads\n\n" % (gmean(r1), gmean(r2)))
        f.write("cases where 2 threads were more than 5 %% slower than 1 (and over 0.5 ms): %d\n\n" % len(slower))
        for k, t1, t2 in slower:
            f.write("- %s %s %s: %.3g ms on 1 thread, %.3g ms on 2\n" % (k[0], k[1], k[2], t1, t2))
        f.write("\n" + "\n".join(lines) + "\n")
    print("wrote", a.out)


if __name__ == "__main__":
    main()
