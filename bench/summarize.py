#!/usr/bin/env python3
"""Summarise an spbench CSV against the format and Hola issues' targets.

  bench/summarize.py FILE.csv [FILE2.csv ...]

For each file: per matrix and precision, op N, our best format against the best
cuSPARSE kernel (any format) and the geometric mean of that ratio; SELL and
RgCSR as % of the copy bandwidth (spbench's CSR traffic model); Hola against the
best cuSPARSE CSR kernel (op N: CSR ALG1/ALG2; op T: CSR ALG1 transposed) over
the matrices with nnz >= 3e5, geometric mean and lowest.  Reads only the CSV."""
import csv
import math
import sys


def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float('nan')


def summarize(path):
    rd = csv.DictReader(open(path))
    if 'ms' not in (rd.fieldnames or []):  # a conversion table (-convert.csv): not SpMV rows
        return
    rows = [r for r in rd if r['status'] == 'ok' and r['ms']]
    cases = sorted({(r['precision'], r['matrix']) for r in rows})
    print(f'## {path}\n')
    print('| precision | matrix | our best | ms | best cuSPARSE | ms | ratio | SELL %copy | RgCSR %copy |')
    print('| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |')
    ratios = {}
    for prec, mat in cases:
        sel = [r for r in rows if r['precision'] == prec and r['matrix'] == mat and r['op'] == 'N']
        ours = [r for r in sel if r['kernel'].startswith('ours:')]
        cus = [r for r in sel if r['kernel'].startswith('cusparse:')]
        if not ours or not cus:
            continue
        bo = min(ours, key=lambda r: float(r['ms']))
        bc = min(cus, key=lambda r: float(r['ms']))
        q = float(bc['ms']) / float(bo['ms'])
        ratios.setdefault(prec, []).append(q)
        pc = {r['kernel']: r['%copy'] for r in ours}
        print(f"| {prec} | {mat} | {bo['kernel'][5:]} | {bo['ms']} | {bc['kernel'][9:]} | {bc['ms']} | {q:.3f} "
              f"| {pc.get('ours:sell', '-')} | {pc.get('ours:rgcsr', '-')} |")
    for prec, v in sorted(ratios.items()):
        print(f'\nbest format vs best cuSPARSE, {prec}, geometric mean over {len(v)}: **{gmean(v):.4f}**')
    print('\n| precision | op | matrix | hola ms | best cuSPARSE CSR ms | speed-up |')
    print('| --- | --- | --- | ---: | ---: | ---: |')
    hv = {}
    for prec, mat in cases:
        for op in ('N', 'T'):
            sel = [r for r in rows if r['precision'] == prec and r['matrix'] == mat and r['op'] == op]
            h = [r for r in sel if r['kernel'] == 'ours:hola']
            c = [r for r in sel if r['kernel'].startswith('cusparse:csr')]
            if not h or not c or int(h[0]['nnz']) < 300000:
                continue
            bc = min(float(r['ms']) for r in c)
            q = bc / float(h[0]['ms'])
            hv.setdefault((prec, op), []).append(q)
            print(f"| {prec} | {op} | {mat} | {h[0]['ms']} | {bc} | {q:.3f} |")
    for (prec, op), v in sorted(hv.items()):
        print(f'\nhola {prec} op {op}: geometric mean {gmean(v):.3f}, lowest {min(v):.3f} over {len(v)}')
    print()


for p in sys.argv[1:]:
    summarize(p)
