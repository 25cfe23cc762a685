/* The execution struct's error path (kernels/exec.h). */
#include "kernels/exec.h"

#include <stdarg.h>
#include <stdio.h>

sps_status sps_exec_error_at(sps_exec *ex, sps_status st, const char *file, int line, const char *fmt, ...)
{
    if (!ex || !ex->error) return st;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ex->error(ex->sink, st, file, line, msg);
}
