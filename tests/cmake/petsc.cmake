# PETSc validation (label petsc): tests/petsc/petsc_compare.c solves the same
# systems with libspsolve (CPU, f64) and PETSc KSP and compares outcome,
# solution and iteration count.  PETSc is a test dependency only; where it is
# not installed (Debian: petsc-dev) nothing is registered.
#   petsc.<solver>.generated  generated problems (always run)
#   petsc.<solver>.matrices   SuiteSparse matrices from SPS_MATRIX_DIR (skipped when absent)
file(GLOB _sps_solver_src ${CMAKE_SOURCE_DIR}/solvers/*.c)
file(GLOB _sps_precond_src ${CMAKE_SOURCE_DIR}/precond/*.c)
if(NOT _sps_solver_src OR NOT _sps_precond_src)
  message(STATUS "libspsolve: solvers/preconditioners not in the tree yet; PETSc tests not registered")
  return()
endif()

find_package(PkgConfig QUIET)
set(_sps_petsc "")
if(PKG_CONFIG_FOUND)
  # the module is "PETSc" (Debian also ships "petsc")
  pkg_check_modules(SPS_PETSC QUIET IMPORTED_TARGET PETSc)
  if(SPS_PETSC_FOUND)
    set(_sps_petsc SPS_PETSC)
  else()
    pkg_check_modules(SPS_PETSC_LC QUIET IMPORTED_TARGET petsc)
    if(SPS_PETSC_LC_FOUND)
      set(_sps_petsc SPS_PETSC_LC)
    endif()
  endif()
endif()
if(NOT _sps_petsc)
  message(STATUS "libspsolve: PETSc not found (pkg-config PETSc); PETSc validation tests not registered")
  return()
endif()
# PETSc's headers include mpi.h, which its .pc file does not point at (Debian).
find_package(MPI QUIET COMPONENTS C)
if(NOT MPI_C_FOUND)
  message(STATUS "libspsolve: PETSc found but not MPI (needed by its headers); PETSc validation tests not registered")
  return()
endif()
message(STATUS "libspsolve: PETSc ${${_sps_petsc}_VERSION} found; PETSc validation tests registered (label petsc)")

add_executable(petsc_compare ${CMAKE_CURRENT_SOURCE_DIR}/petsc/petsc_compare.c)
target_link_libraries(petsc_compare PRIVATE spsolve_static MPI::MPI_C m)
# Use PETSc's include directories and libraries, not its compile options: the
# Debian .pc adds -D_FORTIFY_SOURCE=2, which warns in unoptimised (Debug) builds.
target_include_directories(petsc_compare SYSTEM PRIVATE ${${_sps_petsc}_INCLUDE_DIRS})
get_target_property(_sps_petsc_libs PkgConfig::${_sps_petsc} INTERFACE_LINK_LIBRARIES)
target_link_libraries(petsc_compare PRIVATE ${_sps_petsc_libs})
target_compile_options(petsc_compare PRIVATE -Wall -Wextra)

foreach(solver cg bicgstab gmres)
  add_test(NAME petsc.${solver}.generated COMMAND petsc_compare --solver ${solver} --generated)
  add_test(NAME petsc.${solver}.matrices COMMAND petsc_compare --solver ${solver} --matrices "${SPS_MATRIX_DIR}")
  set_tests_properties(petsc.${solver}.generated petsc.${solver}.matrices PROPERTIES
    LABELS petsc SKIP_RETURN_CODE 77 TIMEOUT 300
    # no PETSc options from the environment; Open MPI singleton as root.  (Not
    # OMP_WAIT_POLICY=PASSIVE: sleeping OpenMP threads make the many small
    # kernels of a solve ~9x slower here.)
    ENVIRONMENT "PETSC_OPTIONS=;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self")
endforeach()
