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

/* ---------------------------------------------------------------- entry types */
sps_entry_desc sps_entry_scalar(void) { return (sps_entry_desc){SPS_ENTRY_SCALAR, 1}; }
sps_entry_desc sps_entry_block(int b) { return (sps_entry_desc){SPS_ENTRY_BLOCK, b}; }
sps_entry_desc sps_entry_quaternion(void) { return (sps_entry_desc){SPS_ENTRY_QUATERNION, 4}; }

int sps_entry_valid(sps_entry_desc e)
{
    switch (e.kind) {
    case SPS_ENTRY_SCALAR:
    case SPS_ENTRY_QUATERNION: return 1;
    case SPS_ENTRY_BLOCK: return e.block >= 2 && e.block <= 8;
    }
    return 0;
}

int sps_entry_dim(sps_entry_desc e)
{
    if (!sps_entry_valid(e)) return 0;
    return e.kind == SPS_ENTRY_SCALAR ? 1 : e.kind == SPS_ENTRY_QUATERNION ? 4 : e.block;
}

int sps_entry_values(sps_entry_desc e)
{
    const int d = sps_entry_dim(e);
    return e.kind == SPS_ENTRY_BLOCK ? d * d : d;
}

const char *sps_entry_name(sps_entry_desc e)
{
    static const char *const blocks[] = {"block2x2", "block3x3", "block4x4", "block5x5",
                                         "block6x6", "block7x7", "block8x8"};
    if (!sps_entry_valid(e)) return "?";
    if (e.kind == SPS_ENTRY_SCALAR) return "scalar";
    if (e.kind == SPS_ENTRY_QUATERNION) return "quaternion";
    return blocks[e.block - 2];
}
