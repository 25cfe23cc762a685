# Hola format (formats/hola.c, kernels/cuda/hola.cu): unit tests on the CPU
# backend (label unit) and the GPU kernels against the CPU reference (label gpu;
# exits 77 = skipped without a CUDA device).  End-to-end: the CLI solves with
# --format hola on the CPU backend (label e2e).
sps_add_unit_test(NAME test_hola
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hola.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
target_compile_options(test_hola PRIVATE -O2)
sps_add_unit_test(NAME test_gpu_hola
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_hola.c ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c
  LABELS gpu
  ENV OMP_WAIT_POLICY=PASSIVE)
target_compile_options(test_gpu_hola PRIVATE -O2)
if(SPS_HAVE_CUDA)
  target_compile_definitions(test_gpu_hola PRIVATE SPS_HAVE_CUDA)
endif()
set_tests_properties(test_gpu_hola PROPERTIES TIMEOUT 900)
if(TARGET spsolve_cli)
  add_test(NAME e2e.format_hola.poisson2d
           COMMAND $<TARGET_FILE:spsolve_cli> -m poisson2d:30 --format hola --backend cpu)
  set_tests_properties(e2e.format_hola.poisson2d PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT OMP_WAIT_POLICY=PASSIVE)
endif()
