# spsolve end-to-end scenarios that need no external files.
#   cmake -DCLI=... -DWORK=... -DSCENARIO=<name> [-DSOLVER=.. -DPRECOND=..] -P scenarios.cmake
# Inputs are generated problems or small Matrix Market files written here;
# expected answers are derived in this script (integer arithmetic), not copied
# from a previous run.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

# Each solver x preconditioner on a generated SPD problem; residual checked via
# the JSON, and the error against the known solution x = 1.  poisson2d:24 has
# condition number ~ 4/(pi/25)^2 ~ 250, so rtol 1e-8 bounds ||x-1||/||1|| by
# ~ 2.5e-6.
function(scenario_solve)
  e2e_run(-m poisson2d:24 --solver ${SOLVER} --precond ${PRECOND} --rtol 1e-8 --json)
  e2e_expect_solved(1e-8 1e-5)
  e2e_json_expect(${SOLVER} solver name)
  e2e_json_expect(${PRECOND} solver precond)
  e2e_json_expect(576 matrix rows)
  e2e_json_expect(2784 matrix nnz) # 5*576 - 4*24 neighbours missing at the boundary
  e2e_json_expect(f64 matrix scalar)
  e2e_json(it result iterations)
  if(it LESS 1)
    e2e_fail("no iterations done")
  endif()
endfunction()

# The human-readable summary names the source, settings, result and times.
function(scenario_summary)
  e2e_run(-m poisson2d:16 --rtol 1e-9 --atol 1e-30 --maxit 500)
  e2e_expect_rc(0)
  foreach(re "poisson2d:16 \\(generated\\)" "256 x 256, nnz 1216, symmetric, f64" "format +csr"
          "backend +(cpu|cuda): " "solver +cg" "preconditioner none"
          "\\|\\|b-Ax\\|\\| <= max\\(rtol\\*\\|\\|b\\|\\|, atol\\), rtol 1e-09, atol 1e-30, maxit 500"
          "result +converged" "residual +\\|\\|b-Ax\\|\\|/\\|\\|b\\|\\| = [0-9.]+e-" "error +\\|\\|x-1\\|\\|/\\|\\|1\\|\\| = "
          "time +read [0-9.]+ s, convert [0-9.]+ s, setup [0-9.]+ s, solve [0-9.]+ s \\([0-9.]+ ms/iteration\\)")
    e2e_expect_stdout("${re}")
  endforeach()
endfunction()

# The README example: no -m at all.
function(scenario_default_example)
  e2e_run(--json)
  e2e_expect_solved(1e-8 1e-5)
  e2e_json_expect(poisson3d:64 matrix source)
  e2e_json_expect(262144 matrix rows)
  e2e_json_expect(cg solver name)
endfunction()

# --monitor prints one line per iteration: to stdout normally, to stderr with
# --json (stdout then holds the JSON object only).
function(scenario_monitor)
  e2e_run(-m poisson2d:12 --monitor --json)
  e2e_expect_solved(1e-8)
  e2e_json(it result iterations)
  string(REGEX MATCHALL "iteration +[0-9]+ +residual [0-9.e+-]+" lines "${E2E_ERR}")
  list(LENGTH lines nlines)
  if(NOT nlines EQUAL it)
    e2e_fail("${nlines} monitor lines on stderr for ${it} iterations")
  endif()
  e2e_run(-m poisson2d:12 --monitor)
  e2e_expect_rc(0)
  string(REGEX MATCHALL "iteration +[0-9]+ +residual [0-9.e+-]+" lines "${E2E_OUT}")
  list(LENGTH lines nlines2)
  if(NOT nlines2 EQUAL it)
    e2e_fail("${nlines2} monitor lines on stdout for ${it} iterations")
  endif()
endfunction()

# -o writes x, which reads back: every entry is 1 to 1e-6, and starting from
# it the solve is already converged (0 iterations).
function(scenario_output)
  e2e_run(-m poisson2d:10 --rtol 1e-10 -o x.mtx --json)
  e2e_expect_solved(1e-10 1e-8)
  e2e_json_expect(x.mtx output)
  e2e_read_vector(vals "${WORK}/x.mtx")
  list(LENGTH vals n)
  if(NOT n EQUAL 100)
    e2e_fail("x.mtx has ${n} entries, expected 100")
  endif()
  foreach(v IN LISTS vals)
    e2e_near_int(ok "${v}" 1)
    if(NOT ok)
      e2e_fail("x.mtx entry ${v} is not 1 to 1e-6")
    endif()
  endforeach()
  e2e_run(-m poisson2d:10 --rtol 1e-10 --x0 x.mtx --json)
  e2e_expect_solved(1e-10 1e-8)
  e2e_json_expect(0 result iterations)
  e2e_json_expect(x.mtx x0)
