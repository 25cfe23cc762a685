# Install + consumer test (cmake -P).  Installs the build tree into a scratch
# prefix and uses it the way a downstream project would:
#   1. cmake --install <BUILD_DIR> --prefix <WORK>/prefix
#   2. configure + build tests/consumer (find_package(spsolve), spsolve::spsolve
#      and spsolve::spsolve_static) with CMAKE_PREFIX_PATH=<prefix>, run both
#   3. cc consumer.c $(pkg-config --cflags --libs spsolve) with
#      PKG_CONFIG_PATH=<prefix>/<libdir>/pkgconfig, run with LD_LIBRARY_PATH
#   4. the installed spsolve CLI runs from the prefix without LD_LIBRARY_PATH
#      (RPATH), and ldd resolves libspsolve inside the prefix
# Variables: BUILD_DIR CONSUMER_SRC WORK CC GENERATOR LIBDIR BINDIR CLI(0/1)
#            SANITIZE(ON/OFF) PKG_CONFIG(path or empty) BUILD_TYPE
cmake_minimum_required(VERSION 3.20)
foreach(v BUILD_DIR CONSUMER_SRC WORK CC LIBDIR BINDIR)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "install_test.cmake: -D${v}=... missing")
  endif()
endforeach()

set(PREFIX ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
unset(ENV{LD_LIBRARY_PATH})
unset(ENV{CMAKE_PREFIX_PATH})
unset(ENV{PKG_CONFIG_PATH})

# step(<title> <command...>): run, show the output, stop on failure
function(step title)
  message(STATUS "---- ${title}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(out)
    message("${out}")
  endif()
  if(err)
    message("${err}")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED (${rc}): ${title}")
  endif()
  set(STEP_OUT "${out}" PARENT_SCOPE)
endfunction()

set(san_flags "")
if(SANITIZE)
  set(san_flags -fsanitize=address,undefined -fno-omit-frame-pointer)
endif()
string(REPLACE ";" " " san_flags_str "${san_flags}")

# ---- 1. install
step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
foreach(f include/spsolve/spsolve.h ${LIBDIR}/cmake/spsolve/spsolveConfig.cmake
          ${LIBDIR}/cmake/spsolve/spsolveConfigVersion.cmake ${LIBDIR}/cmake/spsolve/spsolveTargets.cmake
          ${LIBDIR}/pkgconfig/spsolve.pc ${LIBDIR}/libspsolve.a ${LIBDIR}/libspsolve.so)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "FAILED: ${f} not installed under ${PREFIX}")
  endif()
endforeach()

# ---- 2. CMake package
set(gen_args "")
if(GENERATOR)
  set(gen_args -G ${GENERATOR})
endif()
set(cbuild ${WORK}/consumer-build)
step("configure consumer (find_package)" ${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${cbuild} ${gen_args}
     -DCMAKE_C_COMPILER=${CC} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${PREFIX}
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "-DCMAKE_C_FLAGS=${san_flags_str}"
     "-DCMAKE_EXE_LINKER_FLAGS=${san_flags_str}")
file(STRINGS ${cbuild}/CMakeCache.txt found_dir REGEX "^spsolve_DIR:")
string(REGEX REPLACE "^[^=]*=" "" found_dir "${found_dir}")
file(REAL_PATH "${found_dir}" found_dir)
file(REAL_PATH "${PREFIX}" real_prefix)
string(FIND "${found_dir}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "FAILED: find_package(spsolve) found ${found_dir}, not the package under ${PREFIX}")
endif()
step("build consumer" ${CMAKE_COMMAND} --build ${cbuild})
step("run consumer (spsolve::spsolve)" ${cbuild}/consumer)
step("run consumer (spsolve::spsolve_static)" ${cbuild}/consumer_static)

# ---- 3. pkg-config
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
  step("pkg-config" ${PKG_CONFIG} --cflags --libs spsolve)
  string(STRIP "${STEP_OUT}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  step("pkg-config version" ${PKG_CONFIG} --modversion spsolve)
  string(STRIP "${STEP_OUT}" pc_version)
  step("pkg-config includedir" ${PKG_CONFIG} --variable=includedir spsolve)
  string(STRIP "${STEP_OUT}" pc_incdir)
  if(NOT EXISTS "${pc_incdir}/spsolve/spsolve.h")
    message(FATAL_ERROR "FAILED: spsolve.pc includedir '${pc_incdir}' does not hold spsolve/spsolve.h")
  endif()
  step("cc consumer.c $(pkg-config --cflags --libs spsolve)" ${CC} ${san_flags} -Wall -Wextra -Werror
       ${CONSUMER_SRC}/consumer.c ${pc_flags} "-DEXPECT_VERSION=\"${pc_version}\"" -o ${WORK}/consumer_pc)
  unset(ENV{PKG_CONFIG_PATH})
  step("run consumer_pc with LD_LIBRARY_PATH" ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PREFIX}/${LIBDIR}
       ${WORK}/consumer_pc)
else()
  message(STATUS "---- pkg-config not found: pkg-config part skipped")
endif()

# ---- 4. installed CLI (RPATH)
if(CLI)
  set(exe ${PREFIX}/${BINDIR}/spsolve)
  if(NOT EXISTS ${exe})
    message(FATAL_ERROR "FAILED: the spsolve CLI is not installed at ${exe}")
  endif()
  find_program(LDD ldd)
  if(LDD)
    step("ldd spsolve" ${LDD} ${exe})
    string(REGEX MATCH "libspsolve[^\n]*=> *([^ \n]*)" m "${STEP_OUT}")
    file(REAL_PATH "${CMAKE_MATCH_1}" lib_at)
    string(FIND "${lib_at}" "${real_prefix}/" at)
    if(NOT at EQUAL 0)
      message(FATAL_ERROR "FAILED: installed spsolve resolves libspsolve to '${CMAKE_MATCH_1}', not inside ${PREFIX}")
    endif()
  endif()
  step("spsolve --version" ${exe} --version)
  step("spsolve -m poisson2d:10 --backend cpu" ${exe} -m poisson2d:10 --backend cpu)
else()
  message(STATUS "---- no spsolve CLI in this build: CLI part skipped")
endif()
message(STATUS "install test: all steps passed")
