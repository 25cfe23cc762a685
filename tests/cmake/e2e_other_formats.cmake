# End-to-end: the spsolve CLI solves with each of HYB, JDS and DIA on the CPU
# backend (label e2e): a generated Poisson problem with CG, and the nonsymmetric
# pde900 with GMRES + Jacobi (skipped without the corpus).  Passing
# means exit 0: the library converged and the CLI's independent residual check
# (from the CSR matrix, before the conversion) agrees.
if(NOT TARGET spsolve_cli)
  return()
endif()
foreach(fmt hyb jds dia)
  add_test(NAME e2e.format_${fmt}.poisson2d
           COMMAND $<TARGET_FILE:spsolve_cli> -m poisson2d:30 --format ${fmt} --backend cpu)
  set_tests_properties(e2e.format_${fmt}.poisson2d PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT OMP_WAIT_POLICY=PASSIVE)
  # registered without the corpus too: it then reports skipped (matrix.cmake, E2E-SKIP)
  sps_e2e(format_${fmt}.pde900.gmres matrix.cmake -DMATRIX=${_sps_mdir}/nonsym/pde900.mtx.gz -DSOLVER=gmres
          -DPRECOND=jacobi "-DEXTRA=--format ${fmt} --backend cpu")
endforeach()
