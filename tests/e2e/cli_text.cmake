# spsolve end-to-end checks of the CLI's text: JSON strings are UTF-8 whatever
# bytes a path holds, an abbreviated --json still gets its JSON object on a
# usage error, and --help names each parameter's owners once and every choice.
#   cmake -DCLI=... -DWORK=... -DSCENARIO=<name> -P cli_text.cmake
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

# bytes(<var> hex...): the string of those bytes (string(ASCII) writes each
# number below 256 as one raw byte).
function(bytes var)
  set(s "")
  foreach(h ${ARGN})
    math(EXPR d "0x${h}")
    string(ASCII ${d} c)
    string(APPEND s "${c}")
  endforeach()
  set(${var} "${s}" PARENT_SCOPE)
endfunction()

# Stdout, less the well-formed sequences in ARGN, holds no byte >= 0x80: an
# ill-formed one passed through would make the JSON text invalid UTF-8
# (CMake's JSON reader does not check that, so it is checked here).
function(expect_no_raw_high_bytes)
  set(out "${E2E_OUT}")
  foreach(ok ${ARGN})
    string(REPLACE "${ok}" "" out "${out}")
  endforeach()
  foreach(d RANGE 128 255)
    string(ASCII ${d} c)
    string(FIND "${out}" "${c}" at)
    if(NOT at EQUAL -1)
      e2e_fail("stdout holds the raw byte ${d} (invalid UTF-8 in the JSON text)")
    endif()
  endforeach()
  # the reviewer's check where Python is at hand: a strict UTF-8 JSON parse of the bytes
  find_program(PYTHON3 python3)
  if(PYTHON3)
    file(WRITE "${WORK}/stdout.json" "${E2E_OUT}")
    execute_process(COMMAND "${PYTHON3}" -c "import json,sys; json.loads(open(sys.argv[1],'rb').read())"
                            "${WORK}/stdout.json" RESULT_VARIABLE prc ERROR_VARIABLE perr)
    if(NOT prc EQUAL 0)
      e2e_fail("python3 json.loads refuses stdout: ${perr}")
    endif()
  endif()
endfunction()

# A -m path with byte 0xff: the report's matrix.source names it with U+FFFD.
# Then a missing -m path holding well-formed sequences of 2, 3 and 4 bytes (kept)
# and ill-formed ones (each byte one U+FFFD): overlong forms, a surrogate, code
# points beyond U+10FFFF, a lone continuation byte, a sequence cut short, 0xff.
function(scenario_json_utf8)
  bytes(ff FF)
  bytes(rep EF BF BD) # U+FFFD as UTF-8, as the JSON reader gives \ufffd back
  e2e_write_mtx("${WORK}/n${ff}.mtx" "coordinate real general" "2 2 2" "1 1 2" "2 2 3")
  e2e_run(--backend cpu --json -m "n${ff}.mtx")
  e2e_expect_solved(1e-8)
  e2e_json_expect("n${rep}.mtx" matrix source)
  e2e_expect_stdout("\"n\\\\ufffd\\.mtx\"")
  expect_no_raw_high_bytes()

  bytes(e_acute C3 A9)
  bytes(euro E2 82 AC)
  bytes(smile F0 9F 98 80)
  set(path "")
  set(want "")
  # "hex bytes|U+FFFDs expected" (0: the bytes are kept)
  foreach(case "C3 A9|0" "E2 82 AC|0" "F0 9F 98 80|0" "C0 AF|2" "E0 80 AF|3" "ED A0 80|3" "F4 90 80 80|4"
          "F5 80 80 80|4" "80|1" "E2 82|2" "FF|1")
    string(REPLACE "|" ";" case "${case}")
    list(GET case 0 hex)
    list(GET case 1 nrep)
    string(REPLACE " " ";" hex "${hex}")
    bytes(b ${hex})
    string(APPEND path "${b}_")
    if(nrep EQUAL 0)
      string(APPEND want "${b}_")
    else()
      foreach(i RANGE 1 ${nrep})
        string(APPEND want "${rep}")
      endforeach()
      string(APPEND want "_")
    endif()
  endforeach()
  e2e_run(--backend cpu --json -m "${path}.mtx")
  e2e_expect_rc(1)
  e2e_expect_json_only()
  e2e_json_expect(error status)
  e2e_json(msg message)
  if(NOT msg MATCHES "^cannot open '")
    e2e_fail("message '${msg}' does not name the path")
  endif()
  string(FIND "${msg}" "'${want}.mtx'" at)
  if(at EQUAL -1)
    e2e_fail("message '${msg}' does not hold '${want}.mtx'")
  endif()
  expect_no_raw_high_bytes("${e_acute}" "${euro}" "${smile}")
