/* The check macro of the apps' tests (test_spin, test_fem), which link an app's core
 * against the shared library and not the library's test utilities: CHECK(cond, fmt,
 * ...) counts a pass, or prints "FAIL file:line: message" and counts a failure; the
 * test ends by printing n_pass and n_fail. */
#ifndef SPS_TEST_APP_CHECK_H
#define SPS_TEST_APP_CHECK_H
#include <stdio.h>

static int n_pass, n_fail;
#define CHECK(c, ...)                                                                                              \
    do {                                                                                                           \
        if (c) n_pass++;                                                                                           \
        else {                                                                                                     \
            n_fail++;                                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                            \
            printf(__VA_ARGS__);                                                                                   \
            printf("\n");                                                                                          \
        }                                                                                                          \
    } while (0)
#endif
