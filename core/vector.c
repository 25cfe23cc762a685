/* Vectors: n scalars in the context's backend memory. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

static size_t vbytes(sps_vector v) { return (size_t)v->n * sps_scalar_size(v->t); }

sps_status sps_vector_create(sps_context ctx, sps_index n, sps_scalar t, sps_vector *out)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!out) return sps_error(ctx, SPS_ERR_ARG, "sps_vector_create: NULL output vector");
    *out = NULL;
    if (n < 0) return sps_error(ctx, SPS_ERR_ARG, "sps_vector_create: negative size %d", (int)n);
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "sps_vector_create: bad scalar type %d", (int)t);
    sps_vector v;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&v, sizeof *v, "a vector handle"));
    v->ctx = ctx;
    v->n = n;
    v->t = t;
    sps_status st = sps_dmalloc(ctx, &v->data, vbytes(v));
    if (st == SPS_OK) st = sps_dzero(ctx, v->data, vbytes(v));
    if (st != SPS_OK) {
        sps_vector_destroy(v);
        return st;
    }
    *out = v;
    return SPS_OK;
}

sps_status sps_vector_from_host(sps_context ctx, sps_index n, sps_scalar t, const void *vals, sps_vector *out)
{
    SPS_CHECK(sps_vector_create(ctx, n, t, out));
    sps_status st = sps_vector_set(*out, vals);
    if (st != SPS_OK) {
        sps_vector_destroy(*out);
        *out = NULL;
    }
    return st;
}

void sps_vector_destroy(sps_vector v)
{
    if (!v) return;
    sps_dfree(v->ctx, v->data);
    free(v);
}

const char *sps_vector_warning(sps_vector v) { return v ? v->warning : ""; }

sps_index sps_vector_size(sps_vector v) { return v ? v->n : 0; }
sps_scalar sps_vector_scalar(sps_vector v) { return v ? v->t : SPS_F64; }
sps_context sps_vector_context(sps_vector v) { return v ? v->ctx : NULL; }
void *sps_vector_data(sps_vector v) { return v ? v->data : NULL; }

sps_status sps_vector_set(sps_vector v, const void *host)
{
    if (!v) return SPS_ERR_ARG;
    if (!host && v->n) return sps_error(v->ctx, SPS_ERR_ARG, "sps_vector_set: NULL values");
    return sps_dcopy(v->ctx, v->data, host, vbytes(v), SPS_COPY_H2D);
}

sps_status sps_vector_get(sps_vector v, void *host)
{
    if (!v) return SPS_ERR_ARG;
    if (!host && v->n) return sps_error(v->ctx, SPS_ERR_ARG, "sps_vector_get: NULL destination");
    return sps_dcopy(v->ctx, host, v->data, vbytes(v), SPS_COPY_D2H);
}

sps_status sps_vector_check_pair(const char *fn, sps_vector x, sps_vector y)
{
    if (!x || !y) return x || y ? sps_error((x ? x : y)->ctx, SPS_ERR_ARG, "%s: NULL vector %s", fn, x ? "y" : "x")
                         : SPS_ERR_ARG;
    if (x->ctx != y->ctx) return sps_error(x->ctx, SPS_ERR_ARG, "%s: vectors belong to different contexts", fn);
    if (x->t != y->t)
        return sps_error(x->ctx, SPS_ERR_ARG, "%s: scalar types differ (%s vs %s)", fn, sps_scalar_name(x->t),
                         sps_scalar_name(y->t));
    if (x->n != y->n)
        return sps_error(x->ctx, SPS_ERR_ARG, "%s: sizes differ (%d vs %d)", fn, (int)x->n, (int)y->n);
    return SPS_OK;
}

sps_status sps_vector_fill(sps_vector v, const void *value)
{
    if (!v || !value) return v ? sps_error(v->ctx, SPS_ERR_ARG, "sps_vector_fill: NULL value") : SPS_ERR_ARG;
    return sps_kvec(v->ctx, v->t)->fill(sps_ex(v->ctx), v->n, sps_cplx_load(v->t, value, sps_cplx_make(0, 0)), v->data);
}

sps_status sps_vector_copy(sps_vector x, sps_vector y)
{
    SPS_CHECK(sps_vector_check_pair("sps_vector_copy", x, y));
    return sps_kvec(x->ctx, x->t)->copy(sps_ex(x->ctx), x->n, x->data, y->data);
}

sps_status sps_vector_axpby(const void *alpha, sps_vector x, const void *beta, sps_vector y)
{
    SPS_CHECK(sps_vector_check_pair("sps_vector_axpby", x, y));
    sps_cplx a = sps_cplx_load(x->t, alpha, sps_cplx_make(1, 0)), b = sps_cplx_load(x->t, beta, sps_cplx_make(0, 0));
    return sps_kvec(x->ctx, x->t)->axpby(sps_ex(x->ctx), x->n, a, x->data, b, y->data);
}

sps_status sps_vector_scale(const void *alpha, sps_vector x)
{
    if (!x) return SPS_ERR_ARG;
    return sps_kvec(x->ctx, x->t)->scale(sps_ex(x->ctx), x->n, sps_cplx_load(x->t, alpha, sps_cplx_make(1, 0)), x->data);
}

/* Reductions land in the context's scratch slot in backend memory (allocated on
 * first use, not per call: a device allocation costs more than the reduction);
 * one host read brings the value back. */