endfunction()

# --jso and --js are --json to getopt_long (unambiguous abbreviations): on a
# usage error they get the JSON error object too; "--j" is ambiguous (with
# --jacobi-zero-diagonal), refused without JSON; after "--" nothing is an option,
# nor is the value of an option ("-o --json" names the output file "--json").
function(scenario_json_abbrev)
  foreach(flag --jso --js --json)
    e2e_run(${flag} -m poisson2d:3 --bogus)
    e2e_expect_rc(1)
    e2e_expect_json_only()
    e2e_json_expect(error status)
    e2e_json_expect(1 exit_code)
  endforeach()
  e2e_run(-m poisson2d:3 --rtol abc --jso)
  e2e_expect_rc(1)
  e2e_expect_json_only()
  e2e_run(-m poisson2d:3 --backend cpu --jso)
  e2e_expect_solved(1e-8)
  foreach(args "--j;-m;poisson2d:3" "-m;poisson2d:3;--;--json" "-m;poisson2d:3;-o;--json;--bogus"
               "-m;poisson2d:3;--history;--jso;--bogus")
    e2e_run(${args})
    e2e_expect_rc(1)
    if(NOT E2E_OUT STREQUAL "")
      e2e_fail("a usage error without --json printed on stdout")
    endif()
  endforeach()
endfunction()

# --help: an owner named once ("cheby: products ...", not "cheby: cheby: ..."),
# and the whole choice list of --pc-block-size and --trisolve (runs of numbers
# as a..b), which a 64-byte buffer used to cut short.
function(scenario_help_text)
  e2e_run(--help)
  e2e_expect_rc(0)
  # "A: B:" with A and B lists of names (CMake's regex has no back-references)
  string(REGEX MATCHALL "[a-z0-9]+(, [a-z0-9]+)*: [a-z0-9]+(, [a-z0-9]+)*:" pairs "${E2E_OUT}")
  foreach(pair ${pairs})
    string(REGEX REPLACE ": .*" "" a "${pair}")
    string(REGEX REPLACE "^[^:]*: (.*):$" "\\1" b "${pair}")
    if(a STREQUAL b)
      e2e_fail("--help repeats owner names: '${pair}'")
    endif()
  endforeach()
  e2e_expect_stdout("\n      --pc-block-size auto\\|1\\.\\.32\n +bjacobi: rows a diagonal block")
  e2e_expect_stdout("\n      --trisolve exact\\|sweeps:1\\.\\.6\\|sweeps:8\\|sweeps:10\\|sweeps:16\n +ilu0, ic0: triangular")
  # listed by owner where the text does not name them: gmres, jacobi, the formats
  e2e_expect_stdout("--restart N +gmres: GMRES restart length")
  e2e_expect_stdout("jacobi: a zero diagonal entry")
  e2e_expect_stdout("--node-size 2\\|4\\|8\\|16\\|32\\|64\\|128\\|256\n +hisparse: rows and columns")
  # wrapped at 96 columns, the registries' lists (formats, generators) included
  string(REPLACE ";" "," lines "${E2E_OUT}") # a list item a line: no ';' within
  string(REPLACE "\n" ";" lines "${lines}")
  foreach(line IN LISTS lines)
    string(LENGTH "${line}" len)
    if(len GREATER 96)
      e2e_fail("--help line of ${len} columns: '${line}'")
    endif()
  endforeach()
endfunction()

e2e_dispatch()
