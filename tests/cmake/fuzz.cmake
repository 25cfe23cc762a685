# libFuzzer harnesses (tests/fuzz/README.md), with -DSPSOLVE_FUZZ=ON and clang: each
# runs SPSOLVE_FUZZ_SECONDS under ASan + UBSan as a CTest test labelled fuzz, from a
# seed corpus of tests/fuzz/seeds and tests/data/bad (copied into the build tree, where
# the run adds what it finds) or of option lines.
if(SPSOLVE_FUZZ)
  set(SPS_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
  set(SPS_FUZZ_WORK ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
  file(GLOB SPS_FUZZ_SEEDS ${SPS_FUZZ_DIR}/seeds/mmio/*.mtx ${SPS_FUZZ_DIR}/seeds/mmio/*.mtx.gz ${SPS_TEST_DATA}/bad/*.mtx)
  file(MAKE_DIRECTORY ${SPS_FUZZ_WORK}/mmio ${SPS_FUZZ_WORK}/cli_options ${SPS_FUZZ_WORK}/app_readers)
  file(COPY ${SPS_FUZZ_SEEDS} DESTINATION ${SPS_FUZZ_WORK}/mmio)
  file(COPY ${SPS_FUZZ_DIR}/seeds/cli_options/ DESTINATION ${SPS_FUZZ_WORK}/cli_options)
  file(COPY ${SPS_FUZZ_DIR}/seeds/app_readers/ DESTINATION ${SPS_FUZZ_WORK}/app_readers)

  add_executable(fuzz_mmio ${SPS_FUZZ_DIR}/fuzz_mmio.c)
  target_include_directories(fuzz_mmio PRIVATE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(fuzz_mmio PRIVATE spsolve_static m)
  add_executable(fuzz_cli_options ${SPS_FUZZ_DIR}/fuzz_cli_options.c ${CMAKE_SOURCE_DIR}/apps/spsolve/options.c)
  target_include_directories(fuzz_cli_options PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/apps/common)
  target_compile_definitions(fuzz_cli_options PRIVATE SPSOLVE_VERSION="${PROJECT_VERSION}")
  target_link_libraries(fuzz_cli_options PRIVATE spsolve_static m)
  # the apps' Gmsh, OBJ and TGA readers (their core libraries, public API only)
  add_executable(fuzz_app_readers ${SPS_FUZZ_DIR}/fuzz_app_readers.c)
  target_link_libraries(fuzz_app_readers PRIVATE fem_core spin_core m)
  foreach(h fuzz_mmio fuzz_cli_options fuzz_app_readers)
    target_compile_options(${h} PRIVATE -Wall -Wextra)
    target_link_options(${h} PRIVATE -fsanitize=fuzzer)
    string(REPLACE "fuzz_" "" corpus ${h})
    # -close_fd_mask=3: the parser's own messages are not findings; crashes still print
    add_test(NAME ${h} COMMAND ${h} -max_total_time=${SPSOLVE_FUZZ_SECONDS} -rss_limit_mb=2048 -timeout=20
                               -close_fd_mask=3 -print_final_stats=1 ${SPS_FUZZ_WORK}/${corpus})
    set_tests_properties(${h} PROPERTIES LABELS fuzz TIMEOUT 900)
  endforeach()
endif()
