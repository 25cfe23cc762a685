# Helpers for the spsolve end-to-end tests (cmake -P scripts).
# Every script gets -DCLI=<spsolve executable> -DWORK=<empty scratch dir>.
# CMake has no floating-point arithmetic: comparisons use if(LESS_EQUAL),
# which compares numbers, and any non-number (null, nan) fails them.
if(NOT CLI OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DCLI=path/to/spsolve -DWORK=dir [...] -P script.cmake")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# e2e_run(arg...): run the CLI in WORK; sets E2E_RC, E2E_OUT, E2E_ERR, E2E_CMD.
function(e2e_run)
  execute_process(COMMAND "${CLI}" ${ARGN} WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  string(JOIN " " cmd spsolve ${ARGN})
  message(STATUS "$ ${cmd}  -> exit ${rc}")
  set(E2E_RC "${rc}" PARENT_SCOPE)
  set(E2E_OUT "${out}" PARENT_SCOPE)
  set(E2E_ERR "${err}" PARENT_SCOPE)
  set(E2E_CMD "${cmd}" PARENT_SCOPE)
endfunction()

# Fail, showing the last command and what it printed.
function(e2e_fail msg)
  message(FATAL_ERROR "FAILED: ${msg}\n  command: ${E2E_CMD}\n  exit: ${E2E_RC}\n"
                      "--- stdout ---\n${E2E_OUT}\n--- stderr ---\n${E2E_ERR}")
endfunction()

function(e2e_expect_rc want)
  if(NOT "${E2E_RC}" STREQUAL "${want}")
    e2e_fail("expected exit status ${want}")
  endif()
endfunction()

function(e2e_expect_stderr regex)
  if(NOT E2E_ERR MATCHES "${regex}")
    e2e_fail("stderr does not match '${regex}'")
  endif()
endfunction()

function(e2e_expect_stdout regex)
  if(NOT E2E_OUT MATCHES "${regex}")
    e2e_fail("stdout does not match '${regex}'")
  endif()
endfunction()

# e2e_run_refused(<stderr-regex> arg...): run the CLI with arg..., expect exit 1
# and stderr matching the regex.
function(e2e_run_refused regex)
  e2e_run(${ARGN})
  e2e_expect_rc(1)
  e2e_expect_stderr("${regex}")
endfunction()

# e2e_json(<var> key...): a member of the JSON object printed by the last run.
# null reads as "" and booleans as ON/OFF.  A missing key fails the test.
function(e2e_json var)
  string(JSON v ERROR_VARIABLE jerr GET "${E2E_OUT}" ${ARGN})
  if(jerr)
    e2e_fail("JSON key '${ARGN}': ${jerr}")
  endif()
  set(${var} "${v}" PARENT_SCOPE)
endfunction()

function(e2e_json_expect want)
  e2e_json(v ${ARGN})
  if(NOT "${v}" STREQUAL "${want}")
    e2e_fail("JSON '${ARGN}' is '${v}', expected '${want}'")
  endif()
endfunction()

# Stdout holds one JSON object and nothing else: it parses, it starts with
# '{', and the only line that closes the top level is the last one.
function(e2e_expect_json_only)
  string(JSON t ERROR_VARIABLE jerr TYPE "${E2E_OUT}")
  if(jerr OR NOT t STREQUAL "OBJECT")
    e2e_fail("stdout is not a JSON object: ${jerr}")
  endif()
  string(STRIP "${E2E_OUT}" s)
  string(REGEX MATCHALL "(^|\n)}" closes "${s}")
  list(LENGTH closes nclose)
  if(NOT s MATCHES "^{" OR NOT s MATCHES "\n}$" OR NOT nclose EQUAL 1)
    e2e_fail("stdout holds more than one JSON object")
  endif()
endfunction()

# e2e_expect_le(<value> <bound> what): value <= bound as numbers.
function(e2e_expect_le value bound what)
  if(NOT ("${value}" LESS_EQUAL "${bound}"))
    e2e_fail("${what} = '${value}', expected <= ${bound}")
  endif()
endfunction()

# A converged, checked solve: exit 0, converged and verified in the JSON, the
# recomputed relative residual <= rtol; error_vs_ones <= max_error if given.
function(e2e_expect_solved rtol)
  e2e_expect_rc(0)
  e2e_expect_json_only()
  e2e_json_expect(ON result converged)
  e2e_json_expect(ON result verified)
  e2e_json_expect(0 exit_code)
  e2e_json(res result true_relative_residual)
  e2e_expect_le("${res}" "${rtol}" "true relative residual")
  if(ARGC GREATER 1)
    e2e_json(err result error_vs_ones)
    e2e_expect_le("${err}" "${ARGV1}" "||x-1||/||1||")
  endif()
endfunction()

# e2e_near_int(<ok-var> <value-string> <integer>): |value - integer| < 1e-6,
# done with number comparisons against bounds written out as text.
function(e2e_near_int var value int)
  if(int GREATER 0)
    math(EXPR m "${int} - 1")
    set(lo "${m}.999999")
    set(hi "${int}.000001")
  elseif(int LESS 0)
    math(EXPR a "-(${int})")
    math(EXPR m "${a} - 1")
    set(lo "-${a}.000001")
    set(hi "-${m}.999999")
  else()
    set(lo "-0.000001")
    set(hi "0.000001")
  endif()
  if("${value}" GREATER "${lo}" AND "${value}" LESS "${hi}")
    set(${var} ON PARENT_SCOPE)
  else()
    set(${var} OFF PARENT_SCOPE)
  endif()
endfunction()

# e2e_read_vector(<var> file): the values of a Matrix Market array vector, one
# list item per line ("re" or "re im"); checks the size line says n x 1.
function(e2e_read_vector var file)
  if(NOT EXISTS "${file}")
    e2e_fail("${file} was not written")
  endif()
  file(STRINGS "${file}" lines)
  list(GET lines 0 banner)
  if(NOT banner MATCHES "^%%MatrixMarket matrix array (real|complex) general")
    e2e_fail("${file}: unexpected banner '${banner}'")
  endif()
  set(vals "")
  set(size "")
  foreach(l IN LISTS lines)
    string(STRIP "${l}" l)
    if(l MATCHES "^%" OR l STREQUAL "")
      continue()
    endif()
    if(size STREQUAL "")
      set(size "${l}")
      continue()
    endif()
    list(APPEND vals "${l}")
  endforeach()
  list(LENGTH vals n)
  if(NOT size MATCHES "^${n}[ \t]+1$")
    e2e_fail("${file}: size line '${size}' but ${n} values")
  endif()
  set(${var} "${vals}" PARENT_SCOPE)
endfunction()

# e2e_write_mtx(file banner-kind size-line entry...): a Matrix Market file.
function(e2e_write_mtx file kind size)
  string(JOIN "\n" body ${ARGN})
  file(WRITE "${file}" "%%MatrixMarket matrix ${kind}\n${size}\n${body}\n")
endfunction()

# Entries of poisson2d:N (the library's generator: 4 on the diagonal, -1 to
# each of the up to four grid neighbours), written independently here so
# that right-hand sides for known solutions can be formed exactly.
# e2e_poisson2d_times(<var> N x...): the integer vector A*x.
function(e2e_poisson2d_times var N)
  set(x ${ARGN})
  math(EXPR n "${N} * ${N}")
  math(EXPR last "${n} - 1")
  set(out "")
  foreach(i RANGE ${last})
    list(GET x ${i} xi)
    math(EXPR s "4 * (${xi})")
    math(EXPR ix "${i} % ${N}")
    math(EXPR iy "${i} / ${N}")
    if(ix GREATER 0)
      math(EXPR j "${i} - 1")
      list(GET x ${j} xj)
      math(EXPR s "${s} - (${xj})")
    endif()
    math(EXPR nm1 "${N} - 1")
    if(ix LESS nm1)
      math(EXPR j "${i} + 1")
      list(GET x ${j} xj)
      math(EXPR s "${s} - (${xj})")
    endif()
    if(iy GREATER 0)
      math(EXPR j "${i} - ${N}")
      list(GET x ${j} xj)
      math(EXPR s "${s} - (${xj})")
    endif()
    if(iy LESS nm1)
      math(EXPR j "${i} + ${N}")
      list(GET x ${j} xj)
      math(EXPR s "${s} - (${xj})")
    endif()
    list(APPEND out "${s}")
  endforeach()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

# Run the scenario named by -DSCENARIO=<name>: the function scenario_<name> of the
# including script.
macro(e2e_dispatch)
  if(NOT COMMAND scenario_${SCENARIO})
    message(FATAL_ERROR "unknown scenario '${SCENARIO}'")
  endif()
  cmake_language(CALL scenario_${SCENARIO})
endmacro()
