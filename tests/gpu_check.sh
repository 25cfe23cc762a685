#!/usr/bin/env bash
# GPU check of libspsolve, for a machine with an NVIDIA GPU (sm_90 by default):
#   1. configure with CUDA (-DSPSOLVE_MATRIX_DIR=<src>/.devdata/matrices when that folder
#      exists) and build with -j16;
#   2. ctest -L gpu, then the rest of the suite (ctest -LE gpu);
#   3. compute-sanitizer --tool memcheck and --tool racecheck on the GPU test
#      executables with SPS_GPU_TEST_SMALL=1;
#   4. spbench --quick when the build produced it;
#   5. a fault-injection build (-DSPSOLVE_FAULT_INJECTION=ON) and test_gpu_fault.
# Logs go to $OUT (default ./gpu-out), at most 9 files: SUMMARY, build.log,
# ctest_gpu.log, ctest_rest.log, memcheck.log, racecheck.log, spbench.log, fault.log.
# SUMMARY is short: one line per step plus the test and sanitizer verdicts.
#
# Usage: tests/gpu_check.sh [SRC]      SRC: source tree (default: this script's repository);
#        carried data is looked for in SRC/.devdata, then beside this script.
# Environment: OUT, CUDA_ARCH (default 90), JOBS (default 16), BUILD (default SRC/build-gpu),
#              SKIP_SANITIZER=1, SKIP_BENCH=1, SKIP_FAULT=1, SKIP_TESTS=1 (no ctest step: the
#              sanitizers and the fault build in a call of their own), TESTS=REGEX (only those tests, no
#              sanitizer, no fault build unless FAULT=1), SANITIZE_TESTS="test_gpu_x ..." (the list run
#              under both sanitizer tools; default the eight named in the sanitizer step).
# Exit status: 0 when the build succeeded and no test or sanitizer check failed.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$(cd "${1:-$HERE}" && pwd)"
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BUILD="${BUILD:-$SRC/build-gpu}"
ARCH="${CUDA_ARCH:-90}"
JOBS="${JOBS:-16}"
S="$OUT/SUMMARY"
: >"$S"
fail=0
say() { echo "$*" | tee -a "$S"; }
now() { date +%s; }

say "gpu_check: $(date -u +%FT%TZ) src=$SRC"
say "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 || echo none)"
say "nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo none)"

# ---------------------------------------------------------------- configure + build
t0=$(now)
cfg=(-DSPSOLVE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_BUILD_TYPE=Release -DSPSOLVE_BUILD_TESTS=ON)
# carried data (.devdata is git-ignored): in the source tree, else beside this script
DEV=""
for d in "$SRC/.devdata" "$HERE/.devdata"; do [ -d "$d" ] && { DEV="$d"; break; }; done
MDIR=""
if [ -n "$DEV" ] && [ -f "$DEV/matrices/MANIFEST.tsv" ]; then
  MDIR="$DEV/matrices"
  cfg+=(-DSPSOLVE_MATRIX_DIR="$MDIR")
fi
# zlib headers: carried in .devdata/zlib when the machine lacks them
if [ ! -f /usr/include/zlib.h ] && [ -n "$DEV" ] && [ -f "$DEV/zlib/include/zlib.h" ]; then
  cfg+=(-DZLIB_INCLUDE_DIR="$DEV/zlib/include" -DZLIB_LIBRARY="$DEV/zlib/lib/libz.a")
  say "zlib: headers from $DEV/zlib"
fi
# the spin-transformation data (test_spin), carried in .devdata/spinxform
if [ -n "$DEV" ] && [ -f "$DEV/spinxform/sphere.obj" ]; then
  cfg+=(-DSPSOLVE_SPIN_DATA="$DEV/spinxform")
fi
say "matrices: ${MDIR:-none}"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
{
  cmake -S "$SRC" -B "$BUILD" "${gen[@]}" "${cfg[@]}" && cmake --build "$BUILD" -j"$JOBS"
} >"$OUT/build.log" 2>&1
brc=$?
say "build: rc=$brc in $(( $(now) - t0 )) s ($(grep -c -i 'warning' "$OUT/build.log") warning lines)"
if [ $brc -ne 0 ]; then
  grep -E -i 'error' "$OUT/build.log" | head -20 >>"$S"
  say "RESULT: FAIL (build)"
  exit 1
fi

# ---------------------------------------------------------------- tests
# TESTS=REGEX: only the tests matching it (ctest -R), e.g. a few to recheck;
# SKIP_TESTS=1: none (a second call for the sanitizers and the fault build)
if [ "${SKIP_TESTS:-0}" = 1 ]; then
  say "ctest: skipped (SKIP_TESTS=1)"