endfunction()

# --history: a header and iterations+1 lines "k,residual", k = 0, 1, ...
function(scenario_history)
  foreach(solver cg bicgstab gmres)
    file(REMOVE "${WORK}/h.csv")
    e2e_run(-m poisson2d:12 --solver ${solver} --history h.csv --json)
    e2e_expect_solved(1e-8)
    e2e_json_expect(h.csv history)
    e2e_json(it result iterations)
    file(STRINGS "${WORK}/h.csv" lines)
    list(POP_FRONT lines header)
    if(NOT header STREQUAL "iteration,residual")
      e2e_fail("h.csv header '${header}'")
    endif()
    list(LENGTH lines n)
    math(EXPR want "${it} + 1")
    if(NOT n EQUAL want)
      e2e_fail("${solver}: h.csv has ${n} lines for ${it} iterations, expected ${want}")
    endif()
    set(k 0)
    foreach(l IN LISTS lines)
      if(NOT l MATCHES "^${k},[0-9][0-9.]*(e[-+][0-9]+)?$")
        e2e_fail("${solver}: h.csv line '${l}', expected '${k},<residual>'")
      endif()
      math(EXPR k "${k} + 1")
    endforeach()
  endforeach()
endfunction()

# Usage errors: exit 1, a message on stderr, nothing on stdout.
function(scenario_bad_option)
  foreach(case "--bogus|unknown option '--bogus'" "-q|unknown option '-q'"
          "--rtol;abc|--rtol: expected a finite number" "--maxit;-4|--maxit: expected an integer >= 0"
          "--restart;0|--restart: expected an integer >= 1" "--solver;sor|unknown solver 'sor' \\(available: [^)]*cg"
          "--precond;ilu99|unknown preconditioner 'ilu99' \\(available: [^)]*jacobi"
          "--backend;tpu|unknown backend 'tpu'" "--precision;f16|unknown precision 'f16'"
          "--maxit|option '--maxit' needs a value" "stray|unexpected argument 'stray'")
    string(REPLACE "|" ";" parts "${case}")
    list(POP_BACK parts regex)
    e2e_run(-m poisson2d:4 ${parts})
    e2e_expect_rc(1)
    e2e_expect_stderr("${regex}")
    if(NOT E2E_OUT STREQUAL "")
      e2e_fail("stdout not empty on a usage error")
    endif()
  endforeach()
endfunction()

# An unknown format lists the available ones (csr and coo exist in every build).
function(scenario_unknown_format)
  e2e_run(-m poisson2d:4 --format nosuchformat)
  e2e_expect_rc(1)
  e2e_expect_stderr("unknown format 'nosuchformat' \\(available: [^)]*csr")
  e2e_expect_stderr("available: [^)]*coo")
endfunction()

