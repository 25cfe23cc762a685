/* The apps' JSON numbers: JSON has no NaN or Infinity (RFC 8259), and printf writes them
 * as "nan", "-nan" or "inf", which no JSON reader takes; such a value is written as null. */
#ifndef APPS_COMMON_JSON_H
#define APPS_COMMON_JSON_H
#include <math.h>
#include <stdio.h>

/* v with `digits` significant digits (%.*g), or null where it is not finite */
static inline void app_json_number(FILE *f, int digits, double v)
{
    if (isfinite(v)) fprintf(f, "%.*g", digits, v);
    else fputs("null", f);
}
#endif
