#!/usr/bin/env bash
# Bit-for-bit comparison of two spsolve builds: the e2e set of solves (the
# SuiteSparse systems of tests/cmake/e2e.cmake plus generated problems over
# every solver, preconditioner, format and precision) run by both binaries;
# each solution file and iteration count must be identical.  For refactors
# that must not change a result (issue 19: "bit-identical before and after").
#
#   tests/solve_compare.sh OLD_SPSOLVE NEW_SPSOLVE MATRIX_DIR OUTDIR [BACKEND]
#
# MATRIX_DIR may be empty or missing (then only the generated problems run).
# BACKEND: cpu (default) or cuda.  Prints one line per solve and a closing
# "N passed, N failed, N not reproducible" line; exits 1 on any difference.
# A solve that differs is run by OLD once more: where OLD differs from itself
# (a kernel documented as not bit-reproducible, e.g. Hola's atomics on the GPU)
# no bit-wise verdict is possible; it is listed as NOREPRO, not as passed.
set -u
old=$1 new=$2 mdir=${3:-} out=$4 be=${5:-cpu}
mkdir -p "$out"
pass=0 fail=0 norepro=0
run() { # name, args...
  local name=$1; shift
  local ro rn
  rm -f "$out/$name".old.mtx "$out/$name".old2.mtx "$out/$name".new.mtx # none left by an earlier call
  "$old" "$@" --backend "$be" --json -o "$out/$name.old.mtx" >"$out/$name.old.json" 2>"$out/$name.old.err"; ro=$?
  "$new" "$@" --backend "$be" --json -o "$out/$name.new.mtx" >"$out/$name.new.json" 2>"$out/$name.new.err"; rn=$?
  local io in
  io=$(grep -o '"iterations": *[0-9]*' "$out/$name.old.json" | head -1)
  in=$(grep -o '"iterations": *[0-9]*' "$out/$name.new.json" | head -1)
  if [ "$ro" = "$rn" ] && [ "$io" = "$in" ] && cmp -s "$out/$name.old.mtx" "$out/$name.new.mtx"; then
    pass=$((pass + 1)); echo "same  $name (exit $ro, ${io#*: })"
  else
    local r2 i2
    "$old" "$@" --backend "$be" --json -o "$out/$name.old2.mtx" >"$out/$name.old2.json" 2>/dev/null; r2=$?
    i2=$(grep -o '"iterations": *[0-9]*' "$out/$name.old2.json" | head -1)
    # only runs that produced a solution can say OLD is not reproducible (a missing
    # binary or a failed solve is a difference)
    if [ -s "$out/$name.old.mtx" ] && [ -s "$out/$name.old2.mtx" ] && [ -s "$out/$name.new.mtx" ] &&
       { [ "$ro" != "$r2" ] || [ "$io" != "$i2" ] || ! cmp -s "$out/$name.old.mtx" "$out/$name.old2.mtx"; }; then
      norepro=$((norepro + 1))
      echo "NOREPRO $name (old differs from itself: iterations ${io#*: }/${i2#*: }; new ${in#*: }, exit $rn)"
    else
      fail=$((fail + 1)); echo "DIFF  $name (exit $ro/$rn, iterations ${io#*: }/${in#*: })"
    fi
  fi
}
for solver in cg bicgstab gmres; do
  for pc in none jacobi; do
    for prec in f64 f32; do
      for fmt in csr coo sell rgcsr hyb jds dia ell hola; do
        run "gen.$solver.$pc.$prec.$fmt" -m poisson3d:20 --solver "$solver" --precond "$pc" --precision "$prec" \
          --format "$fmt" --maxit 2000
      done
    done
  done
done
run gen.default -m poisson3d:32
run gen.complex.gmres -m poisson2d:40 --solver gmres --precision c64 --restart 20
run gen.complex.bicgstab -m poisson2d:40 --solver bicgstab --precision c32
if [ -n "$mdir" ] && [ -f "$mdir/MANIFEST.tsv" ]; then
  while read -r path solver pc restart; do
    [ -f "$mdir/$path.mtx.gz" ] || continue
    run "mm.${path##*/}.$solver.$pc" -m "$mdir/$path.mtx.gz" --solver "$solver" --precond "$pc" \
      --restart "${restart:-30}" --rtol 1e-8 --maxit 10000
  done <<'LIST'
spd/nos4 cg jacobi
spd/bcsstk14 cg jacobi
spd/1138_bus cg jacobi
spd/Trefethen_20 cg none
spd/wathen100 cg jacobi
spd/gridgena cg jacobi
nonsym/sherman4 bicgstab jacobi
nonsym/sherman1 gmres jacobi
nonsym/rdb1250 bicgstab jacobi
nonsym/orsirr_1 gmres jacobi
nonsym/pde900 bicgstab jacobi
nonsym/pde900 gmres jacobi
nonsym/steam3 bicgstab jacobi
nonsym/steam3 gmres jacobi
complex/young1c gmres jacobi
complex/young1c bicgstab jacobi
complex/qc324 bicgstab jacobi
complex/qc324 gmres jacobi 200
LIST
fi
echo "$pass passed, $fail failed, $norepro not reproducible"
[ "$fail" -eq 0 ]
