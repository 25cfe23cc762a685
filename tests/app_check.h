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

/* A FIFO at path that a child process fills with the n bytes of data and closes: a reader
 * opening path then reads a pipe, which has no size to bound what its header declares.
 * Returns the child's pid (for app_fifo_done), or -1.  The includer defines
 * _POSIX_C_SOURCE (fork, mkfifo). */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
static pid_t app_fifo(const char *path, const void *data, size_t n)
{
    if (mkfifo(path, 0600) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        FILE *w = fopen(path, "wb");
        if (w) fwrite(data, 1, n, w), fclose(w);
        _exit(0);
    }
    if (pid < 0) unlink(path);
    return pid;
}
/* The writer waited for, the FIFO removed. */
static void app_fifo_done(pid_t pid, const char *path)
{
    if (pid > 0) waitpid(pid, NULL, 0);
    unlink(path);
}

/* Under AddressSanitizer an allocation above 1 GiB returns NULL (the readers' "out of
 * memory" path) instead of being mapped lazily and never touched: a reader that sizes its
 * arrays from a count that a pipe's header declares (gigabytes from a few bytes) is then
 * caught; the tests allocate far less. */
#if defined(__SANITIZE_ADDRESS__)
#define APP_CHECK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define APP_CHECK_ASAN 1
#endif
#endif
#ifdef APP_CHECK_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=1024"; }
#endif
#endif
