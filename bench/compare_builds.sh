#!/usr/bin/env bash
# Before/after comparison of two source trees on a GPU machine, for changes that
# must move no kernel time and no result (issue 19: "every kernel's time within
# +-3 %", "solutions bit-identical"):
#   1. build OLD and NEW (Release, sm_$CUDA_ARCH) side by side;
#   2. spbench with the same arguments, ROUNDS times, old and new alternating
#      (so drift of the machine falls on both), one CSV per run;
#   3. bench/compare_spbench.py: per kernel row, new/old median time; cuSPARSE's
#      rows (the same library in both builds) measure the noise;
#   4. tests/solve_compare.sh on the CUDA backend (unless SKIP_SOLVES=1).
# Everything goes to $OUT: SUMMARY, compare.md, build-*.log, solves.log.
#
# Usage: OUT=dir bench/compare_builds.sh OLD_SRC NEW_SRC [spbench args...]
# Environment: CUDA_ARCH (90), JOBS (16), ROUNDS (2), MATRIX_DIR (for the solves).
set -u
old_src=$(cd "$1" && pwd) new_src=$(cd "$2" && pwd)
shift 2
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
S="$OUT/SUMMARY"
: >"$S"
say() { echo "$*" | tee -a "$S"; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
say "compare_builds: $(date -u +%FT%TZ) old=$old_src new=$new_src"
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
for side in old new; do
  src=$old_src; [ $side = new ] && src=$new_src
  t0=$(date +%s)
  if ! { cmake -S "$src" -B "$src/build-cmp" "${gen[@]}" -DSPSOLVE_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
           -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DSPSOLVE_BUILD_TESTS=OFF &&
         cmake --build "$src/build-cmp" -j"${JOBS:-16}"; } >"$OUT/build-$side.log" 2>&1; then
    say "build $side: FAILED"; grep -i error "$OUT/build-$side.log" | head -10 >>"$S"; exit 1
  fi
  say "build $side: ok in $(( $(date +%s) - t0 )) s"
done
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--formats all --mode spmv)
for r in $(seq 1 "${ROUNDS:-2}"); do
  for side in old new; do
    src=$old_src; [ $side = new ] && src=$new_src
    t0=$(date +%s)
    (cd "$src/build-cmp" && ./spbench "${args[@]}" --out "$OUT/tmp-$side-$r" >"$OUT/tmp-$side-$r.log" 2>&1)
    rc=$?
    csv=$(ls "$OUT/tmp-$side-$r"/*.csv 2>/dev/null | grep -v convert | head -1)
    [ -n "$csv" ] && cp "$csv" "$OUT/tmp-$side-$r.csv"
    say "spbench $side round $r: rc=$rc in $(( $(date +%s) - t0 )) s"
  done
done
python3 "$HERE/bench/compare_spbench.py" --old "$OUT"/tmp-old-*.csv --new "$OUT"/tmp-new-*.csv >"$OUT/compare.md"
tail -n 6 "$OUT/compare.md" | tee -a "$S"
rm -rf "$OUT"/tmp-*
if [ "${SKIP_SOLVES:-0}" != 1 ]; then
  t0=$(date +%s)
  "$HERE/tests/solve_compare.sh" "$old_src/build-cmp/spsolve" "$new_src/build-cmp/spsolve" "${MATRIX_DIR:-}" \
    /tmp/solve-compare cuda >"$OUT/solves.log" 2>&1
  say "solves (cuda, bit for bit): $(tail -1 "$OUT/solves.log") in $(( $(date +%s) - t0 )) s"
  grep -E "^(DIFF|NOREPRO)" "$OUT/solves.log" | head -20 >>"$S"
fi
