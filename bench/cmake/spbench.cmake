# spbench: libspsolve SpMV and solvers against cuSPARSE (bench/README.md).  CUDA builds only.
if(SPS_HAVE_CUDA)
  set(_spbench_dir ${CMAKE_CURRENT_LIST_DIR}/..)
  add_executable(spbench
    ${_spbench_dir}/spbench.cu
    ${_spbench_dir}/spbench_solver.cu
    ${_spbench_dir}/spbench_compound.cu
    ${_spbench_dir}/spbench_add.cu
    ${_spbench_dir}/spbench_table.c
    ${_spbench_dir}/gen.c
    ${_spbench_dir}/gen_fem.c
    # the FEM app's host assembly (fembeam:g=N), built here against the static library
    ${_spbench_dir}/../apps/fem/fem.c
    ${_spbench_dir}/../apps/common/render.c
    ${_spbench_dir}/../apps/common/timing.c)
  target_include_directories(spbench PRIVATE ${_spbench_dir} ${_spbench_dir}/.. # kernels/launch.h
                             ${_spbench_dir}/../apps/fem ${_spbench_dir}/../apps/common)
  target_compile_options(spbench PRIVATE $<$<COMPILE_LANGUAGE:C>:${SPS_WARN}>
                         $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  # spsolve_static brings OpenMP (the generators use it), zlib and the CUDA runtime;
  # cuSPARSE and cuBLAS are spbench's own (the library does not link them)
  target_link_libraries(spbench PRIVATE spsolve_static CUDA::cusparse CUDA::cublas CUDA::cudart ZLIB::ZLIB m)

  # Solver mode calls sps_solver_*: compile it in only once the library implements them
  # (re-checked whenever CMake re-globs the sources, e.g. when solvers/*.c appear).
  file(GLOB _spbench_solver_src ${CMAKE_CURRENT_LIST_DIR}/../../solvers/*.c ${CMAKE_CURRENT_LIST_DIR}/../../core/*.c)
  set(_spbench_have_solvers OFF)
  foreach(_f ${_spbench_solver_src})
    file(STRINGS ${_f} _hit REGEX "sps_solver_solve[ \t]*\\(")
    if(_hit)
      set(_spbench_have_solvers ON)
    endif()
  endforeach()
  if(_spbench_have_solvers)
    target_compile_definitions(spbench PRIVATE SPBENCH_HAVE_SOLVERS)
  else()
    message(STATUS "spbench: libspsolve has no sps_solver_solve yet; solver mode times the textbook CG only")
  endif()
endif()
