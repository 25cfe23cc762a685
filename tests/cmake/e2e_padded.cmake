# End-to-end CLI tests of the padded formats (label e2e), CPU backend: each
# format solves poisson2d:30 (CG, f64 and f32), and with SPS_MATRIX_DIR the
# nonsymmetric sherman1 (GMRES + Jacobi) and the complex young1c (GMRES); exit 0
# required.  ELL on bloweybq (one row of 10001 entries) must be refused with the
# projected size and a suggestion, not run out of memory.
if(NOT TARGET spsolve_cli)
  return()
endif()

foreach(fmt ell sell rgcsr)
  add_test(NAME e2e.padded.${fmt}.poisson2d
           COMMAND $<TARGET_FILE:spsolve_cli> -m poisson2d:30 --format ${fmt} --backend cpu)
  add_test(NAME e2e.padded.${fmt}.poisson2d.f32
           COMMAND $<TARGET_FILE:spsolve_cli> -m poisson2d:30 --format ${fmt} --backend cpu --precision f32)
  set_tests_properties(e2e.padded.${fmt}.poisson2d e2e.padded.${fmt}.poisson2d.f32
                       PROPERTIES LABELS e2e TIMEOUT 120 ENVIRONMENT OMP_WAIT_POLICY=PASSIVE)
  if(SPS_MATRIX_DIR AND EXISTS "${SPS_MATRIX_DIR}/nonsym/sherman1.mtx.gz")
    add_test(NAME e2e.padded.${fmt}.sherman1.gmres
             COMMAND $<TARGET_FILE:spsolve_cli> -m ${SPS_MATRIX_DIR}/nonsym/sherman1.mtx.gz --solver gmres
                     --precond jacobi --format ${fmt} --backend cpu)
    set_tests_properties(e2e.padded.${fmt}.sherman1.gmres
                         PROPERTIES LABELS e2e TIMEOUT 120 ENVIRONMENT OMP_WAIT_POLICY=PASSIVE)
  endif()
  if(SPS_MATRIX_DIR AND EXISTS "${SPS_MATRIX_DIR}/complex/young1c.mtx.gz")
    add_test(NAME e2e.padded.${fmt}.young1c.gmres
             COMMAND $<TARGET_FILE:spsolve_cli> -m ${SPS_MATRIX_DIR}/complex/young1c.mtx.gz --solver gmres
                     --precond jacobi --format ${fmt} --backend cpu)
    set_tests_properties(e2e.padded.${fmt}.young1c.gmres
                         PROPERTIES LABELS e2e TIMEOUT 120 ENVIRONMENT OMP_WAIT_POLICY=PASSIVE)
  endif()
endforeach()

if(SPS_MATRIX_DIR AND EXISTS "${SPS_MATRIX_DIR}/spd/bloweybq.mtx.gz")
  add_test(NAME e2e.padded.ell.refused
           COMMAND $<TARGET_FILE:spsolve_cli> -m ${SPS_MATRIX_DIR}/spd/bloweybq.mtx.gz --format ell --backend cpu)
  # exit 1 with the projection and a suggestion
  set_tests_properties(e2e.padded.ell.refused PROPERTIES LABELS e2e TIMEOUT 120 WILL_FAIL ON)
  add_test(NAME e2e.padded.ell.refused.message
           COMMAND ${CMAKE_COMMAND} -E env OMP_WAIT_POLICY=PASSIVE $<TARGET_FILE:spsolve_cli>
                   -m ${SPS_MATRIX_DIR}/spd/bloweybq.mtx.gz --format ell --backend cpu)
  set_tests_properties(e2e.padded.ell.refused.message PROPERTIES LABELS e2e TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "ELL conversion refused: it would store [0-9]+ entries \\([0-9]+ bytes\\).*fill factor.*use sell")
endif()
