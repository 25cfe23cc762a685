# One SuiteSparse matrix solved by the CLI: b = A*1, rtol 1e-8, maxit 10000.
#   cmake -DCLI=... -DWORK=... -DMATRIX=file.mtx.gz -DSOLVER=.. -DPRECOND=.. -P matrix.cmake
# Passes when the CLI exits 0 and its recomputed ||b-Ax||/||b|| <= 1e-8.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
if(NOT EXISTS "${MATRIX}")
  message(STATUS "E2E-SKIP: ${MATRIX} not found")
  return()
endif()
e2e_run(-m "${MATRIX}" --solver ${SOLVER} --precond ${PRECOND} --rtol 1e-8 --maxit 10000 --json)
e2e_expect_solved(1e-8)
e2e_json_expect(${SOLVER} solver name)
e2e_json(it result iterations)
e2e_json(res result true_relative_residual)
message(STATUS "${MATRIX}: ${SOLVER}+${PRECOND} ${it} iterations, ||b-Ax||/||b|| = ${res}")
