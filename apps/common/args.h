/* The apps' command-line numbers: a value parsed whole and range-checked, so "" is not 0,
 * nan and inf are not numbers, and 4294967297 is not taken as 1 by a conversion to int. */
#ifndef APPS_COMMON_ARGS_H
#define APPS_COMMON_ARGS_H
#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* s whole as a finite real into *x; 0 when it is not one */
static inline int args_real(const char *s, double *x)
{
    char *end;
    *x = strtod(s, &end);
    return end != s && !*end && isfinite(*x);
}

/* s whole as an integer in lo..hi into *x (read as a long, checked before the conversion);
 * 0 when it is not one */
static inline int args_int(const char *s, long lo, long hi, int *x)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < lo || v > hi) return 0;
    *x = (int)v;
    return 1;
}
#endif
