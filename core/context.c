/* Context: chooses the backend, owns its state and the last error. */
#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const backend_names[] = {"cpu", "cuda", "auto"};

const char *sps_backend_name(sps_backend be) { return ((unsigned)be < 3) ? backend_names[be] : "?"; }

sps_status sps_backend_from_name(const char *name, sps_backend *out)
{
    if (!name || !out) return SPS_ERR_ARG;
    for (int i = 0; i < 3; i++)
        if (strcmp(name, backend_names[i]) == 0) { *out = (sps_backend)i; return SPS_OK; }
    return SPS_ERR_ARG;
}

int sps_cuda_compiled(void)
{
#ifdef SPS_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int sps_cuda_available(void)
{
#ifdef SPS_HAVE_CUDA
    return sps_cuda_device_count() > 0;
#else
    return 0;
#endif
}

const char *sps_cuda_unavailable_reason(void)
{
    static char why[256];
    why[0] = '\0';
#ifdef SPS_HAVE_CUDA
    (void)sps_cuda_device_probe(why, sizeof why);
#else
    snprintf(why, sizeof why, "this libspsolve was built without CUDA");
#endif
    return why;
}

sps_status sps_context_create(sps_context *out, sps_backend be, int device)
{
    if (!out) return SPS_ERR_ARG;
    *out = NULL;
    sps_context ctx = calloc(1, sizeof *ctx);
    if (!ctx) return SPS_ERR_ALLOC;
    *out = ctx;
    ctx->ex.device = device;
    ctx->ex.error = sps_context_error_sink;
    ctx->ex.sink = ctx;
    /* start on the CPU so that a failed CUDA start still leaves a usable context
       holding the reason */
    ctx->backend = SPS_BACKEND_CPU;
    ctx->ex.be = &sps_cpu_backend;
    if (be == SPS_BACKEND_AUTO) be = sps_cuda_available() ? SPS_BACKEND_CUDA : SPS_BACKEND_CPU;
    if (be == SPS_BACKEND_CUDA) {
#ifdef SPS_HAVE_CUDA
        sps_status st = sps_cuda_backend.init(&ctx->ex, device);
        if (st != SPS_OK) {
            SPS_CHECK(sps_cpu_backend.init(&ctx->ex, 0));
            return st;
        }
        ctx->backend = SPS_BACKEND_CUDA;
        ctx->ex.be = &sps_cuda_backend;
        return SPS_OK;
#else
        SPS_CHECK(sps_cpu_backend.init(&ctx->ex, 0));
        return sps_error(ctx, SPS_ERR_DEVICE,
                         "backend 'cuda' requested, but this libspsolve was built without CUDA "
                         "(configure with -DSPSOLVE_CUDA=ON where nvcc is available)");
#endif
    }
    if (be != SPS_BACKEND_CPU) {
        SPS_CHECK(sps_cpu_backend.init(&ctx->ex, 0));
        return sps_error(ctx, SPS_ERR_ARG, "unknown backend %d", (int)be);
    }
    return sps_cpu_backend.init(&ctx->ex, 0);
}

void sps_context_destroy(sps_context ctx)
{
    if (!ctx) return;
    if (ctx->scratch) sps_dfree(ctx, ctx->scratch);
    if (ctx->ex.be && ctx->ex.be->fini) ctx->ex.be->fini(&ctx->ex);
    free(ctx);
}

sps_backend sps_context_backend(sps_context ctx) { return ctx ? ctx->backend : SPS_BACKEND_CPU; }
const char *sps_context_device_name(sps_context ctx) { return ctx ? ctx->ex.device_name : ""; }

void *sps_context_cuda_stream(sps_context ctx) { return ctx ? ctx->ex.stream : NULL; }

sps_status sps_context_synchronize(sps_context ctx)
{
    if (!ctx) return SPS_ERR_ARG;
    return ctx->ex.be->synchronize(&ctx->ex);
}

/* ---------------------------------------------------------------- memory */
sps_status sps_dmalloc(sps_context ctx, void **p, size_t bytes)
{
    *p = NULL;
    if (bytes == 0) bytes = 1; /* a valid, distinct pointer for empty arrays */
    return ctx->ex.be->alloc(&ctx->ex, p, bytes);
}

void sps_dfree(sps_context ctx, void *p)
{
    if (p) ctx->ex.be->release(&ctx->ex, p);
}

sps_status sps_dcopy(sps_context ctx, void *dst, const void *src, size_t bytes, sps_copy_kind kind)
{
    if (bytes == 0) return SPS_OK;
    return ctx->ex.be->copy(&ctx->ex, dst, src, bytes, kind);
}

sps_status sps_dupload(sps_context ctx, void **dst, const void *src, size_t bytes)
{
    SPS_CHECK(sps_dmalloc(ctx, dst, bytes));
    sps_status st = sps_dcopy(ctx, *dst, src, bytes, SPS_COPY_H2D);
    if (st != SPS_OK) {
        sps_dfree(ctx, *dst);
        *dst = NULL;
    }
    return st;
}

sps_status sps_ddownload(sps_context ctx, void **dst, const void *src, size_t bytes, const char *what)
{
    SPS_CHECK(sps_hmalloc(ctx, dst, bytes, what));
    sps_status st = sps_dcopy(ctx, *dst, src, bytes, SPS_COPY_D2H);
    if (st != SPS_OK) {
        free(*dst);
        *dst = NULL;
    }
    return st;
}

sps_status sps_hmalloc(sps_context ctx, void **p, size_t bytes, const char *what)
{
    *p = malloc(bytes ? bytes : 1);
    if (!*p) return sps_error(ctx, SPS_ERR_ALLOC, "out of host memory: %zu bytes for %s", bytes, what);
    return SPS_OK;
}

sps_status sps_hcalloc(sps_context ctx, void **p, size_t bytes, const char *what)
{
    *p = calloc(1, bytes ? bytes : 1);
    if (!*p) return sps_error(ctx, SPS_ERR_ALLOC, "out of host memory: %zu bytes for %s", bytes, what);
    return SPS_OK;
}

/* ---------------------------------------------------------------- the queue (core/internal.h) */
sps_status sps_dzero(sps_context ctx, void *p, size_t bytes)
{
    return bytes ? ctx->ex.be->zero(&ctx->ex, p, bytes) : SPS_OK;
}
int sps_q_graphs(sps_context ctx) { return ctx->ex.be->capture_begin != NULL; }
sps_status sps_q_capture_begin(sps_context ctx) { return ctx->ex.be->capture_begin(&ctx->ex); }
sps_status sps_q_capture_end(sps_context ctx, void **graph) { return ctx->ex.be->capture_end(&ctx->ex, graph); }
sps_status sps_q_graph_launch(sps_context ctx, void *graph) { return ctx->ex.be->graph_launch(&ctx->ex, graph); }
void sps_q_graph_destroy(sps_context ctx, void *graph)
{
    if (graph) ctx->ex.be->graph_destroy(&ctx->ex, graph);
}
int sps_q_async_fetch(sps_context ctx) { return ctx->ex.be->fetch_begin != NULL; }
sps_status sps_q_fetch_arm(sps_context ctx, const void *src, size_t bytes, int buf)
{
    return ctx->ex.be->fetch_arm ? ctx->ex.be->fetch_arm(&ctx->ex, src, bytes, buf) : SPS_OK;
}
sps_status sps_q_fetch_begin(sps_context ctx, const void *src, size_t bytes)
{
    return ctx->ex.be->fetch_begin(&ctx->ex, src, bytes);
}
sps_status sps_q_fetch_wait(sps_context ctx, void *dst, size_t bytes)
{
    return ctx->ex.be->fetch_wait(&ctx->ex, dst, bytes);
}
