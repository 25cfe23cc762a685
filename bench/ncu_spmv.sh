#!/usr/bin/env bash
# Hardware counters of the SpMV kernels that spbench times (ours and cuSPARSE's),
# for a GPU machine with Nsight Compute.  One spbench run (1 rep, no warm-up)
# under `ncu --clock-control none` with a fixed, small metric set: time, DRAM
# bytes, L2 sectors the SMs read and their hit rate, L1 hit rate, throughput of
# DRAM / L2 / L1 as % of peak, warps active.  The CSV goes to $OUT/ncu-<tag>.csv.
#
# Usage: bench/ncu_spmv.sh BUILD TAG SPBENCH-ARGS...
#   e.g. bench/ncu_spmv.sh build-gpu pl --only powerlaw-2M --precision f64 --formats csr,hola
# Kernels whose name matches NCU_SKIP (default: the L2 flush, generators,
# conversions, checks) are not profiled.
set -u
BUILD="$1"; TAG="$2"; shift 2
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
M=$M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_op_read_hit_rate.pct
M=$M,l1tex__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
M=$M,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread,launch__grid_size
SKIP="${NCU_SKIP:-flush|memset|fill|gen|convert|build|scan|plan|poison|check|copy|Scan|Sort|sort|histo|count|width|transpose}"
timeout "${NCU_TIMEOUT:-300}" ncu --clock-control none --metrics "$M" --csv --print-units base \
  --kernel-name "regex:^(?!.*($SKIP)).*" \
  "$BUILD/spbench" --mode spmv --reps 1 --warmup 0 --out "$OUT/ncu-bench-$TAG" "$@" \
  >"$OUT/ncu-$TAG.csv" 2>"$OUT/ncu-$TAG.err"
rc=$?
rm -rf "$OUT/ncu-bench-$TAG"
echo "ncu $TAG: rc=$rc, $(grep -c gpu__time_duration "$OUT/ncu-$TAG.csv") kernels"
exit $rc
