#!/usr/bin/env bash
# A/B runs of compile-time tuning knobs on a GPU machine: builds spbench once per
# variant (CUDA flags per variant, in parallel), then runs spbench with the same
# arguments on each, one after the other.  Tables go to $OUT/<name>/ and the
# console logs to $OUT/<name>.log.
#
# Usage: OUT=dir [TEST=target] bench/variants.sh "SPBENCH ARGS" name1="FLAGS" name2="FLAGS" ...
#   e.g. bench/variants.sh "--formats all --mode spmv" base="" pf256="-DSPS_NA_L2PF=256"
# TEST (e.g. test_gpu_hola): also build that test of each variant and run it
# before the variant's spbench (its log: $OUT/<name>-test.log).
set -u
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-./gpu-out}"
if [ $# -lt 2 ]; then
  echo "usage: OUT=dir [TEST=target] bench/variants.sh \"SPBENCH ARGS\" name=\"FLAGS\" [name=\"FLAGS\" ...]" >&2
  exit 2
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)" # the runs cd into their build folders
ARGS="$1"; shift
for v in "$@"; do
  case "$v" in *=*) ;; *) echo "variants.sh: '$v' is not name=\"FLAGS\"" >&2; exit 2 ;; esac
done
MDIR=""
[ -f "$SRC/.devdata/matrices/MANIFEST.tsv" ] && MDIR="$SRC/.devdata/matrices"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
names=()
for v in "$@"; do
  name="${v%%=*}"; flags="${v#*=}"
  names+=("$name")
  ( (cmake -S "$SRC" -B "$SRC/build-var-$name" "${gen[@]}" -DSPSOLVE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="$flags" -DSPSOLVE_BUILD_TESTS="$([ -n "${TEST:-}" ] && echo ON || echo OFF)" \
     ${MDIR:+-DSPSOLVE_MATRIX_DIR="$MDIR"} >/dev/null &&
   cmake --build "$SRC/build-var-$name" -j"${JOBS:-16}" --target spbench ${TEST:+"$TEST"}) >"$OUT/build-$name.log" 2>&1
   echo $? >"$OUT/build-$name.rc") &
done
wait
for name in "${names[@]}"; do
  exe="$SRC/build-var-$name/spbench"
  # an old binary from an earlier build must not stand in for a failed one
  if [ "$(cat "$OUT/build-$name.rc" 2>/dev/null)" != 0 ] || [ ! -x "$exe" ]; then
    echo "$name: build FAILED"; tail -5 "$OUT/build-$name.log"; continue
  fi
  if [ -n "${TEST:-}" ]; then
    exe_t=$(find "$SRC/build-var-$name" -name "$TEST" -type f -perm -u+x | head -1)
    if [ -n "$exe_t" ]; then
      (cd "$(dirname "$exe_t")" && timeout 300 "$exe_t" >"$OUT/$name-test.log" 2>&1)
      echo "$name: $TEST rc=$?"
    else
      echo "$name: $TEST not built"
    fi
  fi
  t0=$(date +%s)
  # shellcheck disable=SC2086
  (cd "$SRC/build-var-$name" && timeout "${BENCH_TIMEOUT:-300}" ./spbench $ARGS --out "$OUT/$name" >"$OUT/$name.log" 2>&1)
  echo "$name: spbench rc=$? in $(( $(date +%s) - t0 )) s"
done
