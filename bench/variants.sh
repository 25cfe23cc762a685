#!/usr/bin/env bash
# A/B runs of tuning variants on a GPU machine, then spbench with the same
# arguments on each, one after the other.  Tables go to $OUT/<name>/ and the
# console logs to $OUT/<name>.log.  A variant is either run-time (FLAGS starting
# with --variant: an sps_launch_variant of kernels/launch.h, passed to spbench;
# all of them share one build) or compile-time (CUDA flags: one build each, in
# parallel).  The tuning knobs are run-time variants now (bench/results/knobs.md).
#
# Usage: OUT=dir [TEST=target] bench/variants.sh "SPBENCH ARGS" name1="FLAGS" name2="FLAGS" ...
#   e.g. bench/variants.sh "--formats hola --mode spmv" base="--variant" e5="--variant hola_early_mul=1,hola_minb=5"
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
built_rt=0
for v in "$@"; do
  name="${v%%=*}"; flags="${v#*=}"
  names+=("$name")
  case "$flags" in --variant*)
    [ $built_rt = 1 ] && continue
    built_rt=1; name=runtime; flags="" ;;
  esac
  ( (cmake -S "$SRC" -B "$SRC/build-var-$name" "${gen[@]}" -DSPSOLVE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="$flags" -DSPSOLVE_BUILD_TESTS="$([ -n "${TEST:-}" ] && echo ON || echo OFF)" \
     ${MDIR:+-DSPSOLVE_MATRIX_DIR="$MDIR"} >/dev/null &&
   cmake --build "$SRC/build-var-$name" -j"${JOBS:-16}" --target spbench ${TEST:+"$TEST"}) >"$OUT/build-$name.log" 2>&1
   echo $? >"$OUT/build-$name.rc") &
done
wait
for name in "${names[@]}"; do
  flags=""; for v in "$@"; do [ "${v%%=*}" = "$name" ] && flags="${v#*=}"; done
  run_args="$ARGS"; bname="$name"
  case "$flags" in --variant*)
    bname=runtime; vv="${flags#--variant}"; vv="${vv# }"
    [ -n "$vv" ] && run_args="$ARGS --variant $vv" ;;
  esac
  exe="$SRC/build-var-$bname/spbench"
  # an old binary from an earlier build must not stand in for a failed one
  if [ "$(cat "$OUT/build-$bname.rc" 2>/dev/null)" != 0 ] || [ ! -x "$exe" ]; then
    echo "$name: build FAILED"; tail -5 "$OUT/build-$bname.log"; continue
  fi
  if [ -n "${TEST:-}" ]; then
    exe_t=$(find "$SRC/build-var-$bname" -name "$TEST" -type f -perm -u+x | head -1)
    if [ -n "$exe_t" ]; then
      (cd "$(dirname "$exe_t")" && timeout 300 "$exe_t" >"$OUT/$name-test.log" 2>&1)
      echo "$name: $TEST rc=$?"
    else
      echo "$name: $TEST not built"
    fi
  fi
  t0=$(date +%s)
  # shellcheck disable=SC2086
  (cd "$SRC/build-var-$bname" && timeout "${BENCH_TIMEOUT:-300}" ./spbench $run_args --out "$OUT/$name" >"$OUT/$name.log" 2>&1)
  echo "$name: spbench rc=$? in $(( $(date +%s) - t0 )) s"
done
