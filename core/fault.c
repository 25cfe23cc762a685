/* Allocation fault injection (core/fault.h): the counters and the real calls. */
#include "core/fault.h"

#include <stdlib.h>
#include <string.h>

#ifdef SPS_FAULT_INJECTION /* the real allocator, whose names the forced include renamed */
#undef malloc
#undef calloc
#undef realloc
#undef strdup
void *malloc(size_t n);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t n);
char *strdup(const char *s);
#endif

static long fi_at = -1; /* -1: not yet read from SPS_FAULT_AT; 0: off */
static long fi_count, fi_hits;

void sps_fault_set(long k)
{
    __atomic_store_n(&fi_count, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fi_hits, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fi_at, k > 0 ? k : 0, __ATOMIC_SEQ_CST);
}

long sps_fault_hits(void) { return __atomic_load_n(&fi_hits, __ATOMIC_SEQ_CST); }
long sps_fault_count(void) { return __atomic_load_n(&fi_count, __ATOMIC_SEQ_CST); }

/* Whether this allocation fails. */
static int fi_fail(void)
{
    long at = __atomic_load_n(&fi_at, __ATOMIC_SEQ_CST);
    if (at < 0) { /* first use: the environment's SPS_FAULT_AT, for whole processes */
        const char *e = getenv("SPS_FAULT_AT");
        at = e ? strtol(e, NULL, 10) : 0;
        __atomic_store_n(&fi_at, at > 0 ? at : 0, __ATOMIC_SEQ_CST);
    }
    if (at <= 0) return 0;
    if (__atomic_add_fetch(&fi_count, 1, __ATOMIC_SEQ_CST) != at) return 0;
    __atomic_add_fetch(&fi_hits, 1, __ATOMIC_SEQ_CST);
    return 1;
}

void *sps_fi_malloc(size_t n) { return fi_fail() ? NULL : malloc(n); }
void *sps_fi_calloc(size_t n, size_t size) { return fi_fail() ? NULL : calloc(n, size); }
void *sps_fi_realloc(void *p, size_t n) { return fi_fail() ? NULL : realloc(p, n); }
char *sps_fi_strdup(const char *s) { return fi_fail() ? NULL : strdup(s); }