# Malformed files: exit 1 and the library's "file:line: what" message.
function(scenario_malformed)
  # line 4 holds column index 0
  e2e_write_mtx("${WORK}/bad.mtx" "coordinate real general" "3 3 3" "1 1 2.0" "2 0 1.0" "3 3 2.0")
  e2e_run(-m bad.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("^spsolve: bad.mtx:4: [^\n]*column")
  # line 3 has a value that is not a number
  e2e_write_mtx("${WORK}/bad2.mtx" "coordinate real general" "2 2 2" "1 1 x1.5" "2 2 1.0")
  e2e_run(-m bad2.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("bad2.mtx:3: ")
  # fewer entries than the size line announces
  e2e_write_mtx("${WORK}/short.mtx" "coordinate real general" "2 2 3" "1 1 1.0" "2 2 1.0")
  e2e_run(-m short.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("short.mtx:[0-9]+: ")
  # a malformed right-hand side is reported the same way
  e2e_write_mtx("${WORK}/badb.mtx" "array real general" "4 1" "1" "2" "oops" "4")
  e2e_run(-m poisson2d:2 -b badb.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("badb.mtx:5: ")
endfunction()

function(scenario_missing_file)
  e2e_run(-m does-not-exist.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("does-not-exist.mtx")
  e2e_run(-m poisson2d:4 -b no-b.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("no-b.mtx")
  e2e_run(-m poisson2d:4 --x0 no-x0.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("no-x0.mtx")
endfunction()

# Not converged: exit 2, the summary says so, and -o is not written.
function(scenario_maxit)
  e2e_run(-m poisson2d:16 --maxit 3 -o x.mtx --history h.csv --json)
  e2e_expect_rc(2)
  e2e_expect_json_only()
  e2e_json_expect(OFF result converged)
  e2e_json_expect(OFF result solver_converged)
  e2e_json_expect(3 result iterations)
  e2e_json_expect(2 exit_code)
  e2e_json_expect("" output)
  e2e_expect_stderr("not converged")
  if(EXISTS "${WORK}/x.mtx")
    e2e_fail("x.mtx written for a solve that did not converge")
  endif()
  if(NOT EXISTS "${WORK}/h.csv")
    e2e_fail("the history of a failed solve was not written")
  endif()
  e2e_run(-m poisson2d:16 --maxit 3)
  e2e_expect_rc(2)
  e2e_expect_stdout("result +NOT CONVERGED")
endfunction()

# Single precision: the matrix and solve are f32, the check is done by the CLI
# in extended precision against the default f32 rtol of 1e-5.
function(scenario_f32)
  e2e_run(-m poisson2d:24 --precision f32 --json)
  e2e_expect_solved(1e-5 1e-3)
  e2e_json_expect(f32 matrix scalar)
  e2e_json(rtol solver rtol)
  e2e_expect_le("${rtol}" 1e-5 "default f32 rtol")
endfunction()

# COO and CSR are the same operator: the same iteration count.
function(scenario_format_coo)
  foreach(solver cg bicgstab gmres)
    e2e_run(-m poisson2d:20 --solver ${solver} --format csr --json)
    e2e_expect_solved(1e-8 1e-5)
    e2e_json_expect(csr matrix format)
    e2e_json(it_csr result iterations)
    e2e_run(-m poisson2d:20 --solver ${solver} --format coo --json)
    e2e_expect_solved(1e-8 1e-5)
    e2e_json_expect(coo matrix format)
    e2e_json_expect(${it_csr} result iterations)
  endforeach()
endfunction()

# Every format of this build (as --help lists them) solves the same systems,
# real and complex, in the same number of iterations as CSR, give or take one:
# formats may sum a row in a different order, which can move the last
# iteration across the tolerance.
function(scenario_all_formats)
  e2e_run(--help)
  e2e_expect_rc(0)
  if(NOT E2E_OUT MATCHES "storage format: ([^(]*) \\(default")
    e2e_fail("--help lists no formats")
  endif()
  string(REPLACE "," ";" formats "${CMAKE_MATCH_1}")
  list(TRANSFORM formats STRIP)
  set(entries "")
  foreach(i RANGE 1 30)
    list(APPEND entries "${i} ${i} 4 1")
    if(i GREATER 1)
      math(EXPR j "${i} - 1")
      list(APPEND entries "${i} ${j} -1 0.5" "${j} ${i} -1 -0.3")
    endif()
  endforeach()
  e2e_write_mtx("${WORK}/c.mtx" "coordinate complex general" "30 30 88" ${entries})
  foreach(problem "poisson2d:20;cg" "c.mtx;gmres")
    list(GET problem 0 m)
    list(GET problem 1 solver)
    set(it_csr "")
    set(all csr ${formats})
    list(REMOVE_DUPLICATES all)
    foreach(fmt IN LISTS all)
      e2e_run(-m ${m} --solver ${solver} --format ${fmt} --json)
      e2e_expect_solved(1e-8 1e-6)
      e2e_json_expect(${fmt} matrix format)
      # the column index width the format stored: 16-bit offsets in the padded formats here
      # (every group spans < 65535 columns), none per entry in DIA, 32 elsewhere
      e2e_json(ib matrix index_bits)
      if(fmt MATCHES "^(ell|sell|rgcsr)$")
        set(want_ib 16)
      elseif(fmt STREQUAL "dia")
        set(want_ib 0)
      else()
        set(want_ib 32)
      endif()
      if(NOT ib EQUAL want_ib)
        e2e_fail("${fmt}: matrix.index_bits ${ib}, want ${want_ib}")
      endif()
      e2e_json(it result iterations)
      if(it_csr STREQUAL "")
        set(it_csr ${it})
      endif()
      math(EXPR d "${it} - ${it_csr}")
      if(d GREATER 1 OR d LESS -1)
        e2e_fail("${fmt}: ${it} iterations, csr took ${it_csr}")
      endif()
    endforeach()
  endforeach()
endfunction()

# Format parameters on the CPU backend: each is passed to the format, reported
# in matrix.format_options and the summary, and changes what is stored the way
# the format says (smaller slices or groups and sorting by length store fewer
# padding entries on poisson2d:20, whose boundary rows are shorter).
function(e2e_stored var)
  e2e_expect_solved(1e-8 1e-6)
  e2e_json(v matrix stored_entries)
  set(${var} "${v}" PARENT_SCOPE)
endfunction()

function(scenario_format_options)
  set(cpu -m poisson2d:20 --backend cpu --json)
  e2e_run(${cpu} --format sell)
  e2e_stored(sell_default)
  e2e_json_expect(32 matrix format_options slice_height)
  e2e_json_expect(0 matrix format_options sort_window)
  e2e_json_expect(10 matrix format_options max_fill)
  e2e_json_expect(OFF matrix format_options force)
  e2e_run(${cpu} --format sell --slice-height 16 --sort-window 400)
  e2e_stored(sell_sorted)
  e2e_json_expect(16 matrix format_options slice_height)
  e2e_json_expect(400 matrix format_options sort_window)
  if(NOT sell_sorted LESS sell_default)
    e2e_fail("sell C=16 sigma=400 stores ${sell_sorted} entries, C=32 unsorted ${sell_default}")
  endif()
  # index bits: auto stores 16-bit columns here (poisson2d:20 spans 400 columns), 32 forces 4 bytes a slot
  e2e_run(${cpu} --format sell)
  e2e_json_expect(auto matrix format_options index_bits)
  e2e_json_expect(16 matrix index_bits)
  e2e_json(bytes_auto matrix bytes)
  e2e_run(${cpu} --format sell --index-bits 32)
  e2e_stored(sell_i32)
  e2e_json_expect(32 matrix format_options index_bits)
  e2e_json_expect(32 matrix index_bits)
  e2e_json(bytes_i32 matrix bytes)
  math(EXPR want "${bytes_auto} + 2 * ${sell_i32} - 4 * ((400 + 31) / 32)")
  if(NOT sell_i32 EQUAL sell_default OR NOT bytes_i32 EQUAL want)
    e2e_fail("sell --index-bits 32: ${sell_i32} entries, ${bytes_i32} bytes; auto: ${sell_default}, ${bytes_auto} (want ${want})")
  endif()

  e2e_run(${cpu} --format rgcsr)
  e2e_stored(rg_default)
  e2e_json_expect(128 matrix format_options group_size)
  e2e_json_expect(OFF matrix format_options sort_rows)
  e2e_run(${cpu} --format rgcsr --group-size 32 --sort-rows --max-fill 2.5 --force)
  e2e_stored(rg_sorted)
  e2e_json_expect(32 matrix format_options group_size)
  e2e_json_expect(ON matrix format_options sort_rows)
  e2e_json_expect(2.5 matrix format_options max_fill)
  e2e_json_expect(ON matrix format_options force)
  if(NOT rg_sorted LESS rg_default)
    e2e_fail("rgcsr G=32 sorted stores ${rg_sorted} entries, G=128 unsorted ${rg_default}")
  endif()
  e2e_json(fill matrix fill_percent) # the paper's artificial zeros, % of nnz
  if(NOT (fill GREATER 0 AND fill LESS 10))
    e2e_fail("rgcsr fill_percent ${fill}, expected in (0, 10)")
  endif()

  e2e_run(${cpu} --format jds --sort-rows) # JDS is sorted by definition
  e2e_expect_solved(1e-8 1e-6)
  e2e_json_expect(ON matrix format_options sort_rows)
  foreach(fmt coo hyb)
    e2e_run(${cpu} --format ${fmt})
    e2e_expect_solved(1e-8 1e-6)
    e2e_json(t matrix format_options)
    if(NOT t STREQUAL "{}" AND NOT t MATCHES "^{[ \n]*}$")
      e2e_fail("${fmt} reads no parameter, format_options is '${t}'")
    endif()
  endforeach()

  e2e_run(-m poisson2d:20 --backend cpu --format sell --slice-height 16 --sort-window 400 --max-fill 3)
  e2e_expect_rc(0)
  e2e_expect_stdout("format +sell, [0-9.]+ MB \\([0-9]+ stored entries, padding [0-9.]+% of nnz, 16-bit columns\\)\n +slice_height 16, sort_window 400, max_fill 3, force off, index_bits auto\n")
endfunction()

# --transpose: csr builds and caches A^T with explicit (on every backend; on
# the CPU both modes are deterministic), so the footprint doubles for a square
# matrix; the solve is unchanged (no solver applies A^T).  Other formats do
# not read it: a warning, and the solve goes on.
function(scenario_transpose)
  foreach(mode implicit explicit)
    e2e_run(-m poisson2d:20 --backend cpu --transpose ${mode} --json)
    e2e_expect_solved(1e-8 1e-6)
    e2e_json_expect(${mode} matrix format_options transpose)
    e2e_json(bytes_${mode} matrix bytes)
    e2e_json(it_${mode} result iterations)
  endforeach()
  math(EXPR twice "2 * ${bytes_implicit}")
  if(NOT bytes_explicit EQUAL twice)
    e2e_fail("explicit transpose: ${bytes_explicit} bytes, implicit ${bytes_implicit}: expected twice")
  endif()
  if(NOT it_explicit EQUAL it_implicit)
    e2e_fail("explicit transpose: ${it_explicit} iterations, implicit ${it_implicit}")
  endif()
  e2e_run(-m poisson2d:20 --backend cpu --json)
  e2e_json_expect(implicit matrix format_options transpose)
  e2e_run(-m poisson2d:20 --backend cpu --transpose explicit)
  e2e_expect_rc(0)
  e2e_expect_stdout("format +csr, [^\n]*\n +transpose explicit, csr_kernel auto\n")
  e2e_run(-m poisson2d:20 --backend cpu --format coo --transpose explicit --json)
  e2e_expect_solved(1e-8 1e-6)
  e2e_expect_stderr("warning: --transpose has no effect with --format coo \\(it applies to csr\\)")
endfunction()

# Padding limits on an arrow matrix (n = 200: diagonal 4, row 1 full of 0.01):
# ELL would store 200 x 224 slots for 399 nonzeros, DIA 200 diagonals, RgCSR
# and SELL a 200-wide first group: each refuses with max_fill 10 (exit 1, the
# library's message and how the CLI lifts it) and converts with --max-fill
# above the fill factor or with --force.
function(scenario_format_refusal)
  set(entries "")
  foreach(i RANGE 1 200)
    list(APPEND entries "${i} ${i} 4")
    if(i GREATER 1)
      list(APPEND entries "1 ${i} 0.01")
    endif()
  endforeach()
  e2e_write_mtx("${WORK}/arrow.mtx" "coordinate real general" "200 200 399" ${entries})
  foreach(fmt ell dia rgcsr sell)
    e2e_run(-m arrow.mtx --backend cpu --format ${fmt} --json)
    e2e_expect_rc(1)
    e2e_expect_stderr("format conversion failed: [^\n]*max_fill 10[^\n]*force")
    e2e_expect_stderr("--max-fill X raises the limit \\(now 10\\); --force converts anyway")
    if(NOT E2E_OUT STREQUAL "")
      e2e_fail("stdout not empty after a refused conversion")
    endif()
    e2e_run(-m arrow.mtx --backend cpu --format ${fmt} --force --json)
    e2e_expect_solved(1e-8 1e-6)
    e2e_json_expect(ON matrix format_options force)
    e2e_json(fill matrix fill_percent)
    if(NOT fill GREATER 900) # above max_fill 10 = 900 % padding
      e2e_fail("${fmt} --force: fill_percent ${fill}, expected > 900")
    endif()
  endforeach()
  e2e_run(-m arrow.mtx --backend cpu --format ell --max-fill 200 --json) # fill factor 112
  e2e_expect_solved(1e-8 1e-6)
  e2e_json_expect(200 matrix format_options max_fill)
  e2e_json_expect(OFF matrix format_options force)
  e2e_run(-m arrow.mtx --backend cpu --format ell --max-fill 100) # still below 112
  e2e_expect_rc(1)
  e2e_expect_stderr("max_fill 100")
  e2e_run(-m arrow.mtx --backend cpu --format hyb --json) # HYB never refuses
  e2e_expect_solved(1e-8 1e-6)
endfunction()

# Bad format parameters: exit 1, the option and its allowed values named,
# nothing on stdout.  A parameter the format does not read: a warning only.
function(scenario_bad_format_option)
  foreach(case "--transpose;sideways|--transpose: expected one of implicit, explicit, got 'sideways'"
          "--transpose|option '--transpose' needs a value"
          "--slice-height;8|--slice-height: expected one of 16, 32, got '8'"
          "--slice-height;32x|--slice-height: expected one of 16, 32, got '32x'"
          "--sort-window;-1|--sort-window: expected an integer >= 0, got '-1'"
          "--format;sell;--sort-window;100|--sort-window: expected 0 or 1 \\(no sorting\\) or a multiple of the slice height 32, got 100"
          "--format;sell;--slice-height;16;--sort-window;40|multiple of the slice height 16, got 40"
          "--group-size;16|--group-size: expected an integer in 32..256, got '16'"
          "--group-size;257|--group-size: expected an integer in 32..256, got '257'"
          "--group-size;abc|--group-size: expected an integer in 32..256, got 'abc'"
          "--max-fill;0|--max-fill: expected a finite number >= 1, got '0'"
          "--max-fill;0.5|--max-fill: expected a finite number >= 1, got '0.5'"
          "--max-fill;nan|--max-fill: expected a finite number >= 1, got 'nan'"
          "--max-fill;-3|--max-fill: expected a finite number >= 1, got '-3'"
          "--force=yes|option '--force=yes' takes no value"
          "--sort-rows=1|option '--sort-rows=1' takes no value"
          "--index-bits;8|--index-bits: expected one of auto, 16, 32, got '8'")
    string(REPLACE "|" ";" parts "${case}")
    list(POP_BACK parts regex)
    e2e_run(-m poisson2d:4 --backend cpu ${parts})
    e2e_expect_rc(1)
    e2e_expect_stderr("^spsolve: [^\n]*${regex}")
    if(NOT E2E_OUT STREQUAL "")
      e2e_fail("stdout not empty on a usage error")
    endif()
  endforeach()
  e2e_run(-m poisson2d:8 --backend cpu --format csr --group-size 64 --slice-height 16 --max-fill 5 --json)
  e2e_expect_solved(1e-8 1e-6)
  e2e_expect_stderr("warning: --slice-height has no effect with --format csr \\(it applies to sell\\)")
  e2e_expect_stderr("warning: --group-size has no effect with --format csr \\(it applies to rgcsr\\)")
  e2e_expect_stderr("warning: --max-fill has no effect with --format csr \\(it applies to ell, sell, rgcsr, dia\\)")
  e2e_run(--help)
  foreach(word --transpose --slice-height --sort-window --group-size --sort-rows --max-fill --force --index-bits)
    e2e_expect_stdout("${word}")
  endforeach()
endfunction()

# A complex, nonsymmetric, diagonally dominant tridiagonal system written here
# (n = 40: diagonal 4+1i, sub-diagonal -1+0.5i, super-diagonal -1-0.3i), also
# gzipped.  The default solver for it is GMRES; BiCGSTAB and f32 (c32) also run.
function(scenario_complex)
  set(entries "")
  foreach(i RANGE 1 40)
    list(APPEND entries "${i} ${i} 4 1")
    if(i GREATER 1)
      math(EXPR j "${i} - 1")
      list(APPEND entries "${i} ${j} -1 0.5" "${j} ${i} -1 -0.3")
    endif()
  endforeach()
  e2e_write_mtx("${WORK}/c.mtx" "coordinate complex general" "40 40 118" ${entries})
  e2e_run(-m c.mtx --json)
  e2e_expect_solved(1e-8 1e-7)
  e2e_json_expect(c64 matrix scalar)
  e2e_json_expect(gmres solver name)
  e2e_json_expect(118 matrix nnz)
  e2e_run(-m c.mtx --solver bicgstab --precond jacobi --json)
  e2e_expect_solved(1e-8 1e-7)
  e2e_run(-m c.mtx --precision f32 --json)
  e2e_expect_solved(1e-5 1e-4)
  e2e_json_expect(c32 matrix scalar)
  file(ARCHIVE_CREATE OUTPUT "${WORK}/c.mtx.gz" PATHS "${WORK}/c.mtx" FORMAT raw COMPRESSION GZip)
  e2e_run(-m c.mtx.gz --json)
  e2e_expect_solved(1e-8 1e-7)
endfunction()

# -b from a file: b = A*x for an integer x built here (poisson2d:6), so the
# solution is known exactly; -o gives it back.
function(scenario_rhs_file)
  set(x "")
  foreach(i RANGE 35)
    math(EXPR xi "${i} % 5 - 2")
    list(APPEND x ${xi})
  endforeach()
  e2e_poisson2d_times(b 6 ${x})
  e2e_write_mtx("${WORK}/b.mtx" "array real general" "36 1" ${b})
  e2e_run(-m poisson2d:6 -b b.mtx --rtol 1e-12 -o x.mtx --json)
  e2e_expect_solved(1e-12)
  e2e_json_expect(b.mtx rhs source)
  e2e_json_expect(OFF rhs generated)
  e2e_json_expect("" result error_vs_ones)
  e2e_read_vector(got "${WORK}/x.mtx")
  foreach(i RANGE 35)
    list(GET got ${i} gi)
    list(GET x ${i} xi)
    e2e_near_int(ok "${gi}" ${xi})
    if(NOT ok)
      e2e_fail("x[${i}] = ${gi}, expected ${xi}")
    endif()
  endforeach()
  # b = 0: x = 0 without iterating
  set(zeros "")
  foreach(i RANGE 35)
    list(APPEND zeros 0)
  endforeach()
  e2e_write_mtx("${WORK}/zero.mtx" "array real general" "36 1" ${zeros})
  e2e_run(-m poisson2d:6 -b zero.mtx --json)
  e2e_expect_rc(0)
  e2e_json_expect(ON result converged)
  e2e_json_expect(0 result iterations)
  # a complex b makes the real generated problem a complex solve: with
  # b = (1+1i)*A*1 the solution is (1+1i)*1
  e2e_poisson2d_times(a1 6 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1)
  set(cb "")
  foreach(v IN LISTS a1)
    list(APPEND cb "${v} ${v}")
  endforeach()
  e2e_write_mtx("${WORK}/cb.mtx" "array complex general" "36 1" ${cb})
  e2e_run(-m poisson2d:6 -b cb.mtx --rtol 1e-12 -o cx.mtx --json)
  e2e_expect_solved(1e-12)
  e2e_json_expect(c64 matrix scalar)
  e2e_read_vector(got "${WORK}/cx.mtx")
  foreach(v IN LISTS got)
    string(REGEX REPLACE "[ \t]+" ";" parts "${v}")
    list(GET parts 0 re)
    list(GET parts 1 im)
    e2e_near_int(ok_re "${re}" 1)
    e2e_near_int(ok_im "${im}" 1)
    if(NOT ok_re OR NOT ok_im)
      e2e_fail("complex x entry '${v}', expected 1 1")
    endif()
  endforeach()
endfunction()

# --x0 from a file: the exact solution converges in 0 iterations; any other
# start converges normally; a wrong size is an input error.
function(scenario_x0)
  set(ones "")
  set(twos "")
  foreach(i RANGE 63)
    list(APPEND ones 1)
    list(APPEND twos 2)
  endforeach()
  e2e_write_mtx("${WORK}/ones.mtx" "array real general" "64 1" ${ones})
  e2e_write_mtx("${WORK}/twos.mtx" "array real general" "64 1" ${twos})
  e2e_run(-m poisson2d:8 --x0 ones.mtx --json)
  e2e_expect_solved(1e-8)
  e2e_json_expect(0 result iterations)
  e2e_json_expect(ones.mtx x0)
  e2e_run(-m poisson2d:8 --x0 twos.mtx --json)
  e2e_expect_solved(1e-8 1e-6)
  e2e_json(it result iterations)
  if(it LESS 1)
    e2e_fail("a start away from the solution needed no iterations")
  endif()
  e2e_run(-m poisson2d:9 --x0 ones.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("ones.mtx: x0 has 64 entries but the matrix has 81")
endfunction()

# Shape and setup errors: a non-square matrix, a b of the wrong size, a
# complex x0 for a real system, Jacobi on a zero diagonal.
function(scenario_shape)
  e2e_write_mtx("${WORK}/rect.mtx" "coordinate real general" "3 2 2" "1 1 1.0" "2 2 1.0")
  e2e_run(-m rect.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("rect.mtx: the matrix is 3 x 2; the solvers need a square matrix")
  e2e_write_mtx("${WORK}/b5.mtx" "array real general" "5 1" 1 2 3 4 5)
  e2e_run(-m poisson2d:2 -b b5.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("b5.mtx: b has 5 entries but the matrix has 4 rows")
  # a complex initial guess for a real system
  e2e_write_mtx("${WORK}/cx0.mtx" "array complex general" "4 1" "1 0" "1 0" "1 0" "1 1")
  e2e_run(-m poisson2d:2 --x0 cx0.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("cx0.mtx: the initial guess is complex but the system is real")
  # Jacobi refuses a zero diagonal (row 2 here): a setup error, exit 1;
  # without a preconditioner the (nonsingular) system solves
  e2e_write_mtx("${WORK}/zd.mtx" "coordinate real general" "3 3 4" "1 1 2" "2 3 1" "3 2 1" "3 3 2")
  e2e_run(-m zd.mtx --precond jacobi)
  e2e_expect_rc(1)
  e2e_expect_stderr("^spsolve: preconditioner setup failed: [^\n]*row 2")
  e2e_run(-m zd.mtx --json)
  e2e_expect_solved(1e-8 1e-8)
endfunction()

# Symmetric indefinite: diag(1,-1,...,1,-1) with b = A*1 makes CG's p'Ap
# exactly 0 at the first step (breakdown: exit 2, never reported as solved);
# GMRES solves it (the minimal polynomial has degree 2).
function(scenario_indefinite)
  set(entries "")
  foreach(i RANGE 1 10)
    math(EXPR s "(${i} % 2) * 2 - 1")
    list(APPEND entries "${i} ${i} ${s}")
  endforeach()
  e2e_write_mtx("${WORK}/indef.mtx" "coordinate real symmetric" "10 10 10" ${entries})
  e2e_run(-m indef.mtx --json)
  e2e_expect_rc(2)
  e2e_expect_json_only()
  e2e_json_expect(cg solver name)
  e2e_json_expect(OFF result converged)
  e2e_run(-m indef.mtx --solver gmres --json)
  e2e_expect_solved(1e-8 1e-8)
endfunction()

# Non-finite values: refused by default; with --allow-nonfinite the file is
# read, the iteration meets the NaN, and the solve is never called converged.
function(scenario_nonfinite)
  e2e_write_mtx("${WORK}/nan.mtx" "coordinate real general" "3 3 4" "1 1 4" "2 2 4" "3 3 4" "1 3 nan")
  e2e_write_mtx("${WORK}/b3.mtx" "array real general" "3 1" 1 1 1)
  e2e_run(-m nan.mtx -b b3.mtx)
  e2e_expect_rc(1)
  e2e_expect_stderr("nan.mtx:6: ")
  e2e_run(-m nan.mtx -b b3.mtx --allow-nonfinite -o x.mtx --json)
  e2e_expect_rc(2)
  e2e_json_expect(OFF result converged)
  if(EXISTS "${WORK}/x.mtx")
    e2e_fail("x.mtx written for a NaN solve")
  endif()
endfunction()

# --backend cuda: on a build without CUDA, or without a GPU, a clear error and
# exit 1; where a GPU is usable it must solve (and report the cuda backend).
function(scenario_cuda)
  e2e_run(-m poisson2d:8 --backend cuda --json)
  if(CUDA_BUILT AND E2E_RC STREQUAL "0")
    e2e_expect_solved(1e-8 1e-6)
    e2e_json_expect(cuda backend name)
    return()
  endif()
  e2e_expect_rc(1)
  e2e_expect_stderr("^spsolve: backend cuda unavailable: [^\n]*(CUDA|cuda|device|GPU)")
  if(CUDA_BUILT)
    message(STATUS "E2E-SKIP: CUDA is compiled in but no device is usable here")
  endif()
endfunction()

function(scenario_help)
  e2e_run(--help)
  e2e_expect_rc(0)
  foreach(word cg bicgstab gmres jacobi csr coo poisson2d:N poisson3d:N --precision --history --json)
    e2e_expect_stdout("${word}")
  endforeach()
  e2e_run(--version)
  e2e_expect_rc(0)
  e2e_expect_stdout("^spsolve [0-9]+\\.[0-9]+\\.[0-9]+")
endfunction()

if(NOT COMMAND scenario_${SCENARIO})
  message(FATAL_ERROR "unknown scenario '${SCENARIO}'")
endif()
cmake_language(CALL scenario_${SCENARIO})
