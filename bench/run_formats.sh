#!/usr/bin/env bash
# Build for the GPU, run the GPU tests named by TESTS (a ctest -R pattern; default
# every `gpu` test), then spbench over every format (ops N and T, f32 and f64,
# the generated set) and, when NCU is set, bench/ncu_spmv.sh on the spbench
# arguments in NCU.  Logs and tables go to $OUT (build.log, ctest.log,
# spbench.log, bench/*.md|csv, ncu-*.csv).  For a machine with an NVIDIA GPU.
#
# Usage: OUT=dir [TESTS=regex] [NCU="--only powerlaw-2M --precision f64 --formats csr"] \
#          [BENCH="--formats all --mode spmv"] bench/run_formats.sh
set -u
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
BUILD="${BUILD:-$SRC/build-gpu}"
cfg=(-DSPSOLVE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DCMAKE_BUILD_TYPE=Release)
[ -f "$SRC/.devdata/matrices/MANIFEST.tsv" ] && cfg+=(-DSPSOLVE_MATRIX_DIR="$SRC/.devdata/matrices")
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
t0=$(date +%s)
if ! { cmake -S "$SRC" -B "$BUILD" "${gen[@]}" "${cfg[@]}" && cmake --build "$BUILD" -j"${JOBS:-16}"; } \
    >"$OUT/build.log" 2>&1; then
  grep -E -i 'error' "$OUT/build.log" | head -20
  echo "build: FAILED"
  exit 1
fi
echo "build: ok in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
if [ -n "${TESTS:-}" ]; then
  ctest --test-dir "$BUILD" -R "$TESTS" --output-on-failure --timeout 600 >"$OUT/ctest.log" 2>&1
else
  ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 600 >"$OUT/ctest.log" 2>&1
fi
echo "ctest: rc=$? $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1) in $(( $(date +%s) - t0 )) s"
if [ -n "${NCU:-}" ]; then
  # shellcheck disable=SC2086
  OUT="$OUT" NCU_TIMEOUT="${NCU_TIMEOUT:-90}" "$SRC/bench/ncu_spmv.sh" "$BUILD" probe $NCU
fi
t0=$(date +%s)
# shellcheck disable=SC2086
(cd "$BUILD" && timeout "${BENCH_TIMEOUT:-400}" ./spbench ${BENCH:---formats all --mode spmv} --out "$OUT/bench" \
  >"$OUT/spbench.log" 2>&1)
echo "spbench: rc=$? in $(( $(date +%s) - t0 )) s"
