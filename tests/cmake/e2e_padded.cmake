# End-to-end CLI tests of the padded formats (label e2e), CPU backend: each
# format solves poisson2d:30 (CG, f64 and f32), the nonsymmetric sherman1 (GMRES +
# Jacobi) and the complex young1c (GMRES), skipped without the corpus; exit 0
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
  # registered without the corpus too: they then report skipped (matrix.cmake, E2E-SKIP)
  sps_e2e(padded.${fmt}.sherman1.gmres matrix.cmake -DMATRIX=${_sps_mdir}/nonsym/sherman1.mtx.gz -DSOLVER=gmres
          -DPRECOND=jacobi "-DEXTRA=--format ${fmt} --backend cpu")
  sps_e2e(padded.${fmt}.young1c.gmres matrix.cmake -DMATRIX=${_sps_mdir}/complex/young1c.mtx.gz -DSOLVER=gmres
          -DPRECOND=jacobi "-DEXTRA=--format ${fmt} --backend cpu")
endforeach()

# ELL on bloweybq: exit 1 with the projection and a suggestion (skipped without the corpus)
sps_e2e(padded.ell.refused matrix.cmake -DMATRIX=${_sps_mdir}/spd/bloweybq.mtx.gz -DSOLVER=cg -DPRECOND=none
        "-DEXTRA=--format ell --backend cpu"
        "-DEXPECT_REFUSED=ELL conversion refused: it would store [0-9]+ entries \\([0-9]+ bytes\\).*fill factor.*use sell")
