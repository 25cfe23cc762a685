# Matrix Market reader throughput: mmread_bench [-n entries] [-r reps] [files...]
add_executable(mmread_bench ${CMAKE_SOURCE_DIR}/bench/mmread_bench.c)
target_include_directories(mmread_bench PRIVATE ${CMAKE_SOURCE_DIR}) # io/mmio.h is internal
target_compile_options(mmread_bench PRIVATE ${SPS_WARN})
target_link_libraries(mmread_bench spsolve_static ZLIB::ZLIB)
# HiSparse's footprint against CSR and COO (issue 23): hisparse_footprint [-d D,...] [--generated] FILE.mtx ...
add_executable(hisparse_footprint ${CMAKE_SOURCE_DIR}/bench/hisparse_footprint.c ${CMAKE_SOURCE_DIR}/bench/gen.c)
target_include_directories(hisparse_footprint PRIVATE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/bench) # formats/hisparse.h is internal
target_compile_options(hisparse_footprint PRIVATE ${SPS_WARN})
target_link_libraries(hisparse_footprint spsolve_static ZLIB::ZLIB)
