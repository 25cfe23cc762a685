#!/usr/bin/env python3
"""One line per profiled kernel launch of a bench/ncu_spmv.sh CSV (ncu --csv).

  bench/ncu_summary.py ncu-TAG.csv [PATTERN]

Columns: launch id, kernel (shortened), time (us), DRAM read (MB), L2 sectors the
L1s read (MB), L2 read hit rate, L1 hit rate, DRAM / L2 throughput (% of peak),
warps active (% of peak), registers.  PATTERN: only kernels whose name holds it."""
import collections
import csv
import sys


def main():
    lines = [ln for ln in open(sys.argv[1]) if ln.startswith('"')]
    pat = sys.argv[2] if len(sys.argv) > 2 else ''
    rows = collections.OrderedDict()
    for x in csv.DictReader(lines):
        rows.setdefault((x['ID'], x['Kernel Name']), {})[x['Metric Name']] = x['Metric Value']
    print('| id | kernel | us | DRAM rd MB | L2 rd MB | L2 hit % | L1 hit % | DRAM % | L2 % | warps % | regs |')
    print('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for (i, name), m in rows.items():
        if pat not in name:
            continue

        def f(n):
            return float(m.get(n, 'nan').replace(',', ''))
        short = name.split('(')[0].replace('void ', '').replace('<unnamed>::', '')[:48]
        print(f"| {i} | {short} | {f('gpu__time_duration.sum') / 1e3:.1f} | {f('dram__bytes_read.sum') / 1e6:.0f} "
              f"| {f('lts__t_sectors_srcunit_tex_op_read.sum') * 32 / 1e6:.0f} "
              f"| {f('lts__t_sector_op_read_hit_rate.pct'):.0f} | {f('l1tex__t_sector_hit_rate.pct'):.0f} "
              f"| {f('dram__throughput.avg.pct_of_peak_sustained_elapsed'):.0f} "
              f"| {f('lts__throughput.avg.pct_of_peak_sustained_elapsed'):.0f} "
              f"| {f('sm__warps_active.avg.pct_of_peak_sustained_active'):.0f} "
              f"| {m.get('launch__registers_per_thread', '')} |")


main()
