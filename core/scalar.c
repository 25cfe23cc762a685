/* Scalar-type facts and host-side scalar conversion. */
#include "core/internal.h"

#include <string.h>
#include <time.h>

static const char *const scalar_names[SPS_NUM_SCALARS] = {"f32", "f64", "c32", "c64"};

const char *sps_scalar_name(sps_scalar s) { return ((unsigned)s < SPS_NUM_SCALARS) ? scalar_names[s] : "?"; }

sps_status sps_scalar_from_name(const char *name, sps_scalar *out)
{
    if (!name || !out) return SPS_ERR_ARG;
    for (int i = 0; i < SPS_NUM_SCALARS; i++)
        if (strcmp(name, scalar_names[i]) == 0) { *out = (sps_scalar)i; return SPS_OK; }
    return SPS_ERR_ARG;
}

size_t sps_scalar_size(sps_scalar s)
{
    static const size_t sz[SPS_NUM_SCALARS] = {4, 8, 8, 16};
    return ((unsigned)s < SPS_NUM_SCALARS) ? sz[s] : 0;
}

int sps_scalar_is_complex(sps_scalar s) { return s == SPS_C32 || s == SPS_C64; }

const char *sps_version(void) { return SPSOLVE_VERSION; }

sps_cplx sps_cplx_load(sps_scalar t, const void *p, sps_cplx dflt)
{
    if (!p) return dflt;
    switch (t) {
    case SPS_F32: return sps_cplx_make(((const float *)p)[0], 0.0);
    case SPS_F64: return sps_cplx_make(((const double *)p)[0], 0.0);
    case SPS_C32: return sps_cplx_make(((const float *)p)[0], ((const float *)p)[1]);
    case SPS_C64: return sps_cplx_make(((const double *)p)[0], ((const double *)p)[1]);
    }
    return dflt;
}

void sps_cplx_store(sps_scalar t, sps_cplx c, void *p)
{
    switch (t) {
    case SPS_F32: ((float *)p)[0] = (float)c.re; break;
    case SPS_F64: ((double *)p)[0] = c.re; break;
    case SPS_C32: ((float *)p)[0] = (float)c.re; ((float *)p)[1] = (float)c.im; break;
    case SPS_C64: ((double *)p)[0] = c.re; ((double *)p)[1] = c.im; break;
    }
}

double sps_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
