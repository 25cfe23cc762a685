# Install + consumer test (label e2e): install this build into a scratch
# prefix, then build and run tests/consumer against it through the CMake
# package (find_package(spsolve)) and through pkg-config, and run the installed
# CLI (RPATH).  See tests/consumer/install_test.cmake.
file(GLOB _sps_solver_src ${CMAKE_SOURCE_DIR}/solvers/*.c)
if(NOT _sps_solver_src)
  return()  # the consumer solves with CG: wait for the solvers
endif()
find_package(PkgConfig QUIET)
set(_sps_pkg_config "")
if(PKG_CONFIG_FOUND)
  set(_sps_pkg_config ${PKG_CONFIG_EXECUTABLE})
endif()
if(SPSOLVE_SANITIZE)
  set(_sps_san ON)
else()
  set(_sps_san OFF)
endif()
add_test(NAME install.consumer
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DCONSUMER_SRC=${CMAKE_CURRENT_SOURCE_DIR}/consumer
    -DWORK=${CMAKE_CURRENT_BINARY_DIR}/install-test
    -DCC=${CMAKE_C_COMPILER}
    -DGENERATOR=${CMAKE_GENERATOR}
    -DBUILD_TYPE=$<CONFIG>
    -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
    -DBINDIR=${CMAKE_INSTALL_BINDIR}
    -DCLI=$<TARGET_EXISTS:spsolve_cli>
    -DSANITIZE=${_sps_san}
    -DPKG_CONFIG=${_sps_pkg_config}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/install_test.cmake)
set_tests_properties(install.consumer PROPERTIES LABELS e2e TIMEOUT 600 RESOURCE_LOCK spsolve_install)
