#!/usr/bin/env python3
"""Bytes per stored entry of HiSparse, CSR and COO per matrix (the paper's Figure 2), as SVG.

Reads the per-matrix table of bench/results/hisparse.md (written from `bench/hisparse_footprint`'s
output) and draws two panels, single precision (f32/c32) and double (f64/c64): one column a matrix,
sorted by HiSparse's bytes at the chosen node size, with CSR, COO and HiSparse as marks.  No
plotting library: the SVG is written by hand so that the script runs wherever Python 3 does.

usage: bench/hisparse_plot.py [--md bench/results/hisparse.md] [--d 128] [-o bench/results/hisparse-footprint.svg]
"""
import argparse
import os
import re
import sys
import tempfile

SERIES = [("CSR", "#1f77b4"), ("COO", "#7f7f7f"), ("HiSparse", "#d62728")]


def read_table(path, d):
    rows = []
    head = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0] == "matrix" and any("HiSparse d=" in c for c in cells):
                head = cells
                continue
            if head is None or len(cells) != len(head) or set(cells[0]) <= set("-: "):
                continue
            try:
                col = next(i for i, h in enumerate(head) if h.startswith("HiSparse d=%d " % d))
            except StopIteration:
                sys.exit("hisparse_plot: no column for d = %d in %s" % (d, path))
            hs = float(re.match(r"[0-9.]+", cells[col]).group(0))
            rows.append({"name": cells[0].replace(".mtx.gz", ""), "prec": cells[3], "csr": float(cells[4]),
                         "coo": float(cells[5]), "hs": hs})
    if not rows:
        sys.exit("hisparse_plot: no per-matrix rows in %s" % path)
    return rows


def panel(out, rows, x0, y0, w, h, title, ymax):
    out.append('<text x="%g" y="%g" font-size="14" font-weight="bold">%s</text>' % (x0, y0 - 8, title))
    out.append('<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#000"/>' % (x0, y0, w, h))
    for tick in range(0, int(ymax) + 1, 4):
        y = y0 + h - h * tick / ymax
        out.append('<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#ddd"/>' % (x0, y, x0 + w, y))
        out.append('<text x="%g" y="%g" font-size="10" text-anchor="end">%d</text>' % (x0 - 4, y + 3, tick))
    n = len(rows)
    for i, r in enumerate(sorted(rows, key=lambda r: r["hs"])):
        x = x0 + w * (i + 0.5) / n
        for (label, color), v in zip(SERIES, (r["csr"], r["coo"], r["hs"])):
            y = y0 + h - h * min(v, ymax) / ymax
            out.append('<circle cx="%.1f" cy="%.1f" r="2.2" fill="%s"><title>%s %s: %.2f B</title></circle>'
                       % (x, y, color, r["name"], label, v))
    out.append('<text x="%g" y="%g" font-size="11" text-anchor="middle">%d matrices, sorted by HiSparse bytes per entry'
               '</text>' % (x0 + w / 2, y0 + h + 16, n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--md", default="bench/results/hisparse.md")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("-o", "--output", default="bench/results/hisparse-footprint.svg")
    a = ap.parse_args()
    rows = read_table(a.md, a.d)
    single = [r for r in rows if r["prec"] in ("f32", "c32")]
    double = [r for r in rows if r["prec"] in ("f64", "c64")]
    ymax = max(max(r["csr"], r["coo"], min(r["hs"], 32)) for r in rows)
    ymax = 4 * int(ymax / 4 + 1)
    W, H = 900, 620
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (W, H),
           '<rect width="100%" height="100%" fill="#fff"/>',
           '<text x="%d" y="22" font-size="16" text-anchor="middle">Bytes per stored entry: HiSparse (d = %d) against '
           'CSR and COO (the paper\'s Figure 2)</text>' % (W // 2, a.d)]
    panel(out, single, 60, 60, W - 90, 210, "single precision (f32, c32)", ymax)
    panel(out, double, 60, 340, W - 90, 210, "double precision (f64, c64)", ymax)
    for i, (label, color) in enumerate(SERIES):
        out.append('<circle cx="%d" cy="%d" r="4" fill="%s"/><text x="%d" y="%d" font-size="12">%s</text>'
                   % (80 + 120 * i, H - 22, color, 88 + 120 * i, H - 18, label))
    out.append('<text x="14" y="%d" font-size="11" transform="rotate(-90 14 %d)">bytes per entry</text>' % (H // 2, H // 2))
    out.append("</svg>")
    # written beside the target and renamed, so a failed run leaves the old plot
    d = os.path.dirname(os.path.abspath(a.output))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".hisparse_plot.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, a.output)
    print("wrote %s (%d single, %d double precision matrices)" % (a.output, len(single), len(double)))


if __name__ == "__main__":
    main()
