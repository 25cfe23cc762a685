/* Error recording: one message per context, with the source location beside it. */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

/* The context's error sink (sps_exec.error): kernels and backends report through it. */
sps_status sps_context_error_sink(void *sink, sps_status st, const char *file, int line, const char *msg)
{
    sps_context ctx = sink;
    if (!ctx) return st;
    snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s", msg);
    /* keep only the project-relative part of __FILE__ */
    const char *rel = file;
    static const char *const roots[] = {"core/", "formats/", "io/", "kernels/", "solvers/", "precond/"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        const char *p = strstr(file, roots[i]);
        if (p) { rel = p; break; }
    }
    snprintf(ctx->err_origin, sizeof ctx->err_origin, "%s:%d", rel, line);
    ctx->last_status = st;
    return st;
}

sps_status sps_error_at(sps_context ctx, sps_status st, const char *file, int line, const char *fmt, ...)
{
    if (!ctx) return st;
    char msg[sizeof ctx->errmsg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sps_context_error_sink(ctx, st, file, line, msg);
}

const char *sps_context_error(sps_context ctx) { return ctx ? ctx->errmsg : "no context"; }
sps_status sps_context_last_status(sps_context ctx) { return ctx ? ctx->last_status : SPS_ERR_ARG; }

void sps_context_clear_error(sps_context ctx)
{
    if (!ctx) return;
    ctx->errmsg[0] = 0;
    ctx->err_origin[0] = 0;
    ctx->last_status = SPS_OK;
}

const char *sps_status_name(sps_status s)
{
    static const char *const names[] = {"SPS_OK", "SPS_ERR_ARG", "SPS_ERR_IO", "SPS_ERR_PARSE", "SPS_ERR_ALLOC",
                                        "SPS_ERR_DEVICE", "SPS_ERR_UNSUPPORTED", "SPS_ERR_NOT_CONVERGED",
                                        "SPS_ERR_BREAKDOWN", "SPS_ERR_NUMERIC"};
    if ((int)s < 0 || (size_t)s >= sizeof names / sizeof names[0]) return "SPS_ERR_UNKNOWN";
    return names[s];
}
