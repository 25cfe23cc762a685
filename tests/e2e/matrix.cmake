# One SuiteSparse matrix solved by the CLI: b = A*1, rtol 1e-8, maxit 10000.
#   cmake -DCLI=... -DWORK=... -DMATRIX=file.mtx.gz -DPRECOND=..
#         (-DSOLVER=.. [-DRESTART=m] | -DEXPECT_SOLVER=..) ["-DEXTRA=--format ell ..."]
#         [-DEXPECT_REFUSED=regex] -P matrix.cmake
# Passes when the CLI exits 0 and its recomputed ||b-Ax||/||b|| <= 1e-8.  With
# EXPECT_SOLVER instead of SOLVER, no --solver is given and the default the
# CLI picks is checked.  EXTRA: more arguments (one string, split like a shell).
# EXPECT_REFUSED: the run must instead exit 1 with stderr matching it.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
if(NOT EXISTS "${MATRIX}")
  message(STATUS "E2E-SKIP: ${MATRIX} not found (the SuiteSparse corpus: configure with -DSPSOLVE_MATRIX_DIR=DIR)")
  return()
endif()
set(args -m "${MATRIX}" --precond ${PRECOND} --rtol 1e-8 --maxit 10000 --json)
if(SOLVER)
  list(APPEND args --solver ${SOLVER})
  set(EXPECT_SOLVER ${SOLVER})
endif()
if(RESTART)
  list(APPEND args --restart ${RESTART})
endif()
if(EXTRA)
  separate_arguments(extra UNIX_COMMAND "${EXTRA}")
  list(APPEND args ${extra})
endif()
e2e_run(${args})
if(EXPECT_REFUSED)
  e2e_expect_rc(1)
  e2e_expect_stderr("${EXPECT_REFUSED}")
  return()
endif()
e2e_expect_solved(1e-8)
e2e_json_expect(${EXPECT_SOLVER} solver name)
e2e_json_expect(file matrix kind)
e2e_json(it result iterations)
e2e_json(res result true_relative_residual)
message(STATUS "${MATRIX}: ${EXPECT_SOLVER}+${PRECOND} ${it} iterations, ||b-Ax||/||b|| = ${res}")
