# spsolve under allocation fault injection (issue 24 item 10), in a build with
# -DSPSOLVE_FAULT_INJECTION=ON: SPS_FAULT_AT=k fails the library's k-th host
# allocation.  For k = 1, 2, ... until a run succeeds, the run must end with exit 1
# and a message about memory, print its JSON error object, write no output file and
# show no sanitizer report (ASan's exit code is 99 here).
#   cmake -DCLI=... -DWORK=... -DSCENARIO=fault_cli -P fault.cmake
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

function(scenario_fault_cli)
  # a nonsymmetric 6 x 6 system: read, converted, ILU(0) set up, GMRES, x and the
  # residual history written
  e2e_write_mtx("${WORK}/A.mtx" "coordinate real general" "6 6 16" "1 1 4" "2 1 -1" "1 2 -2" "2 2 4"
                "3 2 -1" "2 3 -2" "3 3 4" "4 3 -1" "3 4 -2" "4 4 4" "5 4 -1" "4 5 -2" "5 5 4" "6 5 -1"
                "5 6 -2" "6 6 4")
  set(ENV{ASAN_OPTIONS} "exitcode=99:detect_leaks=1")
  set(k 1)
  while(k LESS 20001)
    file(REMOVE "${WORK}/x.mtx" "${WORK}/h.csv")
    set(ENV{SPS_FAULT_AT} ${k})
    e2e_run(-m A.mtx --solver gmres --precond ilu0 -o x.mtx --history h.csv --json)
    if(E2E_RC STREQUAL "0")
      break()
    endif()
    if(NOT E2E_RC STREQUAL "1")
      e2e_fail("allocation ${k} failed: exit ${E2E_RC}, expected 1 (a clean refusal)")
    endif()
    e2e_expect_stderr("memory")
    e2e_json_expect(error status)
    if(EXISTS "${WORK}/x.mtx")
      e2e_fail("allocation ${k} failed: x.mtx written anyway")
    endif()
    math(EXPR k "${k} + 1")
    if(k GREATER 20000)
      e2e_fail("still failing after 20000 allocations")
    endif()
  endwhile()
  unset(ENV{SPS_FAULT_AT})
  e2e_expect_solved(1e-8)
  if(k LESS 50)
    e2e_fail("the run made only ${k} allocations: is the injection built in?")
  endif()
  message(STATUS "fault_cli: ${k} runs, each with one more allocation failing, all refused cleanly")
endfunction()

e2e_dispatch()