static sps_status reduce_to_host(sps_vector x, sps_vector y, sps_cplx *res)
{
    sps_context ctx = x->ctx;
    if (!ctx->scratch) SPS_CHECK(sps_dmalloc(ctx, (void **)&ctx->scratch, sizeof *ctx->scratch));
    const sps_vec_kernels *k = sps_kvec(ctx, x->t);
    SPS_CHECK(y ? k->dot(sps_ex(ctx), x->n, x->data, y->data, ctx->scratch, 0)
                : k->nrm2(sps_ex(ctx), x->n, x->data, ctx->scratch, 0));
    return sps_dcopy(ctx, res, ctx->scratch, sizeof *res, SPS_COPY_D2H);
}

sps_status sps_vector_dot(sps_vector x, sps_vector y, void *result)
{
    SPS_CHECK(sps_vector_check_pair("sps_vector_dot", x, y));
    if (!result) return sps_error(x->ctx, SPS_ERR_ARG, "sps_vector_dot: NULL result");
    sps_cplx r;
    SPS_CHECK(reduce_to_host(x, y, &r));
    sps_cplx_store(x->t, r, result);
    return SPS_OK;
}

sps_status sps_vector_nrm2(sps_vector x, double *result)
{
    if (!x) return SPS_ERR_ARG;
    if (!result) return sps_error(x->ctx, SPS_ERR_ARG, "sps_vector_nrm2: NULL result");
    sps_cplx r;
    SPS_CHECK(reduce_to_host(x, NULL, &r));
    *result = r.re;
    return SPS_OK;
}

/* ---------------------------------------------------------------- vector layer (core/internal.h) */
/* Each op forwards to the kernel of the vectors' backend and type. */
#define VK(v) sps_kvec((v)->ctx, (v)->t)
#define VX(v) sps_ex((v)->ctx)

sps_status sps_v_fill(sps_vector x, sps_cplx a) { return VK(x)->fill(VX(x), x->n, a, x->data); }
sps_status sps_v_copy(sps_vector x, sps_vector y) { return VK(x)->copy(VX(x), x->n, x->data, y->data); }
sps_status sps_v_axpby(sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    return VK(x)->axpby(VX(x), x->n, a, x->data, b, y->data);
}
sps_status sps_v_pmul(sps_vector d, sps_vector x, sps_vector y) { return VK(x)->pmul(VX(x), x->n, d->data, x->data, y->data); }
sps_status sps_v_dot(sps_vector x, sps_vector y, sps_cplx *slots, int out)
{
    return VK(x)->dot(VX(x), x->n, x->data, y->data, slots, out);
}
sps_status sps_v_nrm2(sps_vector x, sps_cplx *slots, int out) { return VK(x)->nrm2(VX(x), x->n, x->data, slots, out); }
sps_status sps_v_nrm_inf(sps_vector x, sps_cplx *slots, int out)
{
    return VK(x)->nrm_inf(VX(x), x->n, x->data, slots, out);
}
sps_status sps_v_dot2(sps_vector x, sps_vector y, sps_cplx *slots, int xy, int xx)
{
    return VK(x)->dot2(VX(x), x->n, x->data, y->data, slots, xy, xx);
}
sps_status sps_v_axpy_s(const sps_cplx *slots, sps_scoef c, sps_vector x, sps_vector y)
{
    return VK(x)->axpy_s(VX(x), x->n, slots, c, x->data, y->data);
}
sps_status sps_v_scale_s(const sps_cplx *slots, sps_scoef c, sps_vector x)
{
    return VK(x)->scale_s(VX(x), x->n, slots, c, x->data);
}
sps_status sps_v_waxpy_s(sps_vector x, const sps_cplx *slots, sps_scoef c, sps_vector y, sps_vector w)
{
    return VK(x)->waxpy_s(VX(x), x->n, x->data, slots, c, y->data, w->data);
}
sps_status sps_v_axpy_dot_s(sps_cplx *slots, sps_scoef c, sps_vector x, sps_vector y, sps_vector z, int out)
{
    return VK(x)->axpy_dot_s(VX(x), x->n, slots, c, x->data, y->data, z->data, out);
}
sps_status sps_v_cg_step(sps_cplx *slots, sps_cg_slots k, sps_vector p, sps_vector q, sps_vector x, sps_vector r)
{
    return VK(x)->cg_step(VX(x), x->n, slots, k, p->data, q->data, x->data, r->data);
}
sps_status sps_v_bicgstab_p(const sps_cplx *slots, sps_bicgstab_slots k, sps_vector r, sps_vector v, sps_vector p)
{
    return VK(p)->bicgstab_p(VX(p), p->n, slots, k, r->data, v->data, p->data);
}
sps_status sps_v_bicgstab_xr(sps_cplx *slots, sps_bicgstab_slots k, sps_vector rhat, sps_vector ph, sps_vector sh,
                             sps_vector s, sps_vector t, sps_vector x, sps_vector r)
{
    return VK(x)->bicgstab_xr(VX(x), x->n, slots, k, rhat->data, ph->data, sh->data, s->data, t->data, x->data, r->data);
}
