/* Allocation fault injection, for tests (issue 24 item 10).  With the CMake option
 * SPSOLVE_FAULT_INJECTION every C file of the library is compiled with
 * -include core/fault.h and SPS_FAULT_INJECTION defined, so its malloc, calloc,
 * realloc and strdup go through counters that fail the k-th call from the moment
 * sps_fault_set(k) is called (or, for a process such as spsolve, from the first
 * allocation when the environment has SPS_FAULT_AT=k).  The CPU backend's "device"
 * memory is host memory, so that is covered too.  Without the option this header
 * declares the functions and changes nothing. */
#ifndef SPS_CORE_FAULT_H
#define SPS_CORE_FAULT_H
/* stddef.h only: this header comes first in every file (-include), before the file's
 * own feature macros, which stdlib.h and string.h must see */
#include <stddef.h>

/** From now, fail the k-th allocation (k >= 1; 0: never) and count the failures. */
void sps_fault_set(long k);
/** Failures injected since the last sps_fault_set. */
long sps_fault_hits(void);
/** Allocations counted since the last sps_fault_set. */
long sps_fault_count(void);
/** The same for the CUDA backend's device allocations (SPS_FAULT_DEVICE_AT=k for a
 *  process); the backend refuses the k-th as out of device memory. */
void sps_fault_set_device(long k);
long sps_fault_device_hits(void);
long sps_fault_device_count(void);
/** Whether this device allocation fails (the CUDA backend's hook). */
int sps_fi_device_fail(void);

void *sps_fi_malloc(size_t n);
void *sps_fi_calloc(size_t n, size_t size);
void *sps_fi_realloc(void *p, size_t n);
char *sps_fi_strdup(const char *s);

#ifdef SPS_FAULT_INJECTION
/* object-like: the system headers' own declarations, read later, declare these names */
#define malloc sps_fi_malloc
#define calloc sps_fi_calloc
#define realloc sps_fi_realloc
#define strdup sps_fi_strdup
#endif
#endif
