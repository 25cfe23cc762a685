# End-to-end tests of the spsolve CLI (label e2e).  Each test is a CMake -P
# script under tests/e2e that runs the built executable in its own scratch
# directory; a script prints "E2E-SKIP" to be reported as skipped.
if(NOT TARGET spsolve_cli)
  return()
endif()

set(SPS_E2E_DIR ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
if(SPS_HAVE_CUDA)
  set(SPS_E2E_CUDA ON)
else()
  set(SPS_E2E_CUDA OFF)
endif()

# sps_e2e(<name> <script> [-Dvar=value ...])
function(sps_e2e name script)
  add_test(NAME e2e.${name}
           COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:spsolve_cli> -DWORK=${CMAKE_CURRENT_BINARY_DIR}/e2e/${name}
                   -DCUDA_BUILT=${SPS_E2E_CUDA} ${ARGN} -P ${SPS_E2E_DIR}/${script})
  set_tests_properties(e2e.${name} PROPERTIES LABELS e2e SKIP_REGULAR_EXPRESSION "E2E-SKIP" TIMEOUT 300)
endfunction()

# ---- core suite: generated problems and files written by the tests
foreach(solver cg bicgstab gmres)
  foreach(precond none jacobi)
    sps_e2e(solve.${solver}.${precond} scenarios.cmake -DSCENARIO=solve -DSOLVER=${solver} -DPRECOND=${precond})
  endforeach()
endforeach()
foreach(s summary default_example monitor output history bad_option unknown_format malformed missing_file
          maxit f32 format_coo complex rhs_file x0 shape indefinite nonfinite cuda help)
  sps_e2e(${s} scenarios.cmake -DSCENARIO=${s})
endforeach()

# ---- real-matrix suite: SuiteSparse matrices from SPS_MATRIX_DIR
if(SPS_MATRIX_DIR AND EXISTS "${SPS_MATRIX_DIR}/MANIFEST.tsv")
  # group/name solver precond
  set(SPS_E2E_MATRICES
    "spd/nos4 cg jacobi"
    "spd/bcsstk14 cg jacobi"
    "spd/1138_bus cg jacobi"
    "spd/Trefethen_20 cg none"
    "nonsym/sherman1 bicgstab jacobi"
    "nonsym/sherman1 gmres jacobi"
    "nonsym/orsirr_1 bicgstab jacobi"
    "nonsym/orsirr_1 gmres jacobi"
    "nonsym/pde900 bicgstab jacobi"
    "nonsym/pde900 gmres jacobi"
    "complex/young1c gmres jacobi"
    "complex/young1c bicgstab jacobi"
    "complex/qc324 gmres jacobi")
  foreach(entry ${SPS_E2E_MATRICES})
    string(REPLACE " " ";" entry "${entry}")
    list(GET entry 0 path)
    list(GET entry 1 solver)
    list(GET entry 2 precond)
    get_filename_component(mname ${path} NAME)
    sps_e2e(matrix.${mname}.${solver}.${precond} matrix.cmake -DMATRIX=${SPS_MATRIX_DIR}/${path}.mtx.gz
            -DSOLVER=${solver} -DPRECOND=${precond})
  endforeach()
endif()
