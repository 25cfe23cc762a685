# Unit tests of the core (context, errors, vectors, operators), the CPU kernels
# (BLAS-1, CSR/COO SpMV) and the CSR/COO formats (construction, conversion,
# info, generators, Matrix Market round trips).
# test_formats takes the real-matrix corpus as argv[1] when configured
# (otherwise env SPS_MATRIX_DIR; that part is skipped when absent).
sps_add_unit_test(NAME test_core
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_core.c
  LABELS unit)
# the option declarations of every format, solver and preconditioner; keyed sets;
# with the CLI: each declaration is a flag of spsolve --help
set(_options_args "")
if(TARGET spsolve_cli)
  set(_options_args $<TARGET_FILE:spsolve_cli>)
endif()
sps_add_unit_test(NAME test_options
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_options.c
  ARGS ${_options_args}
  LABELS unit)
# OMP_WAIT_POLICY=PASSIVE: idle OpenMP threads must not spin through the serial
# reference loops on a small machine running other tests at the same time.
sps_add_unit_test(NAME test_kernels
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_kernels.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
target_link_libraries(test_kernels PRIVATE OpenMP::OpenMP_C)
# the long double reference loops dominate the run time: optimise the test code
# itself (the library keeps the build type's flags)
target_compile_options(test_kernels PRIVATE -O2)
set(_formats_args "")
if(SPS_MATRIX_DIR)
  list(APPEND _formats_args "${SPS_MATRIX_DIR}")
endif()
sps_add_unit_test(NAME test_formats
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_formats.c
  ARGS ${_formats_args}
  LABELS unit)
# the test parses the .mtx.gz corpus independently of io/mmio.c
target_link_libraries(test_formats PRIVATE ZLIB::ZLIB OpenMP::OpenMP_C)
# allocation fault injection: meaningful in a -DSPSOLVE_FAULT_INJECTION=ON build
# (.ci/run's sanitizer build), skipped (77) otherwise
sps_add_unit_test(NAME test_fault
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_fault.c
  LABELS unit)
if(SPSOLVE_FAULT_INJECTION)
  target_compile_definitions(test_fault PRIVATE SPS_FAULT_INJECTION_BUILD)
endif()