elif [ -n "${TESTS:-}" ]; then
  ctest --test-dir "$BUILD" -R "$TESTS" --output-on-failure --timeout 900 -j8 >"$OUT/ctest_gpu.log" 2>&1 || fail=1
  say "ctest -R '$TESTS': $(grep -E 'tests passed|tests failed' "$OUT/ctest_gpu.log" | tail -1)"
  grep -E '^ *[0-9]+ - .*\((Failed|Timeout|Not Run)\)' "$OUT/ctest_gpu.log" | sed 's/^ */  /' >>"$S"
  SKIP_SANITIZER=1
else
t0=$(now)
ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 900 >"$OUT/ctest_gpu.log" 2>&1 || fail=1
# a build without tests (SPSOLVE_BUILD_TESTS=OFF in a reused BUILD) runs nothing: that is no pass
if ! grep -qE 'tests passed|tests failed' "$OUT/ctest_gpu.log"; then
  say "ctest -L gpu: no tests found in $BUILD (configured with SPSOLVE_BUILD_TESTS=OFF?)"
  fail=1
fi
say "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$OUT/ctest_gpu.log" | tail -1) in $(( $(now) - t0 )) s"
grep -E '^ *[0-9]+/[0-9]+ Test' "$OUT/ctest_gpu.log" | sed 's/^ */  /' >>"$S"
grep -E ' passed, [0-9]+ failed' "$OUT/ctest_gpu.log" | sed 's/^/  checks: /' >>"$S"
t0=$(now)
ctest --test-dir "$BUILD" -LE gpu -j8 --output-on-failure --timeout 900 >"$OUT/ctest_rest.log" 2>&1 || fail=1
say "ctest -LE gpu: $(grep -E 'tests passed|tests failed' "$OUT/ctest_rest.log" | tail -1) in $(( $(now) - t0 )) s"
grep -E '^ *[0-9]+ - .*\((Failed|Timeout|Not Run|Skipped)\)' "$OUT/ctest_rest.log" | sed 's/^ */  /' >>"$S"
fi

# ---------------------------------------------------------------- compute-sanitizer
if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    log="$OUT/$tool.log"
    : >"$log"
    t0=$(now)
    for exe in ${SANITIZE_TESTS:-test_gpu_kernels test_gpu_spmv test_gpu_hola test_gpu_variants test_gpu_compound test_gpu_precond test_gpu_assemble test_gpu_hisparse}; do
      bin="$BUILD/tests/$exe"
      [ -x "$bin" ] || continue
      args=()
      [ "$exe" = test_gpu_spmv ] && [ -n "$MDIR" ] && args=("$MDIR")
      echo "==== $tool $exe" >>"$log"
      t1=$(now)
      SPS_GPU_TEST_SMALL=1 timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$bin" "${args[@]}" >>"$log" 2>&1
      rc=$?
      verdict=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)
      say "$tool $exe: rc=$rc in $(( $(now) - t1 )) s ${verdict:-no summary}"
      [ $rc -ne 0 ] && fail=1
    done
    say "$tool: $(( $(now) - t0 )) s"
  done
else
  say "compute-sanitizer: skipped"
fi

# ---------------------------------------------------------------- benchmark
if [ "${SKIP_BENCH:-0}" != 1 ] && [ -x "$BUILD/spbench" ]; then
  t0=$(now)
  (cd "$BUILD" && timeout 240 ./spbench --quick --out "$OUT/bench" >"$OUT/spbench.log" 2>&1)
  rc=$?
  # results: keep the markdown table as one of the returned files
  md=$(ls "$OUT"/bench/*.md 2>/dev/null | head -1)
  if [ -n "$md" ]; then cat "$md" >>"$OUT/spbench.log"; fi
  rm -rf "$OUT/bench"
  say "spbench --quick: rc=$rc in $(( $(now) - t0 )) s"
fi

# ---------------------------------------------------------------- device allocation faults
# a second build with -DSPSOLVE_FAULT_INJECTION=ON: test_gpu_fault fails each device
# allocation of a read/convert/precondition/solve scenario in turn (skipped with
# TESTS=... unless FAULT=1, or with SKIP_FAULT=1)
if [ "${SKIP_FAULT:-0}" != 1 ] && { [ -z "${TESTS:-}" ] || [ "${FAULT:-0}" = 1 ]; }; then
  t0=$(now)
  FB="${BUILD}-fault"
  { cmake -S "$SRC" -B "$FB" "${gen[@]}" "${cfg[@]}" -DSPSOLVE_FAULT_INJECTION=ON &&
    cmake --build "$FB" -j"$JOBS" --target test_gpu_fault; } >"$OUT/fault.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    timeout 900 "$FB/tests/test_gpu_fault" >>"$OUT/fault.log" 2>&1
    rc=$?
  fi
  say "fault injection (device allocations): rc=$rc in $(( $(now) - t0 )) s: $(grep -E 'allocations failed in turn|passed, [0-9]+ failed' "$OUT/fault.log" | tr '\n' ' ')"
  [ $rc -ne 0 ] && fail=1
fi

[ $fail -eq 0 ] && say "RESULT: PASS" || say "RESULT: FAIL"
exit $fail
