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

/* one counter set for host allocations, one for device ones */
typedef struct {
    long at; /* -1: not yet read from the environment; 0: off */
    long count, hits;
    const char *env;
} fi_counter;
static fi_counter fi_host = {-1, 0, 0, "SPS_FAULT_AT"}, fi_dev = {-1, 0, 0, "SPS_FAULT_DEVICE_AT"};

static void fi_set(fi_counter *c, long k)
{
    __atomic_store_n(&c->count, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->hits, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->at, k > 0 ? k : 0, __ATOMIC_SEQ_CST);
}

/* Whether this allocation fails. */
static int fi_fail(fi_counter *c)
{
    long at = __atomic_load_n(&c->at, __ATOMIC_SEQ_CST);
    if (at < 0) { /* first use: the environment's value, for whole processes */
        const char *e = getenv(c->env);
        at = e ? strtol(e, NULL, 10) : 0;
        __atomic_store_n(&c->at, at > 0 ? at : 0, __ATOMIC_SEQ_CST);
    }
    if (at <= 0) return 0;
    if (__atomic_add_fetch(&c->count, 1, __ATOMIC_SEQ_CST) != at) return 0;
    __atomic_add_fetch(&c->hits, 1, __ATOMIC_SEQ_CST);
    return 1;
}

void sps_fault_set(long k) { fi_set(&fi_host, k); }
long sps_fault_hits(void) { return __atomic_load_n(&fi_host.hits, __ATOMIC_SEQ_CST); }
long sps_fault_count(void) { return __atomic_load_n(&fi_host.count, __ATOMIC_SEQ_CST); }
void sps_fault_set_device(long k) { fi_set(&fi_dev, k); }
long sps_fault_device_hits(void) { return __atomic_load_n(&fi_dev.hits, __ATOMIC_SEQ_CST); }
long sps_fault_device_count(void) { return __atomic_load_n(&fi_dev.count, __ATOMIC_SEQ_CST); }
int sps_fi_device_fail(void) { return fi_fail(&fi_dev); }

void *sps_fi_malloc(size_t n) { return fi_fail(&fi_host) ? NULL : malloc(n); }
void *sps_fi_calloc(size_t n, size_t size) { return fi_fail(&fi_host) ? NULL : calloc(n, size); }
void *sps_fi_realloc(void *p, size_t n) { return fi_fail(&fi_host) ? NULL : realloc(p, n); }
char *sps_fi_strdup(const char *s) { return fi_fail(&fi_host) ? NULL : strdup(s); }
